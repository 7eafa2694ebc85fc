import { describe, expect, it } from "vitest";
import { closest, didYouMean, normalizeArgs } from "./argv.ts";

describe("normalizeArgs", () => {
  it.each([
    [["-o=json"], ["-o", "json"]],
    [
      ["--output", "yaml"],
      ["--format", "yaml"],
    ],
    [["--output=json"], ["--format=json"]],
    [
      ["--format=json", "-o", "text"],
      ["--format=json", "-o", "text"],
    ],
    [
      ["--specs", "-o=x.yaml"],
      ["--specs", "-o", "x.yaml"],
    ],
  ])("reads %j as %j", (argv, parsed) => {
    expect(normalizeArgs(argv)).toEqual(parsed);
  });
});

describe("closest", () => {
  const commands = ["validate", "synth", "diff", "explain", "map", "release", "commit", "inventory"];

  it.each([
    ["synht", "synth"],
    ["vaildate", "validate"],
    ["explian", "explain"],
    ["inventroy", "inventory"],
    ["dif", "diff"],
  ])("%s → %s", (typed, meant) => {
    expect(closest(typed, commands)).toBe(meant);
  });

  it.each(["deploy", "x", "kubectl"])("suggests nothing far from every command: %s", (typed) => {
    expect(closest(typed, commands)).toBeUndefined();
  });

  it("words the suggestion for a message", () => {
    expect(didYouMean("--formt", ["--format", "--site"])).toBe(" (did you mean --format?)");
    expect(didYouMean("--zzz", ["--format", "--site"])).toBe("");
  });
});
