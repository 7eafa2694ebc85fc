import type { ClusterKey } from "../cluster-key.ts";
import { hash8 } from "../content-hash.ts";
import { compareText } from "../issue.ts";
import { orderedNics } from "../inventory/canonical.ts";
import type { Host } from "../inventory/host.ts";
import type { Role } from "../site/bpa.ts";

/** Which planner made an allocation. */
export type LockKind = "bpa" | "sip";

/** What every lock entry records (docs/contract.md §3.4). */
interface LockEntryBase {
  /** `namespace/name` of the BareMetalHost, each part a valid Kubernetes name. */
  readonly host: string;
  /** `namespace/cluster` (BPA) or `namespace/name` (SIPCluster). */
  readonly cluster: ClusterKey;
}

/** A host a BPA Provisioning uses, as the node `node` in role `role`. */
export interface BpaLockEntry extends LockEntryBase {
  readonly kind: "bpa";
  readonly role: Role;
  /** The node label the host serves as (a DNS-1123 label). */
  readonly node: string;
  readonly standby?: never;
  readonly released?: never;
  readonly snapshot?: never;
}

/** A host a SIPCluster uses in one of its roles, or is giving up. */
export interface SipLockEntry extends LockEntryBase {
  readonly kind: "sip";
  /**
   * The SIP role (`ControlPlane`, `Worker`, or another `spec.nodes` key). A SIPCluster's roles are
   * its own to name, so the parser checks only that it could be the `node-type` label it becomes.
   */
  readonly role: string;
  readonly node?: never;
  /** The host is a standby of its role. */
  readonly standby?: boolean;
  /**
   * The cluster gave the host up; its labels are being removed. Kept while the inventory still
   * shows them, or shows the host exactly as {@link snapshot} records it (decision 0034).
   */
  readonly released?: boolean;
  /**
   * Released hosts: {@link hostSnapshot} of the host as the inventory showed it when the release was
   * last rendered. A release ends only when a snapshot shows the host changed and without the labels.
   */
  readonly snapshot?: string;
}

/**
 * One allocation recorded in `rendered/metalsynth.lock.yaml` (docs/contract.md §3.4). Read back on the next run so
 * a new inventory snapshot never reshuffles existing clusters. Made by planning, or by
 * `parseLock` (`synth/rules/lock.ts`) from the file.
 */
export type LockEntry = BpaLockEntry | SipLockEntry;

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
 * What a released entry records of its host (`snapshot`): a hash of the facts the inventory gives
 * about it, labels included, but not where it was read. An unchanged snapshot gives the same hash, so
 * running synth again with the same inputs keeps the release (decision 0034). The facts are named
 * one by one, so a field `Host` gains later does not end every pending release on upgrade.
 */
export function hostSnapshot(host: Host): string {
  return hash8([
    host.id,
    host.labels,
    host.sipOwner,
    host.bootMac,
    // In the snapshot's order: an inspection that lists the same NICs in another order is the same host.
    orderedNics(host),
    host.cpus,
    host.memoryBytes,
    host.provisioningState,
    host.networks,
    host.networkData,
    host.bmc,
  ]);
}

/** The lock file's content for a plan (written by synth, read back by the next run). */
export function lockDocument(lock: Lock): Record<string, unknown> {
  return {
    apiVersion: LOCK_API_VERSION,
    kind: LOCK_KIND,
    hosts: lock.entries.map((entry) => ({ ...entry })),
  };
}
