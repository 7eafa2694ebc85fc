import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lowerBound } from "./lower-bound.ts";

describe("lowerBound", () => {
  it.each<[string, readonly number[], number, number, number, number]>([
    ["an empty range", [], 5, 0, 0, 0],
    ["the first at or after a value", [1, 3, 3, 7], 3, 0, 4, 1],
    ["past the end when every element comes before", [1, 3, 3, 7], 8, 0, 4, 4],
    ["the range's start when none comes before", [1, 3, 3, 7], 0, 0, 4, 0],
    ["only within [from, to)", [1, 3, 3, 7], 3, 2, 3, 2],
    ["nothing when from is past to", [1, 3], 2, 1, 0, 1],
  ])("finds %s", (_, list, value, from, to, expected) => {
    expect(lowerBound(from, to, (index) => list[index]! < value)).toBe(expected);
  });

  it("agrees with a scan of any sorted list", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20 })),
        fc.integer({ min: -1, max: 21 }),
        (raw, value) => {
          const list = [...raw].sort((a, b) => a - b);
          const scanned = list.findIndex((element) => element >= value);
          expect(lowerBound(0, list.length, (index) => list[index]! < value)).toBe(
            scanned === -1 ? list.length : scanned,
          );
        },
      ),
    );
  });
});
