import { describe, expect, it } from "vitest";
import { everyFitting, makeHost, makeInventory } from "../../../test/builders/inventory.ts";
import type { Host } from "../../inventory/host.ts";
import { MergedCandidates, type RankedHosts } from "./merged-candidates.ts";

const GI = 2 ** 30;

/** Hosts of every size pairing, so lists hold runs with more CPUs and less memory than asked. */
const hosts: Host[] = [];
for (const cpus of [4, 8, 16, 32])
  for (const memory of [8, 16, 32, 64])
    for (const copy of [0, 1])
      hosts.push(makeHost({ name: `h-${cpus}-${memory}-${copy}`, cpus, memoryBytes: memory * GI }));
const inventory = makeInventory(hosts);
const rank = (host: Host) => inventory.bestFitRank(host)!;
const byRank = (list: readonly Host[]) => [...list].sort((a, b) => rank(a) - rank(b));
const ranked = (list: readonly Host[], keptFrom?: (index: number) => number): RankedHosts => {
  const sorted = byRank(list);
  return { hosts: sorted, ranks: sorted.map(rank), ...(keptFrom && { keptFrom }) };
};

describe("MergedCandidates.firstFitting", () => {
  // Extra lists kept out of the base walk: every third host, of which a walk keeps the even indexes
  // only (as a turn placed again keeps only the hosts of later turns), and every fifth host.
  const thirds = hosts.filter((_, at) => at % 3 === 0);
  const fifths = hosts.filter((_, at) => at % 5 === 0 && at % 3 !== 0);
  const evenFrom = (index: number) => index + (index % 2);
  const keptThirds = byRank(thirds).filter((_, at) => at % 2 === 0);
  const claimed = new Set([hosts[7]!.id, hosts[20]!.id]);

  it.each([
    [0, 0],
    [8, 16],
    [8, 32],
    [16, 64],
    [4, 64],
    [32, 8],
    [64, 8],
  ])("walks the hosts of at least %i CPUs and %i GiB in best-fit order, each once", (cpus, memory) => {
    const base = inventory.bestFit();
    for (const host of [...thirds, ...fifths]) base.take(host);
    const candidates = new MergedCandidates(
      base,
      [ranked(thirds, evenFrom), ranked(fifths)],
      (host) => claimed.has(host.id),
      { takesFromBase: false },
    );
    const offered = new Set(
      [...hosts.filter((host) => !thirds.includes(host)), ...keptThirds].map((host) => host.id),
    );
    const expected = byRank(hosts).filter(
      (host) =>
        offered.has(host.id) &&
        !claimed.has(host.id) &&
        (host.cpus ?? 0) >= cpus &&
        (host.memoryBytes ?? 0) >= memory * GI,
    );
    expect(everyFitting(candidates, cpus, memory * GI).map((host) => host.id)).toEqual(
      expected.map((host) => host.id),
    );
  });

  it("tells accepts the best-fit rank of each host it offers, from the base or an extra list", () => {
    const base = inventory.bestFit();
    for (const host of [...thirds, ...fifths]) base.take(host);
    const candidates = new MergedCandidates(base, [ranked(thirds, evenFrom), ranked(fifths)], () => false, {
      takesFromBase: false,
    });
    const told: [string, number][] = [];
    candidates.firstFitting(0, 0, (host, at) => {
      told.push([host.id, at]);
      return false;
    });
    expect(told.length).toBeGreaterThan(thirds.length);
    expect(told).toEqual(told.map(([id]) => [id, rank(hosts.find((host) => host.id === id)!)]));
  });
});
