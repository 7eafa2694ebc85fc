import { parseDnsLabel, type DnsLabel, type IpAddress } from "../checked.ts";
import type { Host } from "../inventory/host.ts";
import { hasErrors, type Issue } from "../issue.ts";
import type { Provisioning, Software } from "../model/bpa.ts";
import type { SipCluster } from "../model/sip.ts";
import { allocationObjects, clusterSpecs, type ClusterAllocation, type ClusterSpecs } from "./allocation.ts";
import type { Lock } from "../model/lock.ts";
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
  readonly label: DnsLabel;
  readonly host: Host;
  readonly ip: IpAddress;
}

/** A BPA cluster as the charts take it: its Provisioning, every node addressed, maybe Software. */
export interface BpaRender extends ClusterIdentity {
  readonly kind: "bpa";
  /** What the KUD installer takes of the Provisioning. */
  readonly provisioning: Pick<Provisioning, "plugins" | "podSubnet">;
  /** The packages of the cluster's Software CR, if it has one. */
  readonly software?: Pick<Software, "masterPackages" | "workerPackages">;
  /** Masters, then workers, each in CR order (hosts.ini order). */
  readonly masters: readonly AddressedNode[];
  readonly workers: readonly AddressedNode[];
}

/** A SIPCluster as the charts take it: its services, its members and the hosts it released. */
export interface SipRender extends ClusterIdentity {
  readonly kind: "sip";
  readonly sip: Pick<SipCluster, "services">;
  readonly members: SipClusterPlan["members"];
  readonly released: SipClusterPlan["released"];
}

/** Any cluster as the charts take it. */
export type ClusterRender = BpaRender | SipRender;

/**
 * A site plan as the charts take it; made only by {@link renderPlan}. Plain data, without the CRs'
 * source documents (which hold functions) or explain's decisions, so it can be sent to a worker
 * thread (decision 0019).
 */
export interface RenderPlan {
  /** Sorted by key, BPA before SIP for the same key. */
  readonly clusters: readonly ClusterRender[];
  readonly retired: readonly RetiredSipCluster[];
  readonly lock: Lock;
  /** The lock's entries per cluster, as each cluster's directory carries them (decision 0039). */
  readonly allocations: readonly ClusterAllocation[];
  /** Each rendered cluster's own CRs, as its directory carries them (decision 0039). */
  readonly specs: readonly ClusterSpecs[];
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
    if (cluster.kind === "sip") clusters.push(sipRender(cluster));
    else if (cluster.provisioning) {
      const rendered = bpaRender(cluster, cluster.provisioning);
      if (rendered === undefined) return undefined;
      clusters.push(rendered);
    }
  }
  const rendered = new Set(clusters.map((cluster) => cluster.key));
  return {
    clusters,
    retired: plan.retired,
    lock: plan.lock,
    allocations: allocationObjects(plan.lock),
    specs: plan.clusters.filter((cluster) => rendered.has(cluster.key)).map(clusterSpecs),
  };
}

function bpaRender(cluster: BpaClusterPlan, provisioning: Provisioning): BpaRender | undefined {
  const masters = addressed(cluster.masters);
  const workers = addressed(cluster.workers);
  if (masters === undefined || workers === undefined) return undefined;
  const { key, namespace, name, software } = cluster;
  return {
    kind: "bpa",
    key,
    namespace,
    name,
    provisioning: { plugins: provisioning.plugins, podSubnet: provisioning.podSubnet },
    ...(software && {
      software: { masterPackages: software.masterPackages, workerPackages: software.workerPackages },
    }),
    masters,
    workers,
  };
}

function sipRender(cluster: SipClusterPlan): SipRender {
  const { key, namespace, name, sip, members, released } = cluster;
  return { kind: "sip", key, namespace, name, sip: { services: sip.services }, members, released };
}

/**
 * Every node with its address and checked label, or `undefined`: a node without an address comes
 * with an `ip-missing` error, a label that is not a DNS-1123 label with a `node-label` one.
 */
function addressed(placements: readonly NodePlacement[]): AddressedNode[] | undefined {
  const nodes: AddressedNode[] = [];
  for (const { request, host, ip } of placements) {
    const label = parseDnsLabel(request.label);
    if (ip === undefined || label === undefined) return undefined;
    nodes.push({ label, host, ip });
  }
  return nodes;
}
