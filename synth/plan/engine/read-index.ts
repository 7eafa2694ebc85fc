/**
 * Which turns of a trace read which host facts, from what each turn recorded through its
 * recording view (`reads.ts`): asked "this host's facts changed", it names the turns that read them,
 * in planning order. It knows nothing of filters, MAC entries or SIP roles; only the shapes a read
 * takes (one host, a range of best-fit positions, a selector's matches walked in id order or listed,
 * the hosts of unknown size, every host), each answered in time that grows with the turns it finds.
 */
import { pushTo } from "../../group.ts";
import { compareText } from "../../issue.ts";
import type { Host } from "../../inventory/host.ts";
import { HOST_FACTS, type HostFacts } from "../../inventory/host-facts.ts";
import type { Inventory } from "../../inventory/inventory.ts";
import { matchesSelector, type LabelSelector } from "../../inventory/selector.ts";
import type { Reads } from "./reads.ts";
import { lowerBound } from "../../lower-bound.ts";

/** Receives each turn found, by its position in the trace's planning order. */
export type FoundTurn = (position: number) => void;

/** Turns' walks over one selector's matches, sorted by where they stopped (walks over every match last). */
interface SelectorWalks {
  readonly selector: LabelSelector;
  readonly walks: { readonly last?: string; readonly position: number }[];
  /** The latest position from each walk on: a suffix of walks all before a position is skipped. */
  latest: number[];
}

export class ReadIndex {
  /** Host id → positions of the turns that looked it up by itself (every fact). */
  readonly #hosts = new Map<string, number[]>();
  /**
   * Best-fit ranges as a segment tree over ranks: node → positions of the turns whose range covers
   * the node's ranks, ascending. The turns whose range holds a rank are those of the nodes on its
   * leaf's path to the root, so a host costs the turns it reaches, not every range.
   */
  readonly #rangeTree: (number[] | undefined)[];
  /** Leaves of {@link #rangeTree}: one per best-fit rank. */
  readonly #leaves: number;
  /**
   * Node → the {@link Drained} generation that last reached it (and gave its list out, if it has
   * one). A stamp rather than a set per change: a cascade reaches the tree for each of hundreds of
   * moved claims, and each node once.
   */
  readonly #drainedAt: Uint32Array;
  #generation = 0;
  /** The turns' walks by selector (as JSON), latest walker first, so a late position stops early. */
  readonly #walks: SelectorWalks[];
  /** Selector (as JSON) → it, and the positions of the turns that listed its matches. */
  readonly #matches = new Map<string, { selector: LabelSelector; positions: number[] }>();
  readonly #unsized: number[] = [];
  readonly #all: number[] = [];
  /** Position → the facts the turn read of the hosts its ranges, walks and unsized walk passed. */
  readonly #facts: HostFacts[];

  /** Indexes `turns` (in planning order), their best-fit ranges in `inventory`'s ranks. */
  constructor(
    turns: readonly { readonly reads: Reads }[],
    private readonly inventory: Inventory,
  ) {
    this.#leaves = Math.max(1, inventory.lastBestFitRank() + 1);
    this.#rangeTree = new Array<number[] | undefined>(2 * this.#leaves);
    this.#drainedAt = new Uint32Array(2 * this.#leaves);
    this.#facts = turns.map(({ reads }) => reads.facts);
    const walks = new Map<string, SelectorWalks>();
    turns.forEach(({ reads }, position) => {
      if (reads.all) this.#all.push(position);
      if (reads.unsized) this.#unsized.push(position);
      for (const host of reads.hosts) pushTo(this.#hosts, host, position);
      for (const [from, to] of reads.ranges) this.#addRange(from, to, position);
      for (const { selector, last } of reads.walks) {
        const id = JSON.stringify(selector);
        let group = walks.get(id);
        if (!group) walks.set(id, (group = { selector, walks: [], latest: [] }));
        group.walks.push({ ...(last !== undefined && { last }), position });
      }
      for (const selector of reads.matches) {
        const id = JSON.stringify(selector);
        let group = this.#matches.get(id);
        if (!group) this.#matches.set(id, (group = { selector, positions: [] }));
        if (group.positions.at(-1) !== position) group.positions.push(position);
      }
    });
    for (const group of walks.values()) {
      group.walks.sort((a, b) => compareWalkEnds(a.last, b.last));
      group.latest = group.walks.map(({ position }) => position);
      for (let at = group.latest.length - 2; at >= 0; at--)
        group.latest[at] = Math.max(group.latest[at]!, group.latest[at + 1]!);
    }
    this.#walks = [...walks.values()].sort((a, b) => (b.latest[0] ?? -1) - (a.latest[0] ?? -1));
  }

  /** A new record of the lists given out, for one change planned from this index. */
  drained(): Drained {
    return { generation: ++this.#generation, all: false };
  }

  /**
   * The turns after `position` that read `facts` of `host` (as this index's inventory has it),
   * leaving out the lists already in `drained`. A change is planned turn by turn in planning order
   * and queues every turn this finds, so a list given out once after one position holds nothing
   * new for a later one: a cascade through hundreds of turns reading the same best-fit ranges costs
   * each turn once, not once per moved claim. `position` must not decrease between calls sharing
   * `drained`. Turns are handed to `found` rather than yielded: nested generators cost more than
   * the lookups, a moved claim at a time. `rank`: the host's best-fit rank, if the caller has it.
   */
  readersOf(
    host: Host,
    facts: HostFacts,
    position: number,
    drained: Drained,
    found: FoundTurn,
    rank = this.inventory.bestFitRank(host),
  ): void {
    // A host looked up by itself was read whole.
    this.#after(this.#hosts.get(host.id), position, found);
    if (!drained.all) {
      drained.all = true;
      this.#after(this.#all, position, found);
    }
    for (const { selector, walks, latest } of this.#walks) {
      // Sorted by their latest walker: once one is at or before `position`, so are the rest.
      if ((latest[0] ?? position) <= position) break;
      if (!matchesSelector(host.labels, selector)) continue;
      // The first walk that stopped at or after the host; every later one passed it too.
      const first = lowerBound(0, walks.length, (at) => compareWalkEnds(walks[at]!.last, host.id) < 0);
      for (let at = first; at < walks.length && latest[at]! > position; at++) {
        const walker = walks[at]!.position;
        if (walker > position && (this.#facts[walker]! & facts) !== 0) found(walker);
      }
    }
    if ((facts & HOST_FACTS.labels) !== 0) {
      for (const { selector, positions } of this.#matches.values())
        if (matchesSelector(host.labels, selector)) this.#after(positions, position, found);
    }
    if (rank === undefined) {
      // Reached only by walks past every sized host, recorded as such.
      this.#after(this.#unsized, position, found, facts);
      return;
    }
    if (rank >= this.#leaves) return;
    for (let node = rank + this.#leaves; node >= 1; node >>>= 1) {
      // Every path from a leaf goes on to the root: a node this change reached already, so did
      // every node above it, and nothing up there is new.
      if (this.#drainedAt[node] === drained.generation) return;
      this.#drainedAt[node] = drained.generation;
      const positions = this.#rangeTree[node];
      if (positions !== undefined) this.#after(positions, position, found, facts);
    }
  }

  /**
   * The turns of `positions` (ascending) after `position` that read any of `facts` of the hosts
   * they passed; every one, without `facts` (the list's turns read the host whole).
   */
  #after(
    positions: readonly number[] | undefined,
    position: number,
    found: FoundTurn,
    facts?: HostFacts,
  ): void {
    if (positions === undefined) return;
    for (let at = firstAfter(positions, position); at < positions.length; at++) {
      const turn = positions[at]!;
      if (facts === undefined || (this.#facts[turn]! & facts) !== 0) found(turn);
    }
  }

  /** Files the turn at `position` under the tree nodes covering ranks `from` to `to` (ends included). */
  #addRange(from: number, to: number, position: number): void {
    let low = Math.max(0, from) + this.#leaves;
    let high = Math.min(to, this.#leaves - 1) + 1 + this.#leaves;
    for (; low < high; low >>>= 1, high >>>= 1) {
      if (low & 1) (this.#rangeTree[low++] ??= []).push(position);
      if (high & 1) (this.#rangeTree[--high] ??= []).push(position);
    }
  }
}

/** The index of the first of `positions` (ascending) after `position`. */
function firstAfter(positions: readonly number[], position: number): number {
  return lowerBound(0, positions.length, (at) => positions[at]! <= position);
}

/** Orders where selector walks stopped: by the last host's id, a walk over every match last. */
function compareWalkEnds(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined) return Number(a === undefined) - Number(b === undefined);
  return compareText(a, b);
}

/**
 * The lists of one {@link ReadIndex} given out for one change. Another change's record drained since
 * can only make a list come out twice, which costs a lookup: every caller queues each turn once.
 */
export interface Drained {
  readonly generation: number;
  all: boolean;
}
