import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameData } from "./same-data.ts";

describe("sameData", () => {
  it("compares plain data by value, whatever the key order", () => {
    expect(sameData({ a: [1, { b: "x" }], c: true }, { c: true, a: [1, { b: "x" }] })).toBe(true);
    expect(sameData({ a: [1, { b: "x" }] }, { a: [1, { b: "y" }] })).toBe(false);
    expect(sameData([1, 2], [2, 1])).toBe(false);
    expect(sameData({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameData([], {})).toBe(false);
    expect(sameData(null, {})).toBe(false);
  });

  it("takes a key holding undefined for an absent one, as optional fields are", () => {
    expect(sameData({ a: 1, ipv4: undefined }, { a: 1 })).toBe(true);
  });

  it("agrees with comparing the JSON of each side with sorted keys (property)", () => {
    const sortedJson = (value: unknown): string =>
      JSON.stringify(value, (_key, item: unknown) =>
        typeof item === "object" && item !== null && !Array.isArray(item)
          ? Object.fromEntries(Object.entries(item).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
          : item,
      );
    const data = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(data, data, (a, b) => {
        expect(sameData(a, b)).toBe(sortedJson(a) === sortedJson(b));
        expect(sameData(a, structuredClone(a))).toBe(true);
      }),
    );
  });
});
