/**
 * Placement turn by turn (docs/contract.md §3). In plan/, a turn is one cluster's placement in
 * planning order and nothing else (decision 0067): after the fixed claims, each SIPCluster in key
 * order, then each BPA cluster in key order, places its hosts against the claims made before its
 * turn. A turn records what it read (`engine/reads.ts`), so a later run that changes some claims
 * knows which turns could decide differently and places only those again (`engine/replan.ts`);
 * every other turn's outcome stands as it was.
 */
import type { ClusterKey } from "../cluster-key.ts";
import { compareText } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import type { LabelSelector } from "../inventory/selector.ts";
import type { Inventory } from "../inventory/inventory.ts";
import type { PlanCache } from "../model/plan-cache.ts";
import type { SipCluster } from "../model/sip.ts";
import { placeBpaCluster, type ContestedEntries, type ProvisionedGroup } from "./bpa-placement.ts";
import { ClaimLedger, NO_RELEASES, type Release, type StandingClaim } from "./claim-ledger.ts";
import type { Candidates, Placed, PlanningContext } from "./context.ts";
import type { FixedClaims } from "./fixed-claims.ts";
import type { ClusterPlan } from "./model.ts";
import { TurnReads, type Reads } from "./engine/reads.ts";
import { placeSipCluster } from "./sip-placement.ts";

/** One cluster's placement in planning order: the SIP pass before the BPA pass, each in key order. */
export interface Turn {
  readonly pass: "sip" | "bpa";
  readonly key: ClusterKey;
}

/** Planning order of turns (decision 0004: SIP roles ask for hosts by label, so they go first). */
export function compareTurns(a: Turn, b: Turn): number {
  if (a.pass !== b.pass) return a.pass === "sip" ? -1 : 1;
  return compareText(a.key, b.key);
}

/** A claim a turn made, and which turn made it. */
export interface TurnClaim extends StandingClaim {
  readonly turn: Turn;
}

/**
 * The turn claim of `claim`, one `turn` made, as a trace keeps it: built field by field, as a cascade
 * makes a few for every turn it moves, and a spread copies keys through V8's generic path.
 */
export function turnClaim(turn: Turn, claim: StandingClaim): TurnClaim {
  return { turn, cluster: claim.cluster, why: claim.why };
}

/** A turn's outcome: its placement, the hosts it claimed, and what it read. */
export interface TurnOutcome {
  readonly turn: Turn;
  readonly placed: Placed<ClusterPlan>;
  /** Host id → the claim this turn made on it. */
  readonly claims: ReadonlyMap<string, StandingClaim>;
  readonly reads: Reads;
}

/**
 * Who holds a host before a turn: the claim an earlier turn made, else the fixed claim. One object
 * answers it for a run (`engine/claims-before.ts`).
 */
export interface ClaimsBefore {
  readonly fixed: FixedClaims;
  /**
   * Who holds `host` before `turn`. Asked again long after the turn, by `explain`, so claims of
   * later turns must not show.
   */
  claimOf(host: Host, turn: Turn): StandingClaim | undefined;
}

/** What a turn places: a SIPCluster, or a BPA cluster with a Provisioning. */
export type TurnWork =
  | (Turn & { readonly pass: "sip"; readonly sip: SipCluster })
  | (Turn & { readonly pass: "bpa"; readonly group: ProvisionedGroup });

/** The planning state a turn runs in. */
export interface TurnSetting {
  readonly inventory: Inventory;
  /** Who holds a host before a turn, the fixed claims among them. */
  readonly claims: ClaimsBefore;
  /** See {@link PlanningContext.cache}. */
  readonly cache: PlanCache;
  /**
   * Best-fit candidates without the hosts earlier turns claimed. A host an earlier turn of the same
   * key claimed (a SIPCluster's, for the BPA cluster of the same name) passes the claim filter as
   * the cluster's own; it is no candidate all the same. A whole site's run shares one, from which
   * each turn takes what it claims; a turn placed again gets its own.
   */
  readonly bestFit: Candidates;
  /** Whether `cluster` has a turn at or after this one, so it may still take hosts it holds. */
  stillPlanning(cluster: ClusterKey): boolean;
  /** See {@link PlanningContext.explains}. @default true */
  readonly explains?: boolean;
  /** See {@link PlanningContext.warns}. @default true */
  readonly warns?: boolean;
  /**
   * Whether the outcome keeps what the turn read: a review that drops each outcome once it has its
   * findings has no use for it. @default true
   */
  readonly records?: boolean;
  /** See {@link PlanningContext.openMatches}; every host when absent. */
  openMatches?(hosts: readonly Host[], selector: LabelSelector): Iterable<Host>;
}

/** Places one turn's cluster against the fixed claims and the claims of earlier turns. */
export function placeTurn(work: TurnWork, setting: TurnSetting): TurnOutcome {
  const turn: Turn = { pass: work.pass, key: work.key };
  const { claims } = setting;
  const reads = new TurnReads(
    setting.inventory,
    setting.bestFit,
    (host) => claims.claimOf(host, turn),
    setting.openMatches,
    setting.records ?? true,
  );
  // Claims made outside this turn, read through the turn's view so the turn learns what it
  // depended on.
  const ledger = new ClaimLedger((host) => reads.claimOf(host));
  // One context for either pass, each reading its own key: a spread into a second object per turn
  // cost a review placing hundreds of turns again more than the placing it wraps.
  const context: PlanningContext & PassContext = {
    inventory: reads,
    bestFit: reads,
    ledger,
    lockEntries: claims.fixed.heldByLock(turn.key),
    vanished: claims.fixed.vanished(turn.key),
    explains: setting.explains ?? true,
    warns: setting.warns ?? true,
    stillPlanning: (cluster) => setting.stillPlanning(cluster),
    openMatches: (candidates, selector) => reads.openMatches(candidates, selector),
    rejection: (filters, host) => reads.rejection(filters, host),
    cache: setting.cache,
    releasing: work.pass === "sip" ? claims.fixed.releasing(work.key) : NO_RELEASES,
    contested: claims.fixed.contested,
  };
  const placed: Placed<ClusterPlan> =
    work.pass === "sip" ? placeSipCluster(work.sip, context) : placeBpaCluster(work.key, work.group, context);
  return { turn, placed, claims: ledger.recorded, reads: reads.finish() };
}

/** What one pass's placement reads besides the {@link PlanningContext}. */
interface PassContext {
  /** The hosts the SIPCluster is releasing (none for a BPA turn). */
  readonly releasing: readonly Release[];
  /** MAC entries whose host another cluster holds (read by the BPA pass). */
  readonly contested: ContestedEntries;
}
