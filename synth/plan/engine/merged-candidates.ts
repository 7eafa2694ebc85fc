import type { ClusterKey } from "../../cluster-key.ts";
import { pushTo } from "../../group.ts";
import type { Host } from "../../inventory/host.ts";
import type { BestFit } from "../../inventory/inventory.ts";
import { matchesSelector, type LabelSelector } from "../../inventory/selector.ts";
import { compareText } from "../../issue.ts";
import { lowerBound } from "../../lower-bound.ts";
import type { Candidates } from "../context.ts";

/**
 * Hosts kept out of a base walk, in best-fit order, each with its best-fit rank (`ranks[i]` is that
 * of `hosts[i]`). `keptFrom` gives the first index at or after its argument that this walk keeps,
 * without copying the lists: a turn placed again shares its trace's lists and skips, in one step,
 * what only concerns other turns.
 */
export interface RankedHosts {
  readonly hosts: readonly Host[];
  readonly ranks: readonly number[];
  keptFrom?(index: number): number;
}

/**
 * One turn's best-fit candidates: `base`'s walk with the hosts of `extra` (kept out of `base`)
 * merged in by rank, without the hosts the turn took or an earlier turn claimed. A turn placed
 * again on its own (`replan.ts`) walks the trace's base, which serves every review, so what it takes
 * is kept here only; a whole site's run (`plan-site.ts`) shares its base with the turns after, so
 * `takesFromBase` takes them out of it too.
 */
export class MergedCandidates implements Candidates {
  /** Made on the first take: a turn placed again takes one or two hosts, some none. */
  #taken: Set<string> | undefined;

  constructor(
    private readonly base: BestFit,
    private readonly extra: readonly RankedHosts[],
    /** Claimed by an earlier turn: no candidate (see `TurnSetting.bestFit`). */
    private readonly claimedEarlier: (host: Host) => boolean,
    private readonly options: { readonly takesFromBase: boolean },
  ) {}

  take(host: Host): void {
    (this.#taken ??= new Set()).add(host.id);
    if (this.options.takesFromBase) this.base.take(host);
  }

  #offered(host: Host): boolean {
    return !this.#taken?.has(host.id) && !this.claimedEarlier(host);
  }

  firstFitting(
    minCpus: number,
    minMemoryBytes: number,
    accepts: (host: Host, rank: number) => boolean,
    scanned?: (from: number, to: number) => void,
  ): Host | undefined {
    // Each list starts at its first host of at least the size asked for: the walk never visits the
    // smaller ones, however many there are (a turn placed again shares lists of the whole site).
    // A loop, not `map`: a review walks twice for each of hundreds of turns it places again.
    const least = this.base.firstOfSize(minCpus, minMemoryBytes);
    const at: number[] = [];
    for (const { ranks } of this.extra) at.push(firstWithRank(ranks, least, 0));
    const cursor = new ExtraCursor(at, minMemoryBytes);
    let extraChosen: Host | undefined;
    const fromBase = this.base.firstFittingFrom(
      least,
      minMemoryBytes,
      (host, rank) => {
        for (let extra = this.#extraBelow(cursor, rank); extra; extra = this.#extraBelow(cursor, rank)) {
          if (this.#offered(extra) && accepts(extra, cursor.rank)) {
            extraChosen = extra;
            return true;
          }
        }
        return this.#offered(host) && accepts(host, rank);
      },
      scanned,
    );
    if (extraChosen !== undefined || fromBase !== undefined) return extraChosen ?? fromBase;
    for (let extra = this.#extraBelow(cursor, NO_RANK); extra; extra = this.#extraBelow(cursor, NO_RANK))
      if (this.#offered(extra) && accepts(extra, cursor.rank)) return extra;
    return undefined;
  }

  /**
   * The next host of `extra` ranked before `below`, from `cursor` on, each once (its rank left in
   * `cursor.rank`); none when the next is ranked at or after it. A method rather than a nested
   * generator: a turn placed again walks a few hosts, and a generator per base host cost more than
   * the walk. Sizes are read by rank from the base's table, never from the hosts.
   */
  #extraBelow(cursor: ExtraCursor, below: number): Host | undefined {
    const { at, minMemoryBytes } = cursor;
    const base = this.base;
    // The extras' next host is known until one is passed: the base walk between two extra hosts
    // (thousands of hosts, a turn placed again) then costs one comparison a host, not a scan of
    // every list. The lists do not change while a turn walks them.
    if (cursor.nextSource === UNKNOWN) {
      let chosen = NONE;
      let chosenRank = NO_RANK;
      for (let source = 0; source < this.extra.length; source++) {
        const list = this.extra[source]!;
        const { ranks } = list;
        let index = list.keptFrom?.(at[source]!) ?? at[source]!;
        // A host with more CPUs than asked may lack the memory: so may the hosts after it with as
        // many CPUs (best-fit order), passed in one search rather than one by one.
        for (let rank = ranks[index]; rank !== undefined && base.memoryAt(rank) < minMemoryBytes;) {
          const least = base.firstOfSize(base.cpusAt(rank), minMemoryBytes, rank);
          const next = firstWithRank(ranks, least, index + 1);
          index = list.keptFrom?.(next) ?? next;
          rank = ranks[index];
        }
        at[source] = index;
        const rank = ranks[index];
        if (rank === undefined || rank >= chosenRank) continue;
        chosen = source;
        chosenRank = rank;
      }
      cursor.nextSource = chosen;
      cursor.nextRank = chosenRank;
    }
    const chosen = cursor.nextSource;
    const chosenRank = cursor.nextRank;
    if (chosen === NONE || chosenRank >= below) return undefined;
    cursor.nextSource = UNKNOWN;
    cursor.rank = chosenRank;
    // Ranks are unique to a host: a host in several lists comes once.
    for (let source = 0; source < this.extra.length; source++) {
      if (this.extra[source]!.ranks[at[source]!] === chosenRank) at[source]!++;
    }
    return this.extra[chosen]!.hosts[at[chosen]! - 1]!;
  }
}

/** {@link ExtraCursor.nextSource} before the next host is looked for, and when there is none. */
const UNKNOWN = -2;
const NONE = -1;
/**
 * A rank after every host's, small enough to stay an integer V8 keeps unboxed (a field holding
 * `Infinity` made it box a number per walk).
 */
const NO_RANK = 0x3fffffff;

/** Where one walk of {@link MergedCandidates.firstFitting} is in each list of its extra hosts. */
class ExtraCursor {
  /** The list holding the next host of all ({@link UNKNOWN} until looked for, {@link NONE}: none left). */
  nextSource = UNKNOWN;
  /** Its rank, once found. */
  nextRank = NO_RANK;
  /** The rank of the host given out last. */
  rank = NO_RANK;

  constructor(
    /** Each list's index of its next host. */
    readonly at: number[],
    /** The memory asked for (lists are in best-fit order and start at the CPUs asked for). */
    readonly minMemoryBytes: number,
  ) {}
}

/**
 * The SIP pass's walks over selector matches in a whole site's run: each selector's matches open to
 * the turn, without the hosts earlier turns claimed or a fixed claim holds, so a walk resumes past the hosts the
 * SIPClusters before it took instead of asking the ledger about each of them again (issue #23: that
 * made a region's SIP placement quadratic). A held host leaves a selector's list the first time a
 * walk meets it, through "next present" links with path halving, so each list costs its matches once
 * over the whole run. Hosts held by a fixed claim of the turn's own cluster join its walks only.
 *
 * Leaving out a held host is exact: it fails the claim filter of every later SIP turn (SIPCluster keys
 * are unique, so no later turn in the pass is its holder's), and the turn's `Reads.walks` say it was
 * passed, as for a turn placed again (`ReplanCandidates.openMatchesFor`).
 */
export class OpenMatches {
  /** A selector's matches (as `Inventory.matching` remembers them) → link to the next present one. */
  readonly #next = new WeakMap<readonly Host[], Int32Array>();
  /** Fixed-claimed hosts by holder, sorted by id. */
  readonly #own = new Map<ClusterKey, Host[]>();

  constructor(
    fixedHosts: readonly { readonly host: Host; readonly cluster: ClusterKey }[],
    /** Whether a claim made so far (an earlier turn's, or a fixed one) holds `host`. */
    private readonly held: (host: Host) => boolean,
  ) {
    for (const { host, cluster } of fixedHosts) pushTo(this.#own, cluster, host);
    for (const hosts of this.#own.values()) hosts.sort((a, b) => compareText(a.id, b.id));
  }

  /** `PlanningContext.openMatches` for the turn of `cluster`. */
  forTurn(cluster: ClusterKey): (hosts: readonly Host[], selector: LabelSelector) => Iterable<Host> {
    return (hosts, selector) => {
      const own = (this.#own.get(cluster) ?? []).filter((host) => matchesSelector(host.labels, selector));
      return mergeById(this.#present(hosts), own);
    };
  }

  *#present(hosts: readonly Host[]): Generator<Host> {
    let next = this.#next.get(hosts);
    if (next === undefined)
      this.#next.set(hosts, (next = Int32Array.from({ length: hosts.length + 1 }, (_, at) => at)));
    const links = next;
    // The first present position at or after `at`; a removed position links past itself.
    const find = (at: number): number => {
      while (links[at] !== at) {
        links[at] = links[links[at]!]!;
        at = links[at]!;
      }
      return at;
    };
    for (let at = find(0); at < hosts.length; at = find(at + 1)) {
      const host = hosts[at]!;
      if (this.held(host)) links[at] = at + 1;
      else yield host;
    }
  }
}

/** `a` and `b` (each sorted by id, `b` short) merged in id order, each host once. */
export function* mergeById(a: Iterable<Host>, b: readonly Host[]): Generator<Host> {
  const sorted = [...b].sort((x, y) => compareText(x.id, y.id));
  let next = 0;
  for (const host of a) {
    for (; next < sorted.length && compareText(sorted[next]!.id, host.id) <= 0; next++) {
      if (sorted[next]!.id !== host.id) yield sorted[next]!;
    }
    yield host;
  }
  yield* sorted.slice(next);
}

/** The first index at or after `from` of `ranks` (ascending) holding a rank of at least `least`. */
function firstWithRank(ranks: readonly number[], least: number, from: number): number {
  return lowerBound(from, ranks.length, (at) => ranks[at]! < least);
}
