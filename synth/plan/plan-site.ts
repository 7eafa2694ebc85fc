import { sipKey, type ClusterKey } from "../cluster-key.ts";
import { pushTo } from "../group.ts";
import type { Host } from "../inventory/host.ts";
import { compareText, type Issue } from "../issue.ts";
import type { BestFit, Inventory } from "../inventory/inventory.ts";
import type { SipCluster } from "../model/sip.ts";
import { groupBpa, isProvisioned, unprovisionedPlan, type BpaGroup } from "./bpa-placement.ts";
import { fixClaims, type FixedClaims } from "./fixed-claims.ts";
import { compareLockEntries } from "../rules/lock.ts";
import type { Lock, LockEntry } from "../model/lock.ts";
import type { PlanCache } from "../model/plan-cache.ts";
import type { Candidates } from "./context.ts";
import { RunClaims } from "./engine/claims-before.ts";
import { planCache } from "./engine/plan-cache.ts";
import { OpenMatches, MergedCandidates, type RankedHosts } from "./engine/merged-candidates.ts";
import type { ClusterPlan, SitePlan } from "./model.ts";
import type { SiteModel } from "../model/site.ts";
import { retireSipCluster } from "./sip-placement.ts";
import {
  compareTurns,
  placeTurn,
  turnClaim,
  type TurnClaim,
  type TurnOutcome,
  type TurnSetting,
  type TurnWork,
} from "./turns.ts";

/** What planning needs: the site's CRs, the inventory and the previous lock. */
export interface PlanInput {
  readonly model: SiteModel;
  readonly inventory: Inventory;
  readonly lock: Lock;
}

/** A site's clusters as planning sees them: joined BPA groups, SIPClusters, and which keys are live. */
export interface PlanClusters {
  readonly bpaByKey: ReadonlyMap<ClusterKey, BpaGroup>;
  readonly sipByKey: ReadonlyMap<ClusterKey, SipCluster>;
}

/**
 * A whole planning run, with how each turn came to its outcome: what `replan.ts` needs to
 * plan a change again without re-placing the turns it cannot affect.
 */
export interface PlanTrace {
  readonly plan: SitePlan;
  readonly issues: readonly Issue[];
  readonly clusters: PlanClusters;
  readonly fixed: FixedClaims;
  /** Every turn's outcome, in planning order. */
  readonly turns: readonly TurnOutcome[];
  /** Host id → the claim a turn made on it. */
  readonly turnClaims: ReadonlyMap<string, TurnClaim>;
  /** What the rules derived for this plan, kept for the plans made from it (`PlanningContext.cache`). */
  readonly cache: PlanCache;
}

/**
 * Decides which host serves which cluster (docs/contract.md §3), deterministically: fixed claims first (lock,
 * SIP labels, MAC entries), then SIP roles and BPA resource-only entries in cluster-key order. Every
 * problem is an issue; the plan is returned even with errors so `explain` can still show it.
 */
export function planSite(input: PlanInput): { plan: SitePlan; issues: Issue[] } {
  const { plan, issues } = tracePlan(input);
  return { plan, issues: [...issues] };
}

/** {@link planSite}, keeping each turn's outcome and reads. */
export function tracePlan({ model, inventory, lock }: PlanInput): PlanTrace {
  const clusters = planClusters(model);
  const isLive = (key: ClusterKey) => clusters.bpaByKey.has(key) || clusters.sipByKey.has(key);
  const cache = planCache();
  const fixed = fixClaims({ lockEntries: lock.entries, groups: clusters.bpaByKey, inventory, cache, isLive });
  const work = turnsOf(clusters);
  // Clusters with a turn still to come: only they can take a host they hold. Hosts of clusters done
  // planning leave the shared best-fit candidates, so no later turn walks past them again.
  const turnsLeft = new Map<ClusterKey, number>();
  for (const turn of work) turnsLeft.set(turn.key, (turnsLeft.get(turn.key) ?? 0) + 1);
  const turnClaims = new Map<string, TurnClaim>();
  const fixedHosts = fixed.claimedHosts().flatMap((host) => {
    const cluster = fixed.claimOf(host)?.cluster;
    return cluster === undefined ? [] : [{ host, cluster }];
  });
  const candidates = ownFixedCandidates(inventory, fixedHosts);
  const fixedIds = new Set(fixedHosts.map(({ host }) => host.id));
  const open = new OpenMatches(fixedHosts, (host) => turnClaims.has(host.id) || fixedIds.has(host.id));
  const claims = new RunClaims(fixed, turnClaims);
  const setting: TurnSetting = {
    inventory,
    claims,
    cache,
    bestFit: candidates.shared,
    stillPlanning: (cluster) => (turnsLeft.get(cluster) ?? 0) > 0,
  };
  const turns: TurnOutcome[] = [];
  for (const turn of work) {
    const bestFit = candidates.forTurn(turn.key, (host) => claims.earlier(host, turn) !== undefined);
    const outcome = placeTurn(turn, { ...setting, bestFit, openMatches: open.forTurn(turn.key) });
    turns.push(outcome);
    for (const [host, claim] of outcome.claims) turnClaims.set(host, turnClaim(outcome.turn, claim));
    claims.changed();
    turnsLeft.set(turn.key, (turnsLeft.get(turn.key) ?? 1) - 1);
  }
  return {
    ...assemble(clusters, fixed, turns),
    clusters,
    fixed,
    turns,
    turnClaims,
    cache,
  };
}

/**
 * The best-fit candidates of a whole site's run. A host with a fixed claim is a candidate for its
 * own cluster only (the claim filter turns every other cluster away), so it leaves the shared walk
 * and joins its cluster's turns: otherwise every resource-only turn walked past the MAC-named hosts
 * of every cluster planned after it, and a site of 10,000 clusters spent most of its planning there.
 */
function ownFixedCandidates(
  inventory: Inventory,
  fixedHosts: readonly { readonly host: Host; readonly cluster: ClusterKey }[],
): {
  readonly shared: BestFit;
  forTurn(key: ClusterKey, claimedEarlier: (host: Host) => boolean): Candidates;
} {
  const shared = inventory.bestFit();
  const own = new Map<ClusterKey, Host[]>();
  for (const { host, cluster } of fixedHosts) {
    if (inventory.bestFitRank(host) === undefined) continue;
    shared.take(host);
    pushTo(own, cluster, host);
  }
  const rank = (host: Host) => inventory.bestFitRank(host) ?? Number.MAX_SAFE_INTEGER;
  const ranked = new Map<ClusterKey, RankedHosts>();
  for (const [key, hosts] of own) {
    hosts.sort((a, b) => rank(a) - rank(b));
    ranked.set(key, { hosts, ranks: hosts.map(rank) });
  }
  return {
    shared,
    forTurn: (key, claimedEarlier) => {
      const hosts = ranked.get(key);
      return hosts === undefined
        ? shared
        : new MergedCandidates(shared, [hosts], claimedEarlier, { takesFromBase: true });
    },
  };
}

/** Joins the model's CRs into the clusters planning places. */
export function planClusters(model: SiteModel): PlanClusters {
  const sipByKey = new Map<ClusterKey, SipCluster>();
  // Keys are unique per kind (duplicates are reported and dropped before), so one SIPCluster a key.
  for (const sip of model.sips)
    if (!sipByKey.has(sipKey(sip.resource))) sipByKey.set(sipKey(sip.resource), sip);
  return { bpaByKey: groupBpa(model), sipByKey };
}

/** Every turn of `clusters`, in planning order. */
export function turnsOf(clusters: PlanClusters): TurnWork[] {
  const work: TurnWork[] = [];
  for (const [key, sip] of clusters.sipByKey) work.push({ pass: "sip", key, sip });
  for (const [key, group] of clusters.bpaByKey)
    if (isProvisioned(group)) work.push({ pass: "bpa", key, group });
  return work.sort(compareTurns);
}

/**
 * The plan and issues of a run from its parts: fixed-claim issues first, then each turn's in
 * planning order; plans by key, BPA before SIP for the same key (the SitePlan contract).
 */
export function assemble(
  clusters: PlanClusters,
  fixed: FixedClaims,
  turns: readonly TurnOutcome[],
): { plan: SitePlan; issues: Issue[] } {
  const issues: Issue[] = [...fixed.issuesByHost.values()].flat();
  const plans: ClusterPlan[] = [];
  const nextLock: LockEntry[] = [];
  for (const { placed } of turns) {
    plans.push(placed.plan);
    nextLock.push(...placed.lock);
    issues.push(...placed.issues);
  }
  for (const [key, group] of clusters.bpaByKey) {
    if (!group.provisioning) plans.push(unprovisionedPlan(key, group));
  }
  plans.sort((a, b) => compareText(a.key, b.key) || compareText(a.kind, b.kind));
  const retired = fixed
    .releasingClusters()
    .filter((key) => !clusters.bpaByKey.has(key) && !clusters.sipByKey.has(key))
    .sort(compareText)
    .map((key) => retireSipCluster(key, fixed.releasing(key)));
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
