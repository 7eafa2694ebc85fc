/**
 * Git's lock in the cluster (issue #22, decision 0039): the entries of `rendered/metalsynth.lock.yaml`
 * rendered as one `Allocation` object per cluster, in that cluster's directory, so the GitOps agents
 * apply them with the rest and the webhook `--from-cluster` reviews with the lock `validate` uses. The
 * lock file stays the truth in Git; these objects are a projection of it that reads back to it
 * exactly (`lockFromAllocations` in `synth/rules/allocation.ts` of {@link allocationObjects} is the lock).
 */
import { checkedClusterKeyParts, type ClusterKey } from "../cluster-key.ts";
import { compareText } from "../issue.ts";
import { ALLOCATION_DEFINITION } from "../schema/allocation.ts";
import { apiVersionOf } from "../schema/kinds.ts";
import type { Lock, LockEntry, LockKind } from "./lock.ts";

/** The Allocation's `apiVersion` and `kind`. */
export const ALLOCATION_API_VERSION = apiVersionOf(ALLOCATION_DEFINITION);
export const ALLOCATION_KIND = ALLOCATION_DEFINITION.kind;
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

/**
 * The Allocations of a lock, one per cluster that has entries (a retired SIPCluster's released hosts
 * included), by cluster key in text order; each lists the cluster's entries in lock order. A cluster
 * key names one directory, and a BPA cluster and a SIPCluster of one key are refused (`name-clash`:
 * they would share a directory and its wiring), so every key has one kind.
 */
export function allocationObjects(lock: Lock): { key: ClusterKey; object: AllocationObject }[] {
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
        labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": parts.name },
        annotations: { "argocd.argoproj.io/sync-wave": ALLOCATION_WAVE },
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
