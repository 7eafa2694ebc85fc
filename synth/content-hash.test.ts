import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, hash8 } from "./content-hash.ts";

/**
 * canonicalJson as it was written before it was made one pass (decision 0057): every Job name
 * hashes it, so the two must agree on every value, or an upgrade would rename every Job.
 */
function reference(value: unknown): string {
  const prepared = jsonValue(value);
  if (prepared === undefined) throw new TypeError("no JSON form");
  if (prepared === null || typeof prepared !== "object") return JSON.stringify(prepared);
  if (Array.isArray(prepared))
    return `[${prepared.map((item: unknown) => (jsonValue(item) === undefined ? "null" : reference(item))).join(",")}]`;
  const members = Object.keys(prepared)
    .sort()
    .flatMap((key) => {
      const member: unknown = Reflect.get(prepared, key);
      return jsonValue(member) === undefined ? [] : [`${JSON.stringify(key)}:${reference(member)}`];
    });
  return `{${members.join(",")}}`;
}

function jsonValue(value: unknown): unknown {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return undefined;
  if (value !== null && typeof value === "object") {
    const toJSON: unknown = Reflect.get(value, "toJSON");
    if (typeof toJSON === "function") return jsonValue(Reflect.apply(toJSON, value, []));
  }
  return value;
}

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
    // An own "__proto__" key, as JSON.parse makes it, is data like any other key.
    [JSON.parse('{"b":2,"__proto__":{"a":1}}'), '{"__proto__":{"a":1},"b":2}'],
  ])("%j → %s", (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it("writes what the list-joining writer wrote, for any value", () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.jsonValue(),
        fc.constantFrom(undefined, null, "", "0", "10", "2"),
        fc.array(tie("node")),
        fc.dictionary(fc.constantFrom("a", "B", "10", "2", "é", "key", ""), tie("node")),
      ),
    })).node;
    fc.assert(
      fc.property(value, (found) => {
        if (jsonValue(found) === undefined) return;
        expect(canonicalJson(found)).toBe(reference(found));
      }),
      { numRuns: 500 },
    );
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
