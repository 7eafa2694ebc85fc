/**
 * Placement turn by turn (docs/contract.md §3): after the fixed claims, each SIPCluster in key order, then each
 * BPA cluster in key order, places its hosts against the claims made before its turn. A turn records
 * what it read of those claims, so a later run that changes some claims knows which turns could
 * decide differently and re-places only those (`site-snapshot.ts`); every other turn's outcome
 * stands as it was.
 */
import type { ClusterKey } from "../cluster-key.ts";
import { compareText } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import type { LabelSelector } from "../inventory/selector.ts";
import type { Inventory } from "../inventory/inventory.ts";
import type { SipCluster } from "../model/sip.ts";
import { macNamedHosts, placeBpaCluster, type ProvisionedGroup } from "./bpa-placement.ts";
import { ClaimLedger, type StandingClaim } from "./claim-ledger.ts";
import type { Placed, PlanningContext } from "./context.ts";
import type { FixedClaims } from "./fixed-claims.ts";
import type { Candidates } from "./merged-candidates.ts";
import type { ClusterPlan } from "./model.ts";
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
 * What a turn read of the claims made before it: the hosts it looked up, the best-fit positions it
 * walked (`[from, to]`, ends included), and how far it walked a selector's matches in id order,
 * where a host freed or claimed earlier would have changed its choice. `all` when it looked at nearly
 * every host (a `no-fit` counts every host's reason).
 */
export interface Reads {
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly (readonly [number, number])[];
  readonly walks: readonly SelectorWalk[];
  readonly all: boolean;
}

/**
 * A walk over the hosts a selector matches, in id order, up to `last` (included), or over all of
 * them. A turn placed again skips hosts it knows to be held (`TurnSetting.mayBeFree`) without
 * looking them up, so only the walk says it passed them.
 */
export interface SelectorWalk {
  readonly selector: LabelSelector;
  readonly last?: string;
}

/** A turn's outcome: its placement, the hosts it claimed, and what it read. */
export interface TurnOutcome {
  readonly turn: Turn;
  readonly placed: Placed<ClusterPlan>;
  /** Host id → the claim this turn made on it. */
  readonly claims: ReadonlyMap<string, StandingClaim>;
  readonly reads: Reads;
}

/** What a turn places: a SIPCluster, or a BPA cluster with a Provisioning. */
export type TurnWork =
  | (Turn & { readonly pass: "sip"; readonly sip: SipCluster })
  | (Turn & { readonly pass: "bpa"; readonly group: ProvisionedGroup });

/** The planning state a turn runs in. */
export interface TurnSetting {
  readonly inventory: Inventory;
  readonly fixed: FixedClaims;
  /**
   * The claim a turn before `turn` made on `host`, if any. Asked again long after the turn, by
   * `explain`, so claims of later turns must not show.
   */
  claimedEarlier(host: Host, turn: Turn): StandingClaim | undefined;
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
  /** See {@link PlanningContext.mayBeFree}; every host when absent. */
  mayBeFree?(hosts: readonly Host[], selector: LabelSelector): Iterable<Host>;
}

/**
 * More hosts read than this share of the inventory counts as reading all of them: a `no-fit`
 * explains itself with every host's reason, and a set of every host per such turn would cost more
 * than re-placing the turn whenever anything changes.
 */
const ALL_READ_SHARE = 0.25;

/** Places one turn's cluster against the fixed claims and the claims of earlier turns. */
export function placeTurn(work: TurnWork, setting: TurnSetting): TurnOutcome {
  const turn: Turn = { pass: work.pass, key: work.key };
  const hosts = new Set<string>();
  const ranges: [number, number][] = [];
  const walks: SelectorWalk[] = [];
  let recording = true;
  // Claims made outside this turn. Read through here, so the turn learns what it depended on; an
  // explanation computed later (`metalsynth explain`) reads the same answers, unrecorded.
  const ledger = new ClaimLedger((host) => {
    if (recording) hosts.add(host.id);
    return setting.claimedEarlier(host, turn) ?? setting.fixed.claimOf(host);
  });
  const context: PlanningContext = {
    inventory: setting.inventory,
    bestFit: {
      take: (host) => setting.bestFit.take(host),
      fitting: (minCpus, minMemoryBytes) =>
        setting.bestFit.fitting(minCpus, minMemoryBytes, (from, to) => ranges.push([from, to])),
    },
    ledger,
    lockEntries: setting.fixed.heldByLock(turn.key),
    explains: setting.explains ?? true,
    stillPlanning: (cluster) => setting.stillPlanning(cluster),
    mayBeFree: (candidates, selector) =>
      walked(setting.mayBeFree?.(candidates, selector) ?? candidates, (last) =>
        walks.push({ selector, ...(last !== undefined && { last }) }),
      ),
  };
  let placed: Placed<ClusterPlan>;
  // The context with the pass's own key first: built per turn (decision 0026's idiom).
  if (work.pass === "sip") {
    placed = placeSipCluster(work.sip, { releasing: setting.fixed.releasing(work.key), ...context });
  } else {
    // Whether a MAC entry's host is contested depends on that host's fixed claim.
    for (const host of macNamedHosts(work.group, setting.inventory)) hosts.add(host.id);
    placed = placeBpaCluster(work.key, work.group, { contested: setting.fixed.contested, ...context });
  }
  recording = false;
  const all = hosts.size > setting.inventory.size * ALL_READ_SHARE;
  return {
    turn,
    placed,
    claims: ledger.recorded,
    reads: { hosts: all ? new Set() : hosts, ranges, walks, all },
  };
}

/**
 * `hosts`, telling `ended` where the walk stopped: the id of the last host given out, or nothing
 * when every host was.
 */
function* walked(hosts: Iterable<Host>, ended: (last: string | undefined) => void): Generator<Host> {
  let last: string | undefined;
  let exhausted = false;
  try {
    for (const host of hosts) {
      last = host.id;
      yield host;
    }
    exhausted = true;
  } finally {
    ended(exhausted ? undefined : last);
  }
}
