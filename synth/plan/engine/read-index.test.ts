import { describe, expect, it } from "vitest";
import { makeInventory } from "../../../test/builders/inventory.ts";
import { EVERY_HOST_FACT, HOST_FACTS, type HostFacts } from "../../inventory/host-facts.ts";
import { ReadIndex } from "./read-index.ts";
import type { Reads } from "./reads.ts";

const GI = 2 ** 30;
// Best-fit ranks follow size: h1 (8 CPUs) 0, h2 (16) 1, h3 (32) 2; h4 has no hardware details.
const inventory = makeInventory([
  { name: "h1", cpus: 8, memoryBytes: 32 * GI, labels: { pool: "a" } },
  { name: "h2", cpus: 16, memoryBytes: 64 * GI, labels: { pool: "b" } },
  { name: "h3", cpus: 32, memoryBytes: 64 * GI, labels: { pool: "a" } },
  { name: "h4", cpus: undefined, labels: { pool: "a" } },
]);
const host = (name: string) => inventory.byId(`metal3/${name}`)!;

const reads = (read: Partial<Reads>): { reads: Reads } => ({
  reads: {
    hosts: new Set(),
    ranges: [],
    walks: [],
    matches: [],
    unsized: false,
    all: false,
    facts: HOST_FACTS.claim | HOST_FACTS.hardware,
    ...read,
  },
});

const index = new ReadIndex(
  [
    reads({ hosts: new Set(["metal3/h2"]) }), // 0: looked h2 up
    reads({ ranges: [[1, 2]] }), // 1: walked ranks 1–2 (h2, h3)
    reads({
      walks: [{ selector: { matchLabels: { pool: "a" } }, last: "metal3/h1" }],
      facts: HOST_FACTS.claim,
    }), // 2
    reads({ matches: [{ matchLabels: { pool: "a" } }] }), // 3: listed pool a
    reads({ unsized: true }), // 4: walked the hosts of unknown size
    reads({ all: true, facts: EVERY_HOST_FACT }), // 5: read every host
  ],
  inventory,
);

const readers = (name: string, facts: HostFacts, after = -1, drained = index.drained()) => {
  const found: number[] = [];
  index.readersOf(host(name), facts, after, drained, (position) => found.push(position));
  return found.sort((a, b) => a - b);
};

describe("ReadIndex", () => {
  it("names the turns that read a host's claim, by every shape a read takes", () => {
    expect(readers("h1", HOST_FACTS.claim)).toEqual([2, 5]);
    expect(readers("h2", HOST_FACTS.claim)).toEqual([0, 1, 5]);
    expect(readers("h3", HOST_FACTS.claim)).toEqual([1, 5]);
    expect(readers("h4", HOST_FACTS.claim)).toEqual([4, 5]);
  });

  it("passes over turns that read no fact that changed of a host they only walked past", () => {
    // Turn 2's walk read claims only; turn 1's range claims and hardware; a lookup reads everything.
    expect(readers("h1", HOST_FACTS.state)).toEqual([5]);
    expect(readers("h2", HOST_FACTS.state)).toEqual([0, 5]);
    expect(readers("h3", HOST_FACTS.hardware)).toEqual([1, 5]);
  });

  it("names the turns that listed a selector's matches when a matching host's labels change", () => {
    expect(readers("h3", HOST_FACTS.labels)).toEqual([3, 5]);
    expect(readers("h2", HOST_FACTS.labels)).toEqual([0, 5]);
  });

  it("names only turns after the position, and each list once per change", () => {
    expect(readers("h2", HOST_FACTS.claim, 0)).toEqual([1, 5]);
    const drained = index.drained();
    expect(readers("h2", HOST_FACTS.claim, 0, drained)).toEqual([1, 5]);
    // The range and every-host lists were given out: a later moved claim in them finds nothing new.
    expect(readers("h3", HOST_FACTS.claim, 0, drained)).toEqual([]);
  });
});
