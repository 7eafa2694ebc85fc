/**
 * `metalsynth release`: the one way a user says a live cluster's node may leave its host (decision
 * 0052). Planning never moves a node off a host the lock gives it because the snapshot lost the host
 * or the host went off or into error; releasing drops those lock entries, so the next plan places the
 * node again. A SIPCluster's host still in the inventory is released as SIP releases hosts: its
 * labels are removed first (decision 0034).
 */
import { compareText } from "../issue.ts";
import { unavailableFor, unavailableText } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import type { Lock, LockEntry } from "../model/lock.ts";
import { hostSnapshot } from "./lock.ts";

/** What releasing some hosts does to a lock. */
export interface HostRelease {
  /** The lock without the released entries (a SIPCluster's present host: marked released). */
  readonly lock: Lock;
  /** The entries released, in lock order, with why the host could go. */
  readonly released: readonly { readonly entry: LockEntry; readonly why: string }[];
  /** Hosts asked for that could not be released, each with the reason: then nothing is. */
  readonly refused: readonly string[];
}

/**
 * Releases `hosts` (`namespace/name`, or a name only one host of the lock has) from `lock`: only
 * hosts the inventory lost or sets aside, or holds as unavailable; a healthy host is refused, as
 * releasing it would only move its node for nothing (a node moves off a healthy host by its CR).
 */
export function releaseHosts(lock: Lock, inventory: Inventory, hosts: readonly string[]): HostRelease {
  const refused: string[] = [];
  const chosen = new Map<string, string>();
  for (const asked of hosts) {
    const ids = lockedIds(lock, asked);
    if (ids.length !== 1) {
      refused.push(
        ids.length === 0
          ? `${asked}: the lock gives this host to no cluster`
          : `${asked}: several hosts of the lock are named so (${ids.join(", ")}); name one as namespace/name`,
      );
      continue;
    }
    const id = ids[0]!;
    const host = inventory.byId(id);
    const aside = inventory.setAsideById(id);
    if (host === undefined) {
      chosen.set(id, aside === undefined ? "missing from the snapshot" : `set aside: ${aside.reason}`);
      continue;
    }
    const reasons = unavailableFor(host, true);
    if (reasons.length === 0) {
      refused.push(
        `${id}: the host is in the snapshot and available; a node leaves a healthy host when its CR says so`,
      );
      continue;
    }
    chosen.set(id, `not available (${unavailableText(reasons)})`);
  }
  if (refused.length > 0) return { lock, released: [], refused };
  const released: { entry: LockEntry; why: string }[] = [];
  const entries: LockEntry[] = [];
  for (const entry of lock.entries) {
    const why = entry.released === true ? undefined : chosen.get(entry.host);
    if (why === undefined) {
      entries.push(entry);
      continue;
    }
    released.push({ entry, why });
    const host = inventory.byId(entry.host);
    // Still there and labelled: its SIP labels must go, as for any host a SIPCluster gives up.
    if (entry.kind === "sip" && host !== undefined) {
      const { cluster, role } = entry;
      entries.push({
        host: host.id,
        cluster,
        kind: "sip",
        role,
        released: true,
        snapshot: hostSnapshot(host),
      });
    }
  }
  return { lock: { entries }, released, refused };
}

/** The distinct hosts of `lock`'s live entries that `asked` names, by id or by name alone. */
function lockedIds(lock: Lock, asked: string): string[] {
  const ids = new Set<string>();
  for (const entry of lock.entries) {
    if (entry.released === true) continue;
    if (entry.host === asked || entry.host.slice(entry.host.indexOf("/") + 1) === asked) ids.add(entry.host);
  }
  return [...ids].sort(compareText);
}
