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

function expectDefinition(inventory: Inventory, mac: string): void {
  const found = inventory.closestMac(mac);
  expect(found && `${found.mac} ${found.host.id}`, mac).toBe(closestByDefinition(inventory, mac));
}

const HEX = [..."0123456789abcdef"];
/** Few distinct digits, so MACs often land at equal distances and ties decide. */
const FEW = ["0", "1", "a", "f"];

function macOf(digits: readonly string[], prefix = ""): fc.Arbitrary<string> {
  const octets = 6 - (prefix === "" ? 0 : prefix.split(":").length);
  const digit = fc.constantFrom(...digits);
  return fc
    .array(fc.tuple(digit, digit), { minLength: octets, maxLength: octets })
    .map((pairs) =>
      [...(prefix === "" ? [] : [prefix]), ...pairs.map(([high, low]) => high + low)].join(":"),
    );
}

/** Normalised MACs: random, from few digits, or sharing a vendor prefix as real inventories do. */
const knownMac = fc.oneof(
  macOf(HEX),
  macOf(FEW),
  macOf(HEX, "0c:00:00"),
  macOf(FEW, "b8:ce:f6"),
  macOf(FEW, "0c:00:00:00"),
);

/** `mac` with the characters at `changes` (positions, any character) replaced, a typo or worse. */
function mistype(mac: string, changes: readonly [number, string][]): string {
  const characters = [...mac];
  for (const [position, character] of changes) characters[position % Math.max(1, mac.length)] = character;
  return characters.join("");
}

/** What a CR may hold where a MAC belongs: the API server's pattern is not always in front of us. */
const malformed = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: fc.constantFrom(...HEX, ":"), minLength: 60, maxLength: 80 }),
  knownMac.map((mac) => mac.toUpperCase()),
  knownMac.map((mac) => mac.replaceAll(":", "-")),
  knownMac.map((mac) => mac.slice(0, 14)),
  knownMac.map((mac) => `${mac}:00`),
  knownMac.map((mac) => ` ${mac}`),
  fc.constant(""),
);

/** A MAC asked about: a typo of a known one, any normalised MAC, or something malformed. */
function wantedMac(known: readonly string[]): fc.Arbitrary<string> {
  const typo = fc
    .tuple(
      fc.nat(),
      fc.array(fc.tuple(fc.nat(16), fc.constantFrom(...HEX, ":")), { minLength: 1, maxLength: 3 }),
    )
    .map(([index, changes]) => mistype(known[index % known.length] ?? "", changes));
  return fc.oneof(...(known.length > 0 ? [typo] : []), knownMac, malformed);
}

/** Hosts of 1 to 3 NICs each. */
const nicsPerHost = fc.array(fc.array(knownMac, { minLength: 1, maxLength: 3 }), { maxLength: 30 });

function inventoryOf(hosts: readonly (readonly string[])[], filler: readonly string[] = []): Inventory {
  return makeInventory(
    [...hosts, ...filler.map((mac) => [mac])].map((macs, index) => ({
      name: `node-${index}`,
      nics: macs.map((mac, nic) => ({ name: `eno${nic}`, mac })),
    })),
  );
}

/** 1,200 MACs numbered like a generated region's (`0c:00:00:HH:LL:NN`), so the trie is deep and dense. */
const FILLER = Array.from({ length: 1200 }, (_, index) =>
  ["0c", "00", "00", index >> 10, (index >> 2) & 255, index & 3]
    .map((part) => (typeof part === "string" ? part : part.toString(16).padStart(2, "0")))
    .join(":"),
);

describe("Inventory.closestMac", () => {
  it.each([
    ["a small inventory", [], 1000],
    ["a large, dense one", FILLER, 60],
  ])(
    "agrees with comparing every MAC, for typos, far MACs and malformed ones, ties included: %s",
    (_name, filler, runs) => {
      fc.assert(
        fc.property(
          nicsPerHost.chain((hosts) => {
            const known = [...hosts.flat(), ...filler];
            return fc.tuple(fc.constant(hosts), fc.array(wantedMac(known), { minLength: 1, maxLength: 5 }));
          }),
          ([hosts, wanted]) => {
            const inventory = inventoryOf(hosts, filler);
            for (const mac of wanted) expectDefinition(inventory, mac);
          },
        ),
        { numRuns: runs },
      );
    },
  );

  it("agrees with comparing every MAC when known MACs differ in length (hand-made inventories)", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", "0", ":"), maxLength: 8 });
    fc.assert(
      fc.property(
        fc.array(fc.array(text, { minLength: 1, maxLength: 2 }), { maxLength: 12 }),
        text,
        (hosts, mac) => {
          expectDefinition(inventoryOf(hosts), mac);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("answers the host with the lowest id when hosts share the nearest MAC", () => {
    const inventory = inventoryOf([["00:00:00:00:00:0a"], ["00:00:00:00:00:0a"], ["ff:ff:ff:ff:ff:ff"]]);
    expect(inventory.closestMac("00:00:00:00:00:0b")?.host.id).toBe("metal3/node-0");
  });

  it("finds a MAC far from every known one", () => {
    const inventory = inventoryOf([], FILLER);
    expectDefinition(inventory, "aa:bb:cc:dd:ee:ff");
  });

  it("answers nothing for an empty inventory", () => {
    expect(makeInventory([]).closestMac("00:00:00:00:00:0b")).toBeUndefined();
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
