import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeInventory } from "../../test/builders/inventory.ts";
import { compareText } from "../issue.ts";
import { editDistance } from "../mac.ts";
import type { Inventory } from "./inventory.ts";

/** The definition closestMac must agree with: every MAC compared, ties by MAC, then host id. */
function closestByDefinition(inventory: Inventory, mac: string): string | undefined {
  const ranked = inventory.hosts
    .flatMap((host) => host.macs.map((candidate) => ({ candidate, host: host.id })))
    .map((entry) => ({ ...entry, distance: editDistance(mac, entry.candidate) }))
    .sort(
      (a, b) =>
        a.distance - b.distance || compareText(a.candidate, b.candidate) || compareText(a.host, b.host),
    );
  return ranked[0] && `${ranked[0].candidate} ${ranked[0].host}`;
}

// Few distinct digits, so random MACs land within one or two digits of each other often.
const digit = fc.constantFrom("0", "1", "a", "f");
const mac = fc
  .array(fc.tuple(digit, digit), { minLength: 6, maxLength: 6 })
  .map((pairs) => pairs.map(([high, low]) => high + low).join(":"));

/** Hosts with 1,001 more MACs, enough for closestMac to look neighbours up instead of scanning. */
const FILLER = Array.from({ length: 1001 }, (_, index) => ({
  name: `filler-${index}`,
  nics: [
    {
      name: "eno1",
      mac: `0${index % 2}:${(index >> 8).toString(16).padStart(2, "0")}:aa:aa:aa:${(index & 255).toString(16).padStart(2, "0")}`,
    },
  ],
}));

describe("Inventory.closestMac", () => {
  it.each([
    ["a small inventory (compared MAC by MAC)", [], 2000],
    ["a large inventory (neighbours looked up)", FILLER, 200],
  ])("agrees with comparing every MAC, near and far, including ties: %s", (_name, filler, runs) => {
    fc.assert(
      fc.property(
        fc.array(fc.array(mac, { minLength: 1, maxLength: 3 }), { maxLength: 12 }),
        mac,
        (macs, wanted) => {
          const inventory = makeInventory([
            ...filler,
            ...macs.map((nics, index) => ({
              name: `node-${index}`,
              nics: nics.map((nicMac, nic) => ({ name: `eno${nic}`, mac: nicMac })),
            })),
          ]);
          const found = inventory.closestMac(wanted);
          expect(found && `${found.mac} ${found.host.id}`).toBe(closestByDefinition(inventory, wanted));
        },
      ),
      { numRuns: runs },
    );
  });

  it("compares non-normalised input the slow way, with the same answer", () => {
    const inventory = makeInventory([{ name: "a", nics: [{ name: "eno1", mac: "00:00:00:00:00:0a" }] }]);
    expect(inventory.closestMac("00-00-00-00-00-0b")?.mac).toBe("00:00:00:00:00:0a");
  });
});

describe("editDistance with a limit", () => {
  const text = fc.string({ unit: fc.constantFrom("a", "b", ":"), maxLength: 10 });
  it("is the distance when within the limit, and limit + 1 beyond it", () => {
    fc.assert(
      fc.property(text, text, fc.nat(6), (a, b, limit) => {
        expect(editDistance(a, b, limit)).toBe(Math.min(editDistance(a, b), limit + 1));
      }),
    );
  });
});
