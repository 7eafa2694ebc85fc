import type { Host } from "../inventory/host.ts";
import { hasErrors, type Issue } from "../issue.ts";
import type { Provisioning, Software } from "../site/bpa.ts";
import type { Lock } from "./lock.ts";
import type {
  BpaClusterPlan,
  ClusterIdentity,
  NodePlacement,
  RetiredSipCluster,
  SipClusterPlan,
  SitePlan,
} from "./model.ts";

/** A BPA node as the charts take it: its label, its host and the address hosts.ini lists. */
export interface AddressedNode {
  readonly label: string;
  readonly host: Host;
  readonly ip: string;
}

/** A BPA cluster as the charts take it: its Provisioning, every node addressed, maybe Software. */
export interface BpaRender extends ClusterIdentity {
  readonly kind: "bpa";
  readonly provisioning: Provisioning;
  readonly software?: Software;
  /** Masters, then workers, each in CR order (hosts.ini order). */
  readonly masters: readonly AddressedNode[];
  readonly workers: readonly AddressedNode[];
}

/** Any cluster as the charts take it. */
export type ClusterRender = BpaRender | SipClusterPlan;

/** A site plan as the charts take it; made only by {@link renderPlan}. */
export interface RenderPlan {
  /** Sorted by key, BPA before SIP for the same key. */
  readonly clusters: readonly ClusterRender[];
  readonly retired: readonly RetiredSipCluster[];
  readonly lock: Lock;
}

/**
 * The plan as the charts take it, or `undefined` when it must not be rendered: when any rule found an
 * error. A BPA cluster without a Provisioning has no hosts and renders nothing, so it is left out. A
 * node without an address always comes with an `ip-missing` error, so every node of a plan without
 * errors has its address.
 */
export function renderPlan(plan: SitePlan, issues: readonly Issue[]): RenderPlan | undefined {
  if (hasErrors(issues)) return undefined;
  const clusters: ClusterRender[] = [];
  for (const cluster of plan.clusters) {
    if (cluster.kind === "sip") clusters.push(cluster);
    else if (cluster.provisioning) {
      const rendered = bpaRender(cluster, cluster.provisioning);
      if (rendered === undefined) return undefined;
      clusters.push(rendered);
    }
  }
  return { clusters, retired: plan.retired, lock: plan.lock };
}

function bpaRender(cluster: BpaClusterPlan, provisioning: Provisioning): BpaRender | undefined {
  const masters = addressed(cluster.masters);
  const workers = addressed(cluster.workers);
  if (masters === undefined || workers === undefined) return undefined;
  const { key, namespace, name, software } = cluster;
  return { kind: "bpa", key, namespace, name, provisioning, ...(software && { software }), masters, workers };
}

function addressed(placements: readonly NodePlacement[]): AddressedNode[] | undefined {
  const nodes: AddressedNode[] = [];
  for (const { request, host, ip } of placements) {
    if (ip === undefined) return undefined;
    nodes.push({ label: request.label, host, ip });
  }
  return nodes;
}
