import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson, hash8 } from "./content-hash.ts";

describe("canonicalJson", () => {
  it.each([
    [{ b: 1, a: [3, { d: null, c: "x" }] }, '{"a":[3,{"c":"x","d":null}],"b":1}'],
    [{ keep: 1, drop: undefined, fn: () => 1 }, '{"keep":1}'],
    [[undefined, 1], "[null,1]"],
    ["text", '"text"'],
    [null, "null"],
    [{ when: { toJSON: () => "2020-01-01" } }, '{"when":"2020-01-01"}'],
    // Code-unit order, not locale order: "B" (0x42) sorts before "a" (0x61).
    [{ a: 1, B: 2 }, '{"B":2,"a":1}'],
  ])("%j → %s", (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it("refuses values without a JSON form", () => {
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    expect(() => canonicalJson({ big: 1n })).toThrow(/BigInt/);
  });
});

describe("hash8", () => {
  it("is the first 8 hex digits of sha256 over the canonical JSON", () => {
    const expected = createHash("sha256").update('{"a":1,"b":[1,2]}').digest("hex").slice(0, 8);
    expect(hash8({ b: [1, 2], a: 1 })).toBe(expected);
    expect(hash8({ b: [1, 2], a: 1 })).toMatch(/^[0-9a-f]{8}$/);
  });

  it("ignores key order and changes with any value", () => {
    expect(hash8({ x: { p: 1, q: 2 }, y: "s" })).toBe(hash8({ y: "s", x: { q: 2, p: 1 } }));
    expect(hash8({ ip: "10.0.0.1" })).not.toBe(hash8({ ip: "10.0.0.2" }));
    expect(hash8([1, 2])).not.toBe(hash8([2, 1]));
  });
});
