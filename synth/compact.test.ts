import { describe, expect, it } from "vitest";
import { compact } from "./compact.ts";

describe("compact", () => {
  it("drops the keys whose value is undefined and keeps every other value, in the literal's order", () => {
    const kept = compact({ a: 1, b: undefined, c: null, d: false, e: 0, f: "", g: [] });
    expect(Object.keys(kept)).toEqual(["a", "c", "d", "e", "f", "g"]);
    expect(kept).toEqual({ a: 1, c: null, d: false, e: 0, f: "", g: [] });
  });

  it("gives the object the conditional spreads it replaces gave, key for key", () => {
    for (const namespace of ["metal3", undefined]) {
      for (const name of ["host-1", undefined]) {
        const spread = {
          uid: "u",
          ...(namespace !== undefined && { namespace }),
          ...(name === undefined ? {} : { name }),
          dryRun: false,
        };
        const compacted = compact({ uid: "u", namespace, name, dryRun: false });
        expect(JSON.stringify(Object.entries(compacted))).toBe(JSON.stringify(Object.entries(spread)));
      }
    }
  });
});
