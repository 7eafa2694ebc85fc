/**
 * Rules about hosts as a living site changes them (docs/contract.md §1.3, decision 0052): a host the
 * lock gives to a cluster that the snapshot no longer holds (`host-vanished`), and a host a cluster
 * asks for or keeps that is consumed by someone else, going away, off or broken (`host-unavailable`).
 * Planning decides what stays where; these say what is wrong, and what the user can do about it.
 */
import type { FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import { unavailableText, type Host, type Unavailable } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import type { LockEntry } from "../model/lock.ts";
import type { Reporter } from "../model/resource.ts";

/**
 * `host-vanished`: the lock gives `entry.host` to the cluster, and the snapshot no longer has it (or
 * has set it aside). The node stays on it, so nothing of a running cluster moves without a word,
 * until the host comes back or the user releases it.
 */
export function hostVanished(
  inventory: Pick<Inventory, "setAsideById">,
  entry: LockEntry,
  path: FieldPath,
  report: Reporter,
  /**
   * The host the entry's mac-address names now: the CR's own word moves the node there, so the finding
   * is a warning that says so rather than an error that holds the node.
   */
  movesTo?: Host,
): Issue {
  const aside = inventory.setAsideById(entry.host);
  const where = aside?.source ? ` (${aside.source.file}:${aside.source.line})` : "";
  const state =
    aside === undefined
      ? "is missing from the inventory snapshot"
      : `is set aside in the inventory snapshot${where}: ${aside.reason}`;
  const node = entry.kind === "bpa" ? `${entry.role} ${entry.node}` : `role ${entry.role}`;
  const lost = `host ${entry.host}, which the lock gives to ${entry.cluster} as ${node}, ${state}`;
  if (movesTo !== undefined)
    return {
      host: entry.host,
      ...report(
        "host-vanished",
        path,
        `${lost}; the node moves to ${movesTo.id}, which its mac-address names now`,
      ),
      severity: "warning",
    };
  return {
    host: entry.host,
    ...report(
      "host-vanished",
      path,
      `${lost}; the node stays on it: restore the host, or run \`metalsynth release ${entry.host}\` to place it again`,
    ),
  };
}

/**
 * `host-unavailable` for a host a cluster asks for or keeps. An error for a host the CR names that the
 * cluster does not hold yet: it would get a node it can't run. A warning for a host the cluster holds
 * (the lock, its SIP labels): the node stays, and the user hears why it may be in trouble.
 */
export function hostUnavailable(
  host: Host,
  reasons: readonly Unavailable[],
  held: boolean,
  subject: string,
  path: FieldPath,
  report: Reporter,
): Issue[] {
  if (reasons.length === 0) return [];
  const found = report(
    "host-unavailable",
    path,
    held
      ? `host ${host.id}, which ${subject} keeps, is not available (${unavailableText(reasons)}); the node stays on it: bring the host back, or release it with \`metalsynth release ${host.id}\` once it is gone`
      : `host ${host.id}, named for ${subject}, is not available (${unavailableText(reasons)}): a new node needs a host that is free, powered on and healthy`,
  );
  return [{ ...found, host: host.id, ...(held && { severity: "warning" }) }];
}
