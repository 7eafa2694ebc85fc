/**
 * What a turn placed again may take (`replan.ts`): the best-fit candidates and selector matches the
 * trace left unclaimed, with the few claimed hosts still open to the turn or its own merged in.
 * Without it, each turn placed again walks past every host the site's clusters hold.
 */
import type { Host } from "../../inventory/host.ts";
import type { BestFit, Inventory } from "../../inventory/inventory.ts";
import { matchesSelector, type LabelSelector } from "../../inventory/selector.ts";
import type { Candidates } from "../context.ts";
import { MergedCandidates, mergeById, type RankedHosts } from "./merged-candidates.ts";
import type { PlanTrace } from "../plan-site.ts";
import type { Turn } from "../turns.ts";
import { lowerBound } from "../../lower-bound.ts";

/** The candidates of one trace, shared by every change planned from it. */
export class ReplanCandidates {
  /** Best-fit candidates without any host the trace claimed. */
  readonly #unclaimed: BestFit;
  /** Hosts only a turn claimed (no fixed claim), sorted by id, with that turn's position: open to the turns before it. */
  readonly #claimedByTurnOnly: { readonly host: Host; readonly position: number }[] = [];
  /**
   * The same, of known size, in best-fit order, with their ranks and the claiming turns' positions:
   * every turn placed again walks these lists, skipping the hosts of earlier turns, rather than
   * copying and sorting what concerns it (which cost every moved turn the site's claimed hosts).
   */
  readonly #sizedClaimedByTurnOnly: RankedHosts & { readonly positions: FirstAtLeast };
  /** A selector's matches (as `Inventory.matching` remembers them) → those the trace left unclaimed. */
  readonly #unclaimedMatches = new WeakMap<readonly Host[], readonly Host[]>();

  /** `positionOf`: where a turn comes in the trace's planning order (`TraceIndex.positionOf`). */
  constructor(
    private readonly trace: PlanTrace,
    private readonly inventory: Inventory,
    positionOf: (turn: Turn) => number,
  ) {
    this.#unclaimed = inventory.bestFit();
    for (const host of inventory.hosts) {
      const turnClaim = trace.turnClaims.get(host.id);
      const fixed = trace.fixed.claimOf(host);
      if (fixed === undefined && turnClaim === undefined) continue;
      this.#unclaimed.take(host);
      if (fixed === undefined && turnClaim)
        this.#claimedByTurnOnly.push({ host, position: positionOf(turnClaim.turn) });
    }
    // Only hosts of known size are best-fit candidates at all.
    const sized = this.#claimedByTurnOnly
      .filter(({ host }) => inventory.bestFitRank(host) !== undefined)
      .sort((a, b) => this.#rank(a.host) - this.#rank(b.host));
    this.#sizedClaimedByTurnOnly = {
      hosts: sized.map(({ host }) => host),
      ranks: sized.map(({ host }) => this.#rank(host)),
      positions: new FirstAtLeast(sized.map(({ position }) => position)),
    };
  }

  /**
   * Best-fit candidates for the turn at `position` placed again: every host the trace left
   * unclaimed, and of the claimed ones those open to the turn or its own: claimed only by a
   * later turn, or among `own` (the turn's own fixed hosts) and `reopened` (hosts whose claims the change
   * moved). A superset of what a full run's candidates would be; the turn's claim filter rejects the
   * rest.
   */
  candidatesFor(
    position: number,
    own: readonly Host[],
    reopened: RankedHosts,
    claimedEarlier: (host: Host) => boolean,
  ): Candidates {
    const later = this.#sizedClaimedByTurnOnly;
    const extra: RankedHosts[] = [new OpenToEarlierTurns(later, position), reopened];
    // Most turns hold no host of their own before they are placed.
    if (own.length > 0) {
      const ownRanked = new ReopenedHosts(this.inventory);
      for (const host of own) ownRanked.add(host);
      extra.push(ownRanked);
    }
    return new MergedCandidates(this.#unclaimed, extra, claimedEarlier, ON_ITS_OWN);
  }

  /**
   * {@link PlanningContext.openMatches} for `turn` placed again: the matches the trace left
   * unclaimed, with those of the claimed ones open to the turn or its own (as for
   * {@link candidatesFor}), in id order.
   */
  openMatchesFor(
    position: number,
    alsoOpen: Iterable<Host>,
  ): (hosts: readonly Host[], selector: LabelSelector) => Iterable<Host> {
    return (hosts, selector) => {
      let unclaimed = this.#unclaimedMatches.get(hosts);
      if (unclaimed === undefined) {
        const claimed = (host: Host) =>
          this.trace.turnClaims.has(host.id) || this.trace.fixed.claimOf(host) !== undefined;
        unclaimed = hosts.filter((host) => !claimed(host));
        this.#unclaimedMatches.set(hosts, unclaimed);
      }
      const extra = new Map<string, Host>();
      for (const { host, position: claimedBy } of this.#claimedByTurnOnly) {
        if (claimedBy >= position) extra.set(host.id, host);
      }
      for (const host of alsoOpen) extra.set(host.id, host);
      const matching = [...extra.values()].filter((host) => matchesSelector(host.labels, selector));
      return mergeById(unclaimed, matching);
    };
  }

  #rank(host: Host): number {
    return this.inventory.bestFitRank(host) ?? Number.MAX_SAFE_INTEGER;
  }
}

/** A turn placed again walks the trace's candidates, shared by every review: it takes from its own. */
const ON_ITS_OWN = { takesFromBase: false } as const;

/**
 * Hosts only a turn claimed, open to the turns before it: kept for the walk of the turn at
 * `position` when a later turn claimed them.
 */
class OpenToEarlierTurns implements RankedHosts {
  readonly hosts: readonly Host[];
  readonly ranks: readonly number[];

  constructor(
    private readonly claimed: RankedHosts & { readonly positions: FirstAtLeast },
    private readonly position: number,
  ) {
    this.hosts = claimed.hosts;
    this.ranks = claimed.ranks;
  }

  keptFrom(index: number): number {
    return this.claimed.positions.find(index, this.position);
  }
}

/**
 * Claimed hosts a change reopened, open to the turns placed again as the change goes: {@link all} of
 * them (for `openMatches`), and of those of known size, in best-fit order with their ranks (for
 * {@link MergedCandidates}). A host a turn placed again claims is claimed earlier for every turn
 * after it, so it leaves both, which stay as short as what the change reopened rather than as long
 * as the cascade.
 */
export class ReopenedHosts implements RankedHosts {
  readonly hosts: Host[] = [];
  readonly ranks: number[] = [];
  readonly #all = new Map<string, Host>();

  constructor(private readonly inventory: Inventory) {}

  /** Every host given to {@link add} and not to {@link hold} since. */
  get all(): Iterable<Host> {
    return this.#all.values();
  }

  /** `host` is open to the turns to come; `rank`: its best-fit rank, if the caller has it. */
  add(host: Host, rank = this.inventory.bestFitRank(host)): void {
    this.#all.set(host.id, host);
    if (rank === undefined) return;
    const at = this.#at(rank);
    if (this.ranks[at] === rank) return;
    this.hosts.splice(at, 0, host);
    this.ranks.splice(at, 0, rank);
  }

  /** `host` is held by a turn placed already: no candidate for the turns to come (`rank` as for {@link add}). */
  hold(host: Host, rank = this.inventory.bestFitRank(host)): void {
    this.#all.delete(host.id);
    if (rank === undefined) return;
    const at = this.#at(rank);
    if (this.ranks[at] !== rank) return;
    this.hosts.splice(at, 1);
    this.ranks.splice(at, 1);
  }

  /** Where `rank` is, or would be, in {@link ranks}. */
  #at(rank: number): number {
    const { ranks } = this;
    return lowerBound(0, ranks.length, (at) => ranks[at]! < rank);
  }
}

/**
 * A list of numbers searchable for the first at or after an index that is at least a value, in
 * logarithmic time (a segment tree of maxima): the first host a later turn claimed, from a
 * best-fit position on, without walking past every host the earlier turns claimed.
 */
class FirstAtLeast {
  readonly #leaves: number;
  readonly #max: number[];

  constructor(readonly values: readonly number[]) {
    let leaves = 1;
    while (leaves < values.length) leaves *= 2;
    this.#leaves = leaves;
    this.#max = new Array<number>(2 * leaves).fill(Number.NEGATIVE_INFINITY);
    values.forEach((value, index) => (this.#max[leaves + index] = value));
    for (let node = leaves - 1; node >= 1; node--)
      this.#max[node] = Math.max(this.#max[2 * node]!, this.#max[2 * node + 1]!);
  }

  /** The first index at or after `from` whose value is at least `least`; the list's length if none. */
  find(from: number, least: number): number {
    const max = this.#max;
    if (from >= this.values.length) return this.values.length;
    let node = from + this.#leaves;
    // Up and right to the first subtree holding a value large enough, then down to its leftmost one.
    while (max[node]! < least) {
      while (node & 1) node >>>= 1;
      if (node === 0) return this.values.length;
      node += 1;
    }
    while (node < this.#leaves) node = max[2 * node]! >= least ? 2 * node : 2 * node + 1;
    return node - this.#leaves;
  }
}
