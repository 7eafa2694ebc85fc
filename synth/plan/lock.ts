import { compareText } from "../issue.ts";
import { isRecord } from "../inventory/raw.ts";

/** Which planner made an allocation. */
export type LockKind = "bpa" | "sip";

/**
 * One allocation recorded in `rendered/metalsynth.lock.yaml` (SPEC §3.4). Read back on the next run so
 * a new inventory snapshot never reshuffles existing clusters.
 */
export interface LockEntry {
  /** `namespace/name` of the BareMetalHost. */
  readonly host: string;
  /** `namespace/cluster` (BPA) or `namespace/name` (SIPCluster). */
  readonly cluster: string;
  readonly kind: LockKind;
  /** `master`/`worker` for BPA, the SIP role (`ControlPlane`, `Worker`, …) for SIP. */
  readonly role: string;
  /** BPA node label the host serves as. */
  readonly node?: string;
  /** SIP: the host is a standby of its role. */
  readonly standby?: boolean;
  /**
   * SIP: the cluster gave the host up; its labels are being removed. Kept while the inventory still
   * shows them, so a release whose patch was never applied is rendered again.
   */
  readonly released?: boolean;
}

/** The lock file's content. */
export interface Lock {
  readonly entries: readonly LockEntry[];
}

/** An empty lock: the first run of a site. */
export const EMPTY_LOCK: Lock = { entries: [] };

/** Stable order of lock entries, so the lock file is byte-identical for identical plans. */
export function compareLockEntries(a: LockEntry, b: LockEntry): number {
  return (
    compareText(a.host, b.host) ||
    compareText(a.cluster, b.cluster) ||
    compareText(a.kind, b.kind) ||
    compareText(a.role, b.role) ||
    compareText(a.node ?? "", b.node ?? "")
  );
}

/** The file name of the lock inside `rendered/`. */
export const LOCK_FILE = "metalsynth.lock.yaml";

/** The lock file's apiVersion/kind, so a stray YAML file is never mistaken for a lock. */
export const LOCK_API_VERSION = "metalsynth.io/v1alpha1";
export const LOCK_KIND = "Lock";

/**
 * Reads a lock file's content. A damaged lock is a reason to stop, not to re-plan from scratch (that
 * would reshuffle every cluster), so problems come back as a message for the caller to report.
 */
export function parseLock(value: unknown): { lock: Lock } | { problem: string } {
  if (!isRecord(value)) return { problem: "not a map" };
  const record = value;
  if (record.apiVersion !== LOCK_API_VERSION || record.kind !== LOCK_KIND) {
    return { problem: `expected apiVersion ${LOCK_API_VERSION}, kind ${LOCK_KIND}` };
  }
  const hosts = record.hosts ?? [];
  if (!Array.isArray(hosts)) return { problem: "hosts must be a list" };
  const entries: LockEntry[] = [];
  for (const [index, item] of hosts.entries()) {
    const entry = lockEntry(item);
    if (!entry) return { problem: `hosts[${index}] needs host, cluster, kind (bpa|sip) and role` };
    entries.push(entry);
  }
  return { lock: { entries: entries.sort(compareLockEntries) } };
}

function lockEntry(item: unknown): LockEntry | undefined {
  if (!isRecord(item)) return undefined;
  const { host, cluster, kind, role, node, standby, released } = item;
  if (typeof host !== "string" || typeof cluster !== "string" || typeof role !== "string") return undefined;
  if (kind !== "bpa" && kind !== "sip") return undefined;
  return {
    host,
    cluster,
    kind,
    role,
    ...(typeof node === "string" ? { node } : {}),
    ...(standby === true ? { standby: true } : {}),
    ...(released === true ? { released: true } : {}),
  };
}

/** The lock file's content for a plan (written by synth, read back by the next run). */
export function lockDocument(lock: Lock): Record<string, unknown> {
  return {
    apiVersion: LOCK_API_VERSION,
    kind: LOCK_KIND,
    hosts: lock.entries.map((entry) => ({ ...entry })),
  };
}
