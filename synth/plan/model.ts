import type { DnsLabel, IpAddress } from "../checked.ts";
import type { ClusterKey } from "../cluster-key.ts";
import type { Host } from "../inventory/host.ts";
import type { FieldPath } from "../field-path.ts";
import type { ClusterGlue, NodeRequest, Provisioning, Software } from "../model/bpa.ts";
import type { SipCluster } from "../model/sip.ts";
import type { Rejection } from "../rules/filters/plugin.ts";
import type { Lock } from "../model/lock.ts";

/** A host that was considered for a decision and not taken, and why (rendered as `no-fit` does). */
export interface RejectedHost {
  readonly host: string;
  readonly rejection: Rejection;
}

/** A BPA node and the host serving it. */
export interface NodePlacement {
  readonly request: NodeRequest;
  readonly host: Host;
  /** The address hosts.ini and the cluster ConfigMap use; `undefined` only alongside an `ip-missing` error. */
  readonly ip?: IpAddress;
  /** Why this host: `mac-address 00:…`, `kept from the lock`, `best fit: 32 CPUs, 128Gi`. */
  readonly reason: string;
}

/**
 * One decision of the planner, kept for `metalsynth explain`. Rejections are computed on demand:
 * listing every host for every decision would make synth of a large site quadratic. They close over
 * values fixed when the decision was made (the claim ledger's view of that moment, the hosts
 * chosen), never over planning state that changes later.
 */
export interface Decision {
  /** `master master-1`, `worker worker-2`, `ControlPlane`. */
  readonly subject: string;
  readonly path: FieldPath;
  readonly chosen: readonly { readonly host: string; readonly reason: string }[];
  readonly rejected: () => readonly RejectedHost[];
  /**
   * Why nothing was chosen when the entry itself is at fault, as `<rule>: <message>` (a malformed
   * or unknown MAC, a host another cluster has); a `no-fit` is explained by the rejections instead.
   */
  readonly problem?: string;
}

/** Which cluster a plan is for: its key and the namespace and name the key is made of. */
export interface ClusterIdentity {
  readonly key: ClusterKey;
  readonly namespace: DnsLabel;
  /** The `cluster` label (BPA) or the SIPCluster's name; derived object names are made of these two. */
  readonly name: DnsLabel;
}

/** The plan of a BPA cluster (Provisioning + optional Software / Cluster glue). */
export interface BpaClusterPlan extends ClusterIdentity {
  readonly kind: "bpa";
  readonly provisioning?: Provisioning;
  readonly software?: Software;
  readonly glue?: ClusterGlue;
  /** Masters, then workers, each in CR order, each label once (hosts.ini order). */
  readonly masters: readonly NodePlacement[];
  readonly workers: readonly NodePlacement[];
  readonly decisions: readonly Decision[];
}

/** A host serving a SIP role. */
export interface SipMember {
  readonly host: Host;
  readonly role: string;
  readonly standby: boolean;
  readonly reason: string;
}

/** The plan of a SIPCluster. */
export interface SipClusterPlan extends ClusterIdentity {
  readonly kind: "sip";
  readonly sip: SipCluster;
  /** Members in role order (ControlPlane, Worker, others), then active before standby, then by id. */
  readonly members: readonly SipMember[];
  /** Hosts that served this cluster before and no longer do: their SIP labels are removed once. */
  readonly released: readonly Host[];
  readonly decisions: readonly Decision[];
}

/**
 * A SIPCluster that left the site while the lock still records hosts for it. Its hosts keep the SIP
 * labels until something removes them, and a labelled host is claimed by its label on the next run,
 * so it would be stranded: for one generation its directory holds label-removing patches only.
 */
export interface RetiredSipCluster extends ClusterIdentity {
  /** Hosts the lock gave it, sorted by id; a host another SIPCluster now has is left to that one. */
  readonly released: readonly Host[];
}

/** Any cluster's plan. */
export type ClusterPlan = BpaClusterPlan | SipClusterPlan;

/** The whole site's plan: what synth renders and what the lock records. */
export interface SitePlan {
  /** Sorted by key, BPA before SIP for the same key. */
  readonly clusters: readonly ClusterPlan[];
  /** SIPClusters gone from the site whose hosts still need their labels removed, sorted by key. */
  readonly retired: readonly RetiredSipCluster[];
  readonly lock: Lock;
}
