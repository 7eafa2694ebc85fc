import type { ClusterKey } from "../cluster-key.ts";
import type { Role } from "./bpa.ts";

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
   * Released hosts: `hostSnapshot` (`synth/plan/lock.ts`) of the host as the inventory showed it
   * when the release was last rendered. A release ends only when a snapshot shows the host changed
   * and without the labels.
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
