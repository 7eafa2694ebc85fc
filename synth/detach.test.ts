import { describe, expect, it } from "vitest";
import { detach } from "./detach.ts";

describe("detach", () => {
  it("keeps every code unit of short and long texts, lone surrogates and astral characters included", () => {
    const texts = [
      "",
      "metal3/r0001",
      "metal3/r0001n06",
      "vino.airshipit.org/rack",
      `bad-\ud800-${"x".repeat(20)}`,
      `${"\udc00".repeat(7)}\ud83d\ude80${"é".repeat(12)}`,
      `quote " and backslash \\ and newline \n`.repeat(3),
    ];
    for (const text of texts) {
      const copy = detach(`  ${text}  `.slice(2, -2));
      expect(copy).toBe(text);
      expect(copy.length).toBe(text.length);
    }
  });
});
