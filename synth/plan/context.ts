import type { ClusterKey } from "../cluster-key.ts";
import type { Issue } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import type { BestFit, Inventory } from "../inventory/inventory.ts";
import type { LabelSelector } from "../inventory/selector.ts";
import type { HostFilter, Rejection } from "../rules/filters/plugin.ts";
import type { ClaimLedger } from "./claim-ledger.ts";
import type { LockEntry } from "../model/lock.ts";
import type { PlanCache } from "../model/plan-cache.ts";

/**
 * The reads of the inventory placement makes, each recorded by the turn's recording view
 * (`engine/reads.ts`).
 */
export type PlanningInventory = Pick<
  Inventory,
  | "byId"
  | "byMac"
  | "closestMac"
  | "setAsideByMac"
  | "setAsideById"
  | "hosts"
  | "size"
  | "matching"
  | "ownedBySip"
  | "withUnknownResources"
>;

/** What a turn's placement asks of its best-fit candidates. */
export type Candidates = Pick<BestFit, "take" | "firstFitting">;

/**
 * What placing one cluster reads and updates. Its reads go through the turn's recording view
 * (`reads.ts`), so a change planned later knows whether it can reach this turn.
 */
export interface PlanningContext {
  readonly inventory: PlanningInventory;
  /** Best-fit candidates; every placed host is taken out, since no later request may have it. */
  readonly bestFit: Candidates;
  /** Who holds which host, as far as planning has got. */
  readonly ledger: ClaimLedger;
  /** The previous lock's entries for the cluster being placed. */
  readonly lockEntries: readonly LockEntry[];
  /** The previous lock's entries for the cluster whose host the inventory lost (decision 0052). */
  readonly vanished: readonly LockEntry[];
  /**
   * Whether placing records its decisions (`Decision`: the hosts chosen and why every other host was
   * not), which `metalsynth explain` reads. A turn placed again for a review or a change explains
   * nothing: its decisions would keep every filter and claim view it used alive for nothing.
   */
  readonly explains: boolean;
  /**
   * Whether placing reports warnings about the hosts it chose (`host-not-ready`, `resources-unknown`).
   * A review of one CR asks only for the errors of the other clusters its change moves: those are
   * all the webhook tells the CR about them (docs/decisions/0011-webhook-admission-scope.md), and a
   * cascade through hundreds of turns would word a warning for every host not yet installed.
   */
  readonly warns: boolean;
  /** Whether `cluster` is yet to be planned (or being planned), so it may still take hosts. */
  stillPlanning(cluster: ClusterKey): boolean;
  /**
   * The hosts of `hosts` (a selector's matches, sorted by id) open to this turn (no claim made
   * before it is known to hold them: they may be free for this cluster),
   * in the same order: all of them, or fewer where planning knows which are held for sure.
   */
  openMatches(hosts: readonly Host[], selector: LabelSelector): Iterable<Host>;
  /** The first of `filters` to reject `host`, if any (`rules/filters/`), their facts recorded as read. */
  rejection(filters: readonly HostFilter[], host: Host): Rejection | undefined;
  /** What the rules derive from immutable inputs, kept for the plan (decision 0067). */
  readonly cache: PlanCache;
}

/** A cluster's placement: its plan, the lock entries it records and the problems found. */
export interface Placed<P> {
  readonly plan: P;
  readonly lock: readonly LockEntry[];
  readonly issues: readonly Issue[];
}
