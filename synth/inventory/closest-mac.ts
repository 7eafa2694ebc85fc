/**
 * The known MAC nearest to one that matches no host, for `mac-unknown`'s "did you mean" (SPEC §2).
 * Reviewing a CR with a mistyped MAC is the webhook's most common denial, so it must not cost a
 * comparison with every MAC of a region's inventory.
 */
import { compareText } from "../issue.ts";
import { editDistance } from "../mac.ts";
import type { Host } from "./host.ts";

/** A MAC as `normalizeMac` writes it. */
const NORMALISED_MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
/** Where the hex digits of a normalised MAC are. */
const MAC_DIGITS = [0, 1, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16] as const;
const HEX_DIGITS = "0123456789abcdef";
/** Character classes counted per MAC: the 16 hex digits, and everything else. */
const CLASSES = 17;
/**
 * Below this many MACs, comparing with each is cheaper than looking up the ~15,000 MACs within two
 * digits of the one asked for.
 */
const NEIGHBOURS_FROM = 1000;

/** A known MAC and its host. */
export interface KnownMac {
  readonly mac: string;
  readonly host: Host;
}

/**
 * Answers "which known MAC is nearest to this one" by edit distance; ties go to the smaller MAC,
 * then the smaller host id. Built once per inventory, on first use.
 *
 * - Between two normalised MACs (colons at the same places) an edit distance of 1 or 2 is exactly a
 *   difference in 1 or 2 hex digits, so in a large inventory those neighbours are looked up in the
 *   MAC index: typos cost the same whatever the inventory's size.
 * - A MAC with no host within two digits is compared with every MAC, cheaply: the number of
 *   differing characters bounds the distance from above, and the difference of the characters'
 *   counts (half of it) from below, so the exact distance is computed for few candidates.
 */
export class ClosestMac {
  readonly #byMac: ReadonlyMap<string, Host>;
  /** Every known MAC with its host, in host-id then MAC order (the order ties were broken in). */
  readonly #known: KnownMac[] = [];
  /** Per known MAC, {@link CLASSES} character counts. */
  readonly #counts: Uint8Array;

  constructor(hosts: readonly Host[], byMac: ReadonlyMap<string, Host>) {
    this.#byMac = byMac;
    for (const host of hosts) for (const mac of host.macs) this.#known.push({ mac, host });
    this.#counts = new Uint8Array(this.#known.length * CLASSES);
    this.#known.forEach((known, index) => countClasses(known.mac, this.#counts, index * CLASSES));
  }

  /** The known MAC nearest to `mac` (itself when known), or `undefined` for an empty inventory. */
  find(mac: string): KnownMac | undefined {
    const exact = this.#byMac.get(mac);
    if (exact) return { mac, host: exact };
    if (this.#known.length > NEIGHBOURS_FROM && NORMALISED_MAC.test(mac)) {
      const near = this.#digitNeighbour(mac, 1) ?? this.#digitNeighbour(mac, 2);
      if (near) return near;
    }
    return this.#scan(mac);
  }

  /** The smallest known MAC that differs from `mac` in exactly `digits` (1 or 2) hex digits. */
  #digitNeighbour(mac: string, digits: 1 | 2): KnownMac | undefined {
    let best: string | undefined;
    const consider = (candidate: string): void => {
      if ((best === undefined || candidate < best) && this.#byMac.has(candidate)) best = candidate;
    };
    const replace = (text: string, at: number, digit: string) =>
      text.slice(0, at) + digit + text.slice(at + 1);
    MAC_DIGITS.forEach((first, index) => {
      for (const one of HEX_DIGITS) {
        if (one === mac[first]) continue;
        const once = replace(mac, first, one);
        if (digits === 1) {
          consider(once);
          continue;
        }
        for (const second of MAC_DIGITS.slice(index + 1)) {
          for (const two of HEX_DIGITS) if (two !== mac[second]) consider(replace(once, second, two));
        }
      }
    });
    const host = best === undefined ? undefined : this.#byMac.get(best);
    return best === undefined || host === undefined ? undefined : { mac: best, host };
  }

  #scan(mac: string): KnownMac | undefined {
    // Substituting each differing character is an edit script: the fewest differing characters of
    // any equally long MAC is a distance the answer can't exceed.
    let limit = Number.POSITIVE_INFINITY;
    for (const known of this.#known) {
      if (known.mac.length === mac.length) limit = Math.min(limit, differingCharacters(mac, known.mac));
    }
    // 32-bit counts: the MAC asked about is not necessarily 17 characters long.
    const wanted = new Uint32Array(CLASSES);
    countClasses(mac, wanted, 0);
    let best: (KnownMac & { distance: number }) | undefined;
    this.#known.forEach((known, index) => {
      // An edit changes at most two character counts by one each: half the counts' difference is a
      // distance no edit script beats.
      if (countDifference(wanted, this.#counts, index * CLASSES) > 2 * limit) return;
      const distance = editDistance(mac, known.mac, limit);
      if (distance > limit) return;
      if (
        best === undefined ||
        distance < best.distance ||
        (compareText(known.mac, best.mac) || compareText(known.host.id, best.host.id)) < 0
      ) {
        best = { ...known, distance };
        limit = distance;
      }
    });
    return best && { mac: best.mac, host: best.host };
  }
}

function countClasses(text: string, counts: Uint8Array | Uint32Array, at: number): void {
  for (let index = 0; index < text.length; index++) {
    const digit = HEX_DIGITS.indexOf(text[index] ?? "");
    const slot = at + (digit === -1 ? CLASSES - 1 : digit);
    counts[slot] = (counts[slot] ?? 0) + 1;
  }
}

function countDifference(wanted: Uint32Array, counts: Uint8Array, at: number): number {
  let difference = 0;
  for (let slot = 0; slot < CLASSES; slot++)
    difference += Math.abs((wanted[slot] ?? 0) - (counts[at + slot] ?? 0));
  return difference;
}

function differingCharacters(a: string, b: string): number {
  let differing = 0;
  for (let index = 0; index < a.length; index++) if (a.charCodeAt(index) !== b.charCodeAt(index)) differing++;
  return differing;
}
