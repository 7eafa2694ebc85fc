/**
 * Git's lock in the cluster (issue #22, decision 0039): the entries of `rendered/metalsynth.lock.yaml`
 * rendered as one `Allocation` object per cluster, in that cluster's directory, so the GitOps agents
 * apply them with the rest and the webhook `--from-cluster` reviews with the lock `validate` uses. The
 * lock file stays the truth in Git; these objects are a projection of it that reads back to it
 * exactly (`lockFromAllocations` in `synth/rules/allocation.ts` of {@link allocationObjects} is the lock).
 */
import { checkedClusterKeyParts, type ClusterKey } from "../cluster-key.ts";
import type { DnsLabel } from "../checked.ts";
import { compareText } from "../issue.ts";
import type { AnyResource } from "../model/resource.ts";
import { ALLOCATION_API_VERSION, ALLOCATION_KIND } from "../schema/allocation.ts";
import type { Lock, LockEntry, LockKind } from "../model/lock.ts";
import type { BpaClusterPlan, SipClusterPlan } from "./model.ts";

/** The file an Allocation is rendered into, in its cluster's directory. */
export const ALLOCATION_FILE = "allocation.yaml";
/** Its Argo CD sync wave: before the cluster's CRs (-2), which the webhook reviews against it. */
export const ALLOCATION_WAVE = "-3";

/** One of a cluster's hosts as its Allocation lists it: a lock entry without `cluster` and `kind`. */
export type AllocationHost = DistributiveOmit<LockEntry, "cluster" | "kind">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An Allocation object as synth renders it and the API server stores it. */
export interface AllocationObject {
  readonly apiVersion: string;
  readonly kind: typeof ALLOCATION_KIND;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly spec: { readonly kind: LockKind; readonly hosts: readonly AllocationHost[] };
}

/** A cluster's Allocation, by the cluster's key. */
export interface ClusterAllocation {
  readonly key: ClusterKey;
  readonly object: AllocationObject;
}

/**
 * The Allocations of a lock, one per cluster that has entries (a retired SIPCluster's released hosts
 * included), by cluster key in text order; each lists the cluster's entries in lock order. A cluster
 * key names one directory, and a BPA cluster and a SIPCluster of one key are refused (`name-clash`:
 * they would share a directory and its wiring), so every key has one kind.
 */
export function allocationObjects(lock: Lock): ClusterAllocation[] {
  const byCluster = new Map<ClusterKey, LockEntry[]>();
  for (const entry of lock.entries) {
    const entries = byCluster.get(entry.cluster);
    if (entries) entries.push(entry);
    else byCluster.set(entry.cluster, [entry]);
  }
  return [...byCluster.keys()].sort(compareText).map((key) => {
    const entries = byCluster.get(key)!;
    const parts = checkedClusterKeyParts(key);
    if (parts === undefined) throw new Error(`lock entry of ${key}, which is no cluster key`);
    const object: AllocationObject = {
      apiVersion: ALLOCATION_API_VERSION,
      kind: ALLOCATION_KIND,
      metadata: {
        name: parts.name,
        namespace: parts.namespace,
        labels: metalsynthLabels(parts.name),
        annotations: { [SYNC_WAVE]: ALLOCATION_WAVE },
      },
      spec: { kind: entries[0]!.kind, hosts: entries.map(allocationHost) },
    };
    return { key, object };
  });
}

/** A lock entry as an Allocation lists it. */
function allocationHost(entry: LockEntry): AllocationHost {
  if (entry.kind === "bpa") return { host: entry.host, role: entry.role, node: entry.node };
  return {
    host: entry.host,
    role: entry.role,
    ...(entry.standby === undefined ? {} : { standby: entry.standby }),
    ...(entry.released === undefined ? {} : { released: entry.released }),
    ...(entry.snapshot === undefined ? {} : { snapshot: entry.snapshot }),
  };
}

/** The file a cluster's own CRs are rendered into, in its directory. */
export const SPECS_FILE = "specs.yaml";
/** Their Argo CD sync wave: after the Allocation, before everything rendered from them (-1 and up). */
export const SPECS_WAVE = "-2";

/** Annotations a client sets, not the user: kept out of the copy so Git's CR is the user's. */
const CLIENT_ANNOTATIONS = new Set(["kubectl.kubernetes.io/last-applied-configuration"]);

/**
 * A cluster CR as its directory carries it to the cluster (docs/contract.md §4 "What Git knows reaches the
 * cluster"): the schema-validated object of `specs/` re-serialised, so only what the schema admitted
 * is written. Kept: `apiVersion`, `kind`, name, namespace (the default namespace made explicit),
 * labels and annotations the user set (the checked ones, `metadata-invalid`: the API server would
 * refuse the object over any other, and the GitOps agent the directory), `spec`. Left out: `status` and whatever the server sets
 * (uid, resourceVersion, managedFields, ...), which an object read back from a cluster carries. Added:
 * the standard metalsynth labels (a `rendered/` file synth may replace holds only labelled objects)
 * and the sync wave.
 */
export function clusterSpecDocument(
  resource: AnyResource,
  cluster: DnsLabel,
): Readonly<Record<string, unknown>> {
  const { apiVersion, kind, spec } = resource.object;
  const annotations = Object.entries(resource.annotations).filter(([key]) => !CLIENT_ANNOTATIONS.has(key));
  return {
    apiVersion,
    kind,
    metadata: {
      name: resource.name,
      namespace: resource.namespace,
      labels: { ...resource.labels, ...metalsynthLabels(cluster) },
      annotations: { ...Object.fromEntries(annotations), [SYNC_WAVE]: SPECS_WAVE },
    },
    spec,
  };
}

/** A cluster's own CRs, by the cluster's key, as its directory carries them. */
export interface ClusterSpecs {
  readonly key: ClusterKey;
  readonly documents: readonly Readonly<Record<string, unknown>>[];
}

/** The CRs of a cluster's plan: a BPA cluster's Provisioning, Cluster glue and Software; a SIPCluster. */
export function clusterSpecs(
  cluster:
    | Pick<BpaClusterPlan, "kind" | "key" | "name" | "provisioning" | "glue" | "software">
    | Pick<SipClusterPlan, "kind" | "key" | "name" | "sip">,
): ClusterSpecs {
  const resources: AnyResource[] =
    cluster.kind === "sip"
      ? [cluster.sip.resource]
      : [cluster.provisioning, cluster.glue, cluster.software].flatMap((cr) => (cr ? [cr.resource] : []));
  return {
    key: cluster.key,
    documents: resources.map((resource) => clusterSpecDocument(resource, cluster.name)),
  };
}

const SYNC_WAVE = "argocd.argoproj.io/sync-wave";

/** The labels every object metalsynth renders for `cluster` carries (`charts/metadata.ts`). */
function metalsynthLabels(cluster: DnsLabel): Record<string, string> {
  return { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": cluster };
}
