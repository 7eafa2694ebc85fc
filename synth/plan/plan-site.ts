import { parseClusterKey, sipKey, type ClusterKey } from "../cluster-key.ts";
import { pushTo } from "../group.ts";
import { compareText, type Issue } from "../issue.ts";
import { sipOwnerKey } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import type { SipCluster } from "../site/sip.ts";
import { claimMacHosts, groupBpa, placeBpaCluster, unprovisionedPlan } from "./bpa-placement.ts";
import { ClaimLedger } from "./claim-ledger.ts";
import type { Placed, PlanningContext } from "./context.ts";
import { compareLockEntries, type Lock, type LockEntry } from "./lock.ts";
import type { ClusterPlan, SiteModel, SitePlan } from "./model.ts";
import { placeSipCluster, retireSipCluster } from "./sip-placement.ts";

/** What planning needs: the site's CRs, the inventory and the previous lock. */
export interface PlanInput {
  readonly model: SiteModel;
  readonly inventory: Inventory;
  readonly lock: Lock;
}

/**
 * Decides which host serves which cluster (SPEC §3), deterministically: fixed claims first (lock,
 * SIP labels, MAC entries), then SIP roles and BPA resource-only entries in cluster-key order. Every
 * problem is an issue; the plan is returned even with errors so `explain` can still show it.
 */
export function planSite({ model, inventory, lock }: PlanInput): { plan: SitePlan; issues: Issue[] } {
  const issues: Issue[] = [];
  const bestFit = inventory.bestFit();
  const bpaByKey = groupBpa(model);
  const sipKeys = new Set(model.sips.map((sip) => sipKey(sip.resource)));
  const liveClusters = new Set([...bpaByKey.keys(), ...sipKeys]);

  // 1. The lock: allocations of clusters that still exist stay where they are. Hosts a SIPCluster
  // is releasing (given up, or the cluster left the site) stay with it while their labels are
  // removed: another cluster taking one now would patch the same BareMetalHost from two directories.
  const heldByLock = new Map<ClusterKey, LockEntry[]>();
  // 2. SIP labels in the inventory: what the live cluster says, for clusters the lock doesn't know
  // yet (the lock is authoritative for the clusters it records).
  const ledger = new ClaimLedger((host) => {
    const owner = sipOwnerKey(host);
    if (owner === undefined || heldByLock.has(owner)) return undefined;
    return {
      cluster: owner,
      why: `labelled for SIPCluster ${owner} (sip.airshipit.org labels in the inventory)`,
    };
  });
  for (const entry of lock.entries) {
    const host = inventory.byId(entry.host);
    // A cluster that is not `namespace/name` is no cluster metalsynth ever recorded.
    const cluster = parseClusterKey(entry.cluster);
    if (!host || !cluster) continue;
    if (entry.kind === "sip" && (entry.released === true || !liveClusters.has(cluster))) {
      // An earlier release is repeated only while the inventory still shows the labels.
      if (entry.released === true && sipOwnerKey(host) !== cluster) continue;
      ledger.release(
        host,
        cluster,
        entry.role,
        `being released by SIPCluster ${cluster} (its labels are removed first)`,
      );
      continue;
    }
    if (!liveClusters.has(cluster)) continue;
    if (!ledger.isRecorded(host))
      ledger.claim(host, cluster, `recorded for ${cluster} in rendered/metalsynth.lock.yaml`);
    pushTo(heldByLock, cluster, entry);
  }

  // 3. MAC entries: the host is named, so the claim is fixed; conflicts are reported here.
  const macs = claimMacHosts(bpaByKey, inventory, ledger);
  const { contested } = macs;
  issues.push(...macs.issues);

  // 4. SIPClusters, then BPA clusters, each pass in key order, each against the claims so far. SIP
  // roles ask for hosts by label, BPA resource-only entries for any host big enough, so the narrower
  // requests go first: a BPA cluster must not take the host a SIPCluster's selector was written for
  // just because its key sorts earlier (decision 0004).
  const plans: ClusterPlan[] = [];
  const nextLock: LockEntry[] = [];
  const keys = [...liveClusters].sort(compareText);
  const sipsByKey = new Map<ClusterKey, SipCluster[]>();
  for (const sip of model.sips) pushTo(sipsByKey, sipKey(sip.resource), sip);
  // Clusters not planned yet: only they can still take a host another cluster has claimed.
  const unplanned = new Set(keys);
  const stillPlanning = (cluster: ClusterKey) => unplanned.has(cluster);
  const contextFor = (key: ClusterKey): PlanningContext => ({
    inventory,
    bestFit,
    ledger,
    lockEntries: heldByLock.get(key) ?? [],
    stillPlanning,
  });
  const record = (placed: Placed<ClusterPlan>) => {
    plans.push(placed.plan);
    nextLock.push(...placed.lock);
    issues.push(...placed.issues);
  };
  for (const key of keys) {
    for (const sip of sipsByKey.get(key) ?? []) {
      record(placeSipCluster(sip, { ...contextFor(key), releasing: ledger.releasing(key) }));
    }
    if (!bpaByKey.has(key)) unplanned.delete(key);
  }
  for (const key of keys) {
    const group = bpaByKey.get(key);
    if (group?.provisioning) {
      record(
        placeBpaCluster(
          key,
          { ...group, provisioning: group.provisioning },
          { ...contextFor(key), contested },
        ),
      );
    } else if (group) {
      plans.push(unprovisionedPlan(key, group));
    }
    unplanned.delete(key);
  }
  // Output order: by key, BPA before SIP for the same key (the SitePlan contract).
  plans.sort((a, b) => compareText(a.key, b.key) || compareText(a.kind, b.kind));
  const retired = ledger
    .releasingClusters()
    .filter((key) => !liveClusters.has(key))
    .sort(compareText)
    .map((key) => retireSipCluster(key, ledger.releasing(key)));
  for (const cluster of retired) nextLock.push(...cluster.lock);
  return {
    plan: {
      clusters: plans,
      retired: retired.map((cluster) => cluster.plan),
      lock: { entries: nextLock.sort(compareLockEntries) },
    },
    issues,
  };
}
