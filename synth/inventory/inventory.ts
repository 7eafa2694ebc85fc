/**
 * The indexed, read-only view of the BMH snapshot that rules, planning and the webhook query. Every
 * lookup the webhook's hot path needs (by id, by MAC, by label, by size) is a map or a binary search,
 * never a scan of all hosts (docs/contract.md §8: one CR against 10,000 hosts in ≤ 2 ms), but for the
 * one scan that indexes a label key the first time a selector names it.
 */
import { pushTo } from "../group.ts";
import { compareText } from "../issue.ts";
import { ClosestMac, type KnownMac } from "./closest-mac.ts";
import { sameHost, sipOwnerKey, type Host, type SetAsideHost } from "./host.ts";
import type { LabelSelector } from "./selector.ts";
import { matchesSelector } from "./selector.ts";
import { lowerBound } from "../lower-bound.ts";

const NO_HOSTS: readonly Host[] = Object.freeze([]);

/** A host that differs between two inventories: as it was (if it was there) and as it is now. */
export interface HostChange {
  readonly before?: Host;
  readonly after?: Host;
}

/** Selectors whose matching hosts are remembered; reviews of made-up selectors can't grow it further. */
const MATCHING_REMEMBERED = 256;
/** Label keys whose index is remembered, for the same reason. */
const LABEL_KEYS_REMEMBERED = 256;

/** The hosts carrying one label key: by the key's value, and all of them; each list sorted by id. */
interface LabelIndex {
  readonly byValue: ReadonlyMap<string, readonly Host[]>;
  readonly hosts: readonly Host[];
}

/** An immutable, deterministic index over hosts. Built by the loader, or from `Host[]` in tests. */
export class Inventory {
  /** All hosts, sorted by id (`namespace/name`). */
  readonly hosts: readonly Host[];
  /** Hosts the loader set aside (decision 0031), sorted by id: never chosen, named when a CR asks. */
  readonly setAside: readonly SetAsideHost[];
  readonly #setAsideByMac = new Map<string, SetAsideHost>();
  readonly #setAsideById = new Map<string, SetAsideHost>();
  readonly #byId = new Map<string, Host>();
  readonly #byMac = new Map<string, Host>();
  /**
   * Label key → its {@link LabelIndex}, made the first time a selector names the key. Selectors name
   * a few keys, and hosts carry many more (one with a value per host among them): indexing every key
   * up front was a third of building an inventory of 100,000 hosts.
   */
  readonly #byLabelKey = new Map<string, LabelIndex>();
  /** Hosts with known cpus and memory, in best-fit order: cpus, memory, id. */
  readonly #sized: readonly Host[];
  /** Host id → position in {@link #sized}. */
  readonly #sizeRank = new Map<string, number>();
  /** The cpus and memory of {@link #sized}, by position. */
  readonly #sizes: RankedSizes;
  readonly #unknownResources: readonly Host[];
  #closestMac: ClosestMac | undefined;
  /** Selector (as JSON) → {@link matching}'s answer. */
  readonly #matching = new Map<string, readonly Host[]>();
  /** `namespace/name` of a SIPCluster → hosts its SIP labels assign to it (sorted by id). */
  readonly #bySipOwner = new Map<string, Host[]>();

  /**
   * Indexes `hosts`. Ids must be unique (the loader drops duplicates and reports them; a duplicate
   * here is a bug). When two hosts share a MAC, {@link byMac} answers the one with the lowest id; the
   * loader reports the clash.
   */
  constructor(hosts: Iterable<Host>, setAside: Iterable<SetAsideHost> = []) {
    const sorted = [...hosts].sort((a, b) => compareText(a.id, b.id));
    this.hosts = Object.freeze(sorted);
    this.setAside = Object.freeze([...setAside].sort((a, b) => compareText(a.id, b.id)));
    for (const host of this.setAside) {
      this.#setAsideById.set(host.id, host);
      for (const mac of host.macs) if (!this.#setAsideByMac.has(mac)) this.#setAsideByMac.set(mac, host);
    }
    for (const host of sorted) {
      if (this.#byId.has(host.id)) throw new Error(`Inventory: host ${host.id} given twice`);
      this.#byId.set(host.id, host);
      for (const mac of host.macs) {
        if (!this.#byMac.has(mac)) this.#byMac.set(mac, host);
      }
      const sipOwner = sipOwnerKey(host);
      if (sipOwner !== undefined) pushTo(this.#bySipOwner, sipOwner, host);
    }
    const known = (host: Host): boolean => host.cpus !== undefined && host.memoryBytes !== undefined;
    // Sorting is stable and `sorted` is in id order, so sizes alone put equal sizes in id order.
    this.#sized = sorted.filter(known).sort(compareSizes);
    this.#sized.forEach((host, rank) => this.#sizeRank.set(host.id, rank));
    this.#sizes = rankedSizes(this.#sized);
    this.#unknownResources = Object.freeze(sorted.filter((host) => !known(host)));
  }

  /** Number of hosts. */
  get size(): number {
    return this.hosts.length;
  }

  /**
   * Whether `other` holds the same hosts with the same facts, and sets the same hosts aside for the
   * same reasons: a feed that reads every BMH again, or an informer relaying a status refresh that
   * changed nothing metalsynth reads, makes one.
   */
  sameHosts(other: Inventory): boolean {
    return (
      other === this ||
      (this.changesTo(other).length === 0 && JSON.stringify(this.setAside) === JSON.stringify(other.setAside))
    );
  }

  /**
   * The hosts that differ in `other`, in id order: changed (both sides), added (`after` only) or
   * removed (`before` only).
   */
  changesTo(other: Inventory): HostChange[] {
    const changes: HostChange[] = [];
    const [mine, theirs] = [this.hosts, other.hosts];
    let next = 0;
    for (const before of mine) {
      for (; next < theirs.length && compareText(theirs[next]!.id, before.id) < 0; next++) {
        changes.push({ after: theirs[next]! });
      }
      const after = theirs[next];
      if (after?.id === before.id) {
        next++;
        if (!sameHost(before, after)) changes.push({ before, after });
      } else changes.push({ before });
    }
    for (; next < theirs.length; next++) changes.push({ after: theirs[next]! });
    return changes;
  }

  /** Whether `other` lists the same hosts in the same best-fit order, so ranks mean the same there. */
  sameBestFitOrder(other: Inventory): boolean {
    return (
      other.#sized.length === this.#sized.length &&
      this.#sized.every((host, rank) => other.#sized[rank]?.id === host.id)
    );
  }

  /**
   * Best-fit ranks of this inventory covering every host that ranks `from`…`to` of `before`'s order
   * could hold after the change from `before` to this inventory: between the hosts just outside the
   * old range, and to the end when the old range reached it. An empty range comes out with `to <
   * from`.
   */
  coveringRanks(before: Inventory, from: number, to: number): [number, number] {
    const previous = from > 0 ? before.#sized[from - 1] : undefined;
    const last = before.#sized[to];
    return [
      previous === undefined ? 0 : this.#ranksUpTo(previous),
      last === undefined || to >= before.#sized.length - 1
        ? this.#sized.length - 1
        : this.#ranksUpTo(last) - 1,
    ];
  }

  /** How many hosts of known size come at or before `host`'s size and id in best-fit order. */
  #ranksUpTo(host: Host): number {
    const sized = this.#sized;
    return lowerBound(0, sized.length, (at) => compareBySize(sized[at]!, host) <= 0);
  }

  /** The host with id `namespace/name`. */
  byId(id: string): Host | undefined {
    return this.#byId.get(id);
  }

  /** The host owning `mac`, which must already be normalised (`normalizeMac`). */
  byMac(mac: string): Host | undefined {
    return this.#byMac.get(mac);
  }

  /** The set-aside host of id `id`, to say why a lock's host can't serve. */
  setAsideById(id: string): SetAsideHost | undefined {
    return this.#setAsideById.get(id);
  }

  /** The set-aside host that has `mac` (normalised), to say why a CR can't have it. */
  setAsideByMac(mac: string): SetAsideHost | undefined {
    return this.#setAsideByMac.get(mac);
  }

  /**
   * The known MAC nearest to `mac` by edit distance, for "did you mean" messages; ties go to the
   * smaller MAC, then the smaller host id. Fast for typos whatever the inventory's size (see
   * {@link ClosestMac}); its tables are built on the first call.
   */
  closestMac(mac: string): KnownMac | undefined {
    this.#closestMac ??= new ClosestMac(this.hosts, this.#byMac);
    return this.#closestMac.find(mac);
  }

  /**
   * Hosts whose labels satisfy `selector`, sorted by id. Candidates come from the label index: the
   * smallest set named by a `matchLabels` entry or an `In`/`Exists` expression, then filtered by the
   * full selector. Only selectors made of `NotIn`/`DoesNotExist` alone (or empty) scan every host.
   */
  matching(selector: LabelSelector): readonly Host[] {
    // A hub's SIPClusters share a few selectors, and the webhook asks again for each review.
    const key = JSON.stringify(selector);
    let hosts = this.#matching.get(key);
    if (hosts === undefined) {
      hosts = Object.freeze(
        this.#narrowest(selector).filter((host) => matchesSelector(host.labels, selector)),
      );
      if (this.#matching.size >= MATCHING_REMEMBERED) this.#matching.clear();
      this.#matching.set(key, hosts);
    }
    return hosts;
  }

  #narrowest(selector: LabelSelector): readonly Host[] {
    // Each option is a size plus a thunk, so an `In` union is only built if it wins.
    let best: { size: number; hosts: () => readonly Host[] } | undefined;
    const offer = (size: number, hosts: () => readonly Host[]): void => {
      if (best === undefined || size < best.size) best = { size, hosts };
    };
    for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
      const hosts = this.#labelIndex(key).byValue.get(value) ?? NO_HOSTS;
      offer(hosts.length, () => hosts);
    }
    for (const requirement of selector.matchExpressions ?? []) {
      if (requirement.operator === "Exists") {
        const hosts = this.#labelIndex(requirement.key).hosts;
        offer(hosts.length, () => hosts);
      } else if (requirement.operator === "In") {
        const values = this.#labelIndex(requirement.key).byValue;
        const lists = [...new Set(requirement.values ?? [])].map((value) => values.get(value) ?? NO_HOSTS);
        const size = lists.reduce((total, list) => total + list.length, 0);
        // A host has one value per key, so the lists are disjoint: concatenating and sorting is a union.
        offer(size, () => lists.flat().sort((a, b) => compareText(a.id, b.id)));
      }
    }
    return best ? best.hosts() : this.hosts;
  }

  #labelIndex(key: string): LabelIndex {
    let index = this.#byLabelKey.get(key);
    if (index === undefined) {
      const byValue = new Map<string, Host[]>();
      const hosts: Host[] = [];
      for (const host of this.hosts) {
        // Own labels only: a key such as "constructor" names no host.
        if (!Object.hasOwn(host.labels, key)) continue;
        pushTo(byValue, host.labels[key]!, host);
        hosts.push(host);
      }
      index = { byValue, hosts };
      if (this.#byLabelKey.size >= LABEL_KEYS_REMEMBERED) this.#byLabelKey.clear();
      this.#byLabelKey.set(key, index);
    }
    return index;
  }

  /**
   * Best-fit candidates for one planning run (see {@link BestFit}): a whole site's, or the candidates
   * a trace's turns placed again share (`ReplanCandidates`). Made without touching the hosts;
   * what it takes is an array the size of the sized hosts.
   */
  bestFit(): BestFit {
    return new BestFit(this.#sized, this.#sizeRank, this.#sizes);
  }

  /** The position of `host` in best-fit order; `undefined` when its cpus or memory are unknown. */
  bestFitRank(host: Host): number | undefined {
    return this.#sizeRank.get(host.id);
  }

  /**
   * The host with id `id` and its best-fit rank (see {@link bestFitRank}), in one lookup for a host
   * of known size: a cascade asks both of every claim it moves.
   */
  rankedById(id: string): { readonly host: Host; readonly rank: number | undefined } | undefined {
    const rank = this.#sizeRank.get(id);
    const host = rank === undefined ? this.#byId.get(id) : this.#sized[rank];
    return host && { host, rank };
  }

  /** The rank of the last host in best-fit order (-1 when no host's size is known). */
  lastBestFitRank(): number {
    return this.#sized.length - 1;
  }

  /** Hosts whose SIP labels name the SIPCluster `namespace/name`, sorted by id. */
  ownedBySip(cluster: string): readonly Host[] {
    return this.#bySipOwner.get(cluster) ?? NO_HOSTS;
  }

  /** Hosts whose cpus or memory are unknown (no hardware details), sorted by id. */
  withUnknownResources(): readonly Host[] {
    return this.#unknownResources;
  }
}

/** Best-fit order: cpus, then memory, then id. */
function compareBySize(a: Host, b: Host): number {
  return compareSizes(a, b) || compareText(a.id, b.id);
}

function compareSizes(a: Host, b: Host): number {
  return (a.cpus ?? 0) - (b.cpus ?? 0) || (a.memoryBytes ?? 0) - (b.memoryBytes ?? 0);
}

/**
 * The cpus and memory of hosts in best-fit order, by position, side by side in typed arrays: a
 * best-fit walk compares sizes at positions it jumps between, and reading them from the hosts
 * themselves, scattered over the heap, cost a webhook review a cache miss a comparison.
 */
interface RankedSizes {
  readonly cpus: Float64Array;
  readonly memory: Float64Array;
}

function rankedSizes(sized: readonly Host[]): RankedSizes {
  const cpus = new Float64Array(sized.length);
  const memory = new Float64Array(sized.length);
  sized.forEach((host, rank) => {
    cpus[rank] = host.cpus ?? 0;
    memory[rank] = host.memoryBytes ?? 0;
  });
  return { cpus, memory };
}

/**
 * Hosts with known cpus and memory in best-fit order (cpus ascending, then memory, then id), for one
 * planning run. A host given to {@link take} is never visited again: its position points past itself,
 * and chains of taken positions are shortened as they are walked (union-find with path compression).
 * Clusters fill the smallest fitting hosts first, so without this every request re-walked every host
 * taken before it, and planning 10,000 clusters was quadratic.
 */
export class BestFit {
  readonly #sized: readonly Host[];
  readonly #rank: ReadonlyMap<string, number>;
  readonly #sizes: RankedSizes;
  /** Position → 0 while not taken, else one more than a later position to continue from. */
  readonly #next: Int32Array;

  constructor(sized: readonly Host[], rank: ReadonlyMap<string, number>, sizes: RankedSizes) {
    this.#sized = sized;
    this.#rank = rank;
    this.#sizes = sizes;
    this.#next = new Int32Array(sized.length);
  }

  /** Removes `host` from every later {@link firstFitting}; hosts of unknown size are not listed anyway. */
  take(host: Host): void {
    const rank = this.#rank.get(host.id);
    if (rank !== undefined && this.#next[rank] === 0) this.#next[rank] = rank + 2;
  }

  /**
   * The first position at or after `from` of a host of at least `minCpus` CPUs and
   * `minMemoryBytes` memory in (cpus, memory) order: a host with exactly `minCpus` but less memory
   * comes before it, one with more CPUs and less memory after it. Every position after it holds a
   * host at least as large, so a list of hosts in best-fit order starts its hosts of that size at
   * the first whose position is this one or after.
   */
  firstOfSize(minCpus: number, minMemoryBytes: number, from = 0): number {
    const { cpus, memory } = this.#sizes;
    return lowerBound(from, cpus.length, (at) => {
      const has = cpus[at]!;
      return has < minCpus || (has === minCpus && memory[at]! < minMemoryBytes);
    });
  }

  /** The CPUs of the host at best-fit position `rank`. */
  cpusAt(rank: number): number {
    return this.#sizes.cpus[rank] ?? 0;
  }

  /** The memory of the host at best-fit position `rank`. */
  memoryAt(rank: number): number {
    return this.#sizes.memory[rank] ?? 0;
  }

  /**
   * The first host not taken with at least `minCpus` CPUs and `minMemoryBytes` memory, in best-fit
   * order, that `accepts` (which learns its position, and may {@link take} the hosts it turns
   * down). `scanned` learns the positions the walk covered (see {@link Inventory.bestFitRank}),
   * taken ones included: what the caller chose depended on every host there, and on none after. A
   * walk with a callback rather than a generator: a webhook review walks twice for each of hundreds
   * of turns it places again, and the generators were about a sixth of what it allocated
   * (decision 0051).
   */
  firstFitting(
    minCpus: number,
    minMemoryBytes: number,
    accepts: (host: Host, rank: number) => boolean,
    scanned?: (from: number, to: number) => void,
  ): Host | undefined {
    return this.firstFittingFrom(this.firstOfSize(minCpus, minMemoryBytes), minMemoryBytes, accepts, scanned);
  }

  /**
   * {@link firstFitting} from `low`, the {@link firstOfSize} of what is asked, which the caller
   * searched for already (a walk that merges other lists into this one starts them there too).
   */
  firstFittingFrom(
    low: number,
    minMemoryBytes: number,
    accepts: (host: Host, rank: number) => boolean,
    scanned?: (from: number, to: number) => void,
  ): Host | undefined {
    const sized = this.#sized;
    const { memory } = this.#sizes;
    for (let index = this.#free(low); index < sized.length; index = this.#free(index + 1)) {
      if (memory[index]! >= minMemoryBytes && accepts(sized[index]!, index)) {
        scanned?.(low, index);
        return sized[index];
      }
    }
    scanned?.(low, sized.length - 1);
    return undefined;
  }

  /** The first position at or after `index` that is not taken. */
  #free(index: number): number {
    const next = this.#next;
    let end = index;
    while (end < next.length && next[end] !== 0) end = next[end]! - 1;
    for (let at = index; at !== end && at < next.length;) {
      const after = next[at]! - 1;
      next[at] = end + 1;
      at = after;
    }
    return end;
  }
}
