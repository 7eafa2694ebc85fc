/**
 * The known MAC nearest to one that matches no host, for `mac-unknown`'s "did you mean" (docs/contract.md §2).
 * Reviewing a CR with a mistyped MAC is the webhook's most common denial, so it must not cost a
 * comparison with every MAC of a region's inventory, whether the MAC asked about is a typo or far from
 * every known one (decision 0020).
 */
import { editDistance } from "../mac.ts";
import type { Host } from "./host.ts";
import { lowerBound } from "../lower-bound.ts";

/** A known MAC and its host. */
export interface KnownMac {
  readonly mac: string;
  readonly host: Host;
}

/**
 * Every `SPAN` characters (a MAC's `xx:` group) the index keeps, per prefix, which characters the MACs
 * starting with it have at each later position. More often would cost memory for little: within a
 * group the masks of the group's first prefix still bound well.
 */
const SPAN = 3;
/**
 * Longer than this, a text is no MAC at all, and the search's tables, which grow with its length,
 * would cost more than comparing it with each known MAC.
 */
const LONGEST_SEARCHED = 64;

/** A bit per character class: the 16 lowercase hex digits, `:`, and anything else. */
function classBit(char: number): number {
  if (char >= 0x30 && char <= 0x39) return 1 << (char - 0x30);
  if (char >= 0x61 && char <= 0x66) return 1 << (char - 0x61 + 10);
  return char === 0x3a ? 1 << 16 : 1 << 17;
}

/**
 * The prefixes of one length (a multiple of {@link SPAN}) of the sorted MACs: where each one's range
 * starts, and for each position from the prefix's end, the classes the range's MACs have there.
 */
interface PrefixMasks {
  readonly starts: Int32Array;
  readonly masks: Uint32Array;
}

/**
 * Answers "which known MAC is nearest to this one" by edit distance; ties go to the smaller MAC,
 * then the smaller host id. Built once per inventory, on first use.
 *
 * The distinct known MACs, sorted, form an implicit trie: the MACs that share a prefix are one range
 * of the array. A search walks it depth first, in MAC order, carrying the edit-distance row of the
 * prefix against the MAC asked about, and leaves a prefix once no MAC below it can be within the
 * distance allowed. It allows 0 edits, then 1, then 2…: the first MAC found is the nearest and, found
 * in MAC order, the smallest of the nearest.
 *
 * What no MAC below a prefix can beat is the prefix's row plus a bound for the rest. The rest is bounded
 * by the characters the MACs below have at each later position, kept for every prefix of a whole number
 * of `xx:` groups: a MAC far from every known one (`aa:bb:…` against a vendor's `0c:00:…`) is given up
 * on a few groups in, not compared with each MAC. When known MACs differ in length (only hand-made
 * inventories), the bound for the rest is their difference in length alone.
 */
export class ClosestMac {
  readonly #byMac: ReadonlyMap<string, Host>;
  /** The distinct known MACs in `compareText` order, which is the order of their characters' codes. */
  readonly #macs: readonly string[];
  readonly #shortest: number;
  readonly #longest: number;
  /** Per prefix length `SPAN × level`; empty when known MACs differ in length. */
  readonly #prefixes: readonly PrefixMasks[];

  /**
   * @param hosts the hosts whose MACs are known
   * @param byMac the host of each known MAC: the lowest host id when hosts share one, since the tie
   *   between them goes to it
   */
  constructor(hosts: readonly Host[], byMac: ReadonlyMap<string, Host>) {
    this.#byMac = byMac;
    // The default sort compares UTF-16 code units, as compareText does, without calling back per pair.
    const macs: string[] = [];
    for (const host of hosts) macs.push(...host.macs);
    macs.sort();
    let distinct = 0;
    for (const mac of macs) if (distinct === 0 || mac !== macs[distinct - 1]) macs[distinct++] = mac;
    macs.length = distinct;
    this.#macs = macs;
    let shortest = Number.POSITIVE_INFINITY;
    let longest = 0;
    for (const mac of this.#macs) {
      shortest = Math.min(shortest, mac.length);
      longest = Math.max(longest, mac.length);
    }
    this.#shortest = shortest;
    this.#longest = longest;
    this.#prefixes = shortest === longest ? prefixMasks(this.#macs) : [];
  }

  /** The known MAC nearest to `mac` (itself when known), or `undefined` for an empty inventory. */
  find(mac: string): KnownMac | undefined {
    const exact = this.#byMac.get(mac);
    if (exact) return { mac, host: exact };
    if (this.#macs.length === 0) return undefined;
    if (mac.length > LONGEST_SEARCHED) return this.#scan(mac);
    const search = new Search(mac, this.#macs, this.#shortest, this.#longest, this.#prefixes);
    // Every known MAC is within max(length) edits, so the loop ends; the first allowance that finds
    // one is the distance to the nearest.
    for (let allowed = 0; ; allowed++) {
      const found = search.first(allowed);
      const host = found === undefined ? undefined : this.#byMac.get(found);
      if (found !== undefined && host !== undefined) return { mac: found, host };
    }
  }

  /** {@link find} by comparing `mac` with every known MAC. */
  #scan(mac: string): KnownMac | undefined {
    let nearest: string | undefined;
    let distance = Number.POSITIVE_INFINITY;
    for (const known of this.#macs) {
      // In MAC order, a MAC at the same distance is not the smaller one: only a nearer one counts.
      const found = editDistance(mac, known, distance - 1);
      if (found < distance) {
        nearest = known;
        distance = found;
      }
    }
    const host = nearest === undefined ? undefined : this.#byMac.get(nearest);
    return nearest === undefined || host === undefined ? undefined : { mac: nearest, host };
  }
}

/**
 * The {@link PrefixMasks} of every prefix length `SPAN × level` of the sorted `macs`, all of one length.
 * A prefix's range starts where a MAC shares less than the prefix with the MAC before it. The deepest
 * prefixes' masks gather their MACs' characters; a shorter prefix's gather the longer prefixes it holds
 * (their own characters, then their masks), so each level costs what the level below it has, not N.
 */
function prefixMasks(macs: readonly string[]): PrefixMasks[] {
  const length = macs[0]?.length ?? 0;
  const shared = new Uint8Array(macs.length);
  for (let index = 1; index < macs.length; index++) {
    const previous = macs[index - 1] ?? "";
    const mac = macs[index] ?? "";
    let common = 0;
    while (common < length && previous.charCodeAt(common) === mac.charCodeAt(common)) common++;
    shared[index] = common;
  }
  const levels: PrefixMasks[] = [];
  for (let depth = 0; depth < length; depth += SPAN) {
    let count = 0;
    for (let index = 0; index < shared.length; index++)
      if (index === 0 || (shared[index] ?? 0) < depth) count++;
    const starts = new Int32Array(count);
    count = 0;
    for (let index = 0; index < shared.length; index++) {
      if (index === 0 || (shared[index] ?? 0) < depth) starts[count++] = index;
    }
    levels.push({ starts, masks: new Uint32Array(count * (length - depth)) });
  }
  for (let level = levels.length - 1; level >= 0; level--) {
    const { starts, masks } = levels[level] ?? { starts: new Int32Array(), masks: new Uint32Array() };
    const below = levels[level + 1];
    const depth = level * SPAN;
    const positions = length - depth;
    const count = below === undefined ? macs.length : below.starts.length;
    let node = -1;
    for (let member = 0; member < count; member++) {
      const start = below === undefined ? member : (below.starts[member] ?? 0);
      if (starts[node + 1] === start) node++;
      const mac = macs[start] ?? "";
      const own = below === undefined ? positions : SPAN;
      for (let position = 0; position < positions; position++) {
        const at = node * positions + position;
        const bits =
          position < own
            ? classBit(mac.charCodeAt(depth + position))
            : (below?.masks[member * (positions - SPAN) + position - SPAN] ?? 0);
        masks[at] = (masks[at] ?? 0) | bits;
      }
    }
  }
  return levels;
}

/** One lookup: the MAC asked about and the tables of the prefixes on the current path. */
class Search {
  readonly #wanted: Uint16Array;
  readonly #wantedClasses: Uint32Array;
  readonly #macs: readonly string[];
  readonly #shortest: number;
  readonly #longest: number;
  readonly #prefixes: readonly PrefixMasks[];
  /** Row length: one more than the MAC asked about is long. */
  readonly #width: number;
  /**
   * Row `depth` holds, for each `j`, the edit distance between the current prefix of that length and
   * the first `j` characters of the MAC asked about.
   */
  readonly #rows: Uint32Array;
  /**
   * Per level of {@link PrefixMasks}, for the current prefix of that level's length: row `position`
   * holds, for each `j`, the fewest edits between the characters of the MAC asked about from `j` on and
   * any MAC below that prefix from `position` on, if each position may hold any character its masks
   * allow (so no MAC below does better).
   */
  readonly #rests: Uint32Array[];

  constructor(
    mac: string,
    macs: readonly string[],
    shortest: number,
    longest: number,
    prefixes: readonly PrefixMasks[],
  ) {
    // UTF-16 code units, as editDistance compares them (Array.from(mac) would give code points).
    this.#wanted = new Uint16Array(mac.length);
    for (let index = 0; index < mac.length; index++) this.#wanted[index] = mac.charCodeAt(index);
    this.#wantedClasses = Uint32Array.from(this.#wanted, classBit);
    this.#macs = macs;
    this.#shortest = shortest;
    this.#longest = longest;
    this.#prefixes = prefixes;
    this.#width = mac.length + 1;
    this.#rows = new Uint32Array((longest + 1) * this.#width);
    for (let j = 0; j < this.#width; j++) this.#rows[j] = j;
    this.#rests = prefixes.map(() => new Uint32Array((longest + 1) * this.#width));
  }

  /** The smallest known MAC within `allowed` edits of the one asked about, if any. */
  first(allowed: number): string | undefined {
    return this.#below(0, this.#macs.length, 0, allowed);
  }

  /** The first MAC in `macs[from, to)`, which share their first `depth` characters, within `allowed`. */
  #below(from: number, to: number, depth: number, allowed: number): string | undefined {
    if (this.#bound(from, depth) > allowed) return undefined;
    const macs = this.#macs;
    let at = from;
    // A MAC that ends here sorts before the longer ones that start with it; it is the prefix itself.
    if ((macs[at]?.length ?? 0) === depth) {
      if ((this.#rows[depth * this.#width + this.#width - 1] ?? 0) <= allowed) return macs[at];
      at++;
    }
    while (at < to) {
      const char = macs[at]?.charCodeAt(depth) ?? 0;
      const end = this.#branchEnd(at, to, depth, char);
      this.#extend(depth, char);
      const found = this.#below(at, end, depth + 1, allowed);
      if (found !== undefined) return found;
      at = end;
    }
    return undefined;
  }

  /** Where the MACs of `macs[from, to)` with `char` at `depth` end: they come first, and sorted. */
  #branchEnd(from: number, to: number, depth: number, char: number): number {
    const macs = this.#macs;
    return lowerBound(from + 1, to, (at) => (macs[at]?.charCodeAt(depth) ?? 0) <= char);
  }

  /** Fills row `depth + 1` for the prefix of row `depth` followed by `char` (the Levenshtein recurrence). */
  #extend(depth: number, char: number): void {
    const rows = this.#rows;
    const width = this.#width;
    const wanted = this.#wanted;
    const previous = depth * width;
    const current = previous + width;
    rows[current] = depth + 1;
    for (let j = 1; j < width; j++) {
      const substitution = (rows[previous + j - 1] ?? 0) + (wanted[j - 1] === char ? 0 : 1);
      const insertion = (rows[previous + j] ?? 0) + 1;
      const deletion = (rows[current + j - 1] ?? 0) + 1;
      rows[current + j] = Math.min(substitution, insertion, deletion);
    }
  }

  /**
   * The fewest edits any known MAC starting with the current prefix, of length `depth`, whose MACs
   * start at `from`, can be from the MAC asked about. An edit script for whole MACs edits the prefix
   * into some first `j` characters, at least row[j] edits, and the rest into the rest: at least what
   * the masks of the rest allow, or their difference in length.
   */
  #bound(from: number, depth: number): number {
    const width = this.#width;
    const level = depth / SPAN;
    const prefixes = this.#prefixes[level];
    if (Number.isInteger(level) && prefixes !== undefined) this.#fillRest(level, prefixes, from, depth);
    const rest = this.#rests[Math.floor(level)];
    const rows = this.#rows;
    const fewestLeft = Math.max(0, this.#shortest - depth);
    const mostLeft = Math.max(0, this.#longest - depth);
    let bound = Number.POSITIVE_INFINITY;
    for (let j = 0; j < width; j++) {
      const wantedLeft = width - 1 - j;
      const restBound =
        rest === undefined
          ? Math.max(0, fewestLeft - wantedLeft, wantedLeft - mostLeft)
          : (rest[depth * width + j] ?? 0);
      bound = Math.min(bound, (rows[depth * width + j] ?? 0) + restBound);
    }
    return bound;
  }

  /**
   * Fills the {@link #rests} of `level` for the prefix of length `depth` whose MACs start at `from`:
   * the edit-distance recurrence from the end, where a position matches any character its mask holds.
   */
  #fillRest(level: number, prefixes: PrefixMasks, from: number, depth: number): void {
    const rest = this.#rests[level];
    if (rest === undefined) return;
    const width = this.#width;
    const length = this.#longest;
    const positions = length - depth;
    const node = findStart(prefixes.starts, from);
    const masks = prefixes.masks;
    const wantedClasses = this.#wantedClasses;
    for (let j = 0; j < width; j++) rest[length * width + j] = width - 1 - j;
    for (let position = length - 1; position >= depth; position--) {
      const mask = masks[node * positions + position - depth] ?? 0;
      const row = position * width;
      rest[row + width - 1] = length - position;
      for (let j = width - 2; j >= 0; j--) {
        const match = (mask & (wantedClasses[j] ?? 0)) === 0 ? 1 : 0;
        const substitution = (rest[row + width + j + 1] ?? 0) + match;
        const skipKnown = (rest[row + width + j] ?? 0) + 1;
        const skipWanted = (rest[row + j + 1] ?? 0) + 1;
        rest[row + j] = Math.min(substitution, skipKnown, skipWanted);
      }
    }
  }
}

/** The index of `from` in the ascending `starts`, where a prefix's range begins. */
function findStart(starts: Int32Array, from: number): number {
  // The last start at or before `from` (the first, when none is): one before the first after it.
  return lowerBound(1, starts.length, (at) => (starts[at] ?? 0) <= from) - 1;
}
