import { describe, expect, it } from "vitest";
import { optionFlags, parseCommandArgs, type OptionSpec } from "./options.ts";
import { COMMANDS, commandUsage, type CommandName } from "./usage.ts";

const NAMES = Object.keys(COMMANDS) as CommandName[];

describe("parseCommandArgs", () => {
  const parse = (command: CommandName, ...argv: string[]) => parseCommandArgs(COMMANDS[command], argv);

  it("reads a list option's every word up to the next option, and again when repeated", () => {
    const { values } = parseCommandArgs(COMMANDS.validate, [
      "--specs",
      "a.yaml",
      "b.yaml",
      "--site",
      "s",
      "--specs",
      "c.yaml",
    ]);
    expect(values.site).toBe("s");
    expect(values.specs?.toSorted()).toEqual(["a.yaml", "b.yaml", "c.yaml"]);
  });

  it("types and checks a value from a few", () => {
    expect(parseCommandArgs(COMMANDS.diff, ["-o", "markdown"]).values.format).toBe("markdown");
    expect(() => parse("explain", "x", "--format=sarif")).toThrow('must be text, json or yaml, not "sarif"');
  });

  it.each([
    [[], undefined],
    [["--diff"], ""],
    [["--diff", "--site", "s"], ""],
    [["--diff", "old.lock.yaml"], "old.lock.yaml"],
    [["--diff=old.lock.yaml"], "old.lock.yaml"],
  ])("takes map's optional --diff value: %j", (argv, diff) => {
    expect(parseCommandArgs(COMMANDS.map, argv).values.diff).toBe(diff);
  });

  it("refuses --diff= with nothing after it", () => {
    expect(() => parse("map", "--diff=")).toThrow("--diff= needs a value");
  });

  it("gives operands to a command that takes them, and refuses them elsewhere", () => {
    expect(parse("release", "edge/h1", "--site", "s", "edge/h2").operands).toEqual(["edge/h1", "edge/h2"]);
    expect(() => parse("commit", "stray")).toThrow('unexpected argument "stray"');
    expect(() => parse("validate", "--stie", "s")).toThrow(/Unknown option '--stie'/);
  });
});

describe("the command table", () => {
  it.each(NAMES)("%s: the synopsis names exactly the options it declares", (command) => {
    const spec = COMMANDS[command];
    const named = new Set(spec.synopsis.match(/(?<![\w-])(--[a-z][a-z-]*|-[a-z])(?![\w-])/g) ?? []);
    const declared = Object.entries(spec.options).map(([name, option]) => optionFlags(name, option));
    // Each option by one of its names, and nothing the command does not take.
    for (const flags of declared)
      expect(
        flags.some((flag) => named.has(flag)),
        flags.join(", "),
      ).toBe(true);
    expect([...named].filter((flag) => !declared.flat().includes(flag))).toEqual([]);
  });

  it.each(NAMES)("%s: the synopsis's -o lists the formats it takes", (command) => {
    const options: Readonly<Record<string, OptionSpec>> = COMMANDS[command].options;
    const shown = /-o ([a-z|]+)/.exec(COMMANDS[command].synopsis)?.[1];
    expect(shown).toBe(options["format"]?.choices?.join("|"));
  });

  it.each(NAMES)("%s: --help lists every option it declares", (command) => {
    const help = commandUsage(command).split("\noptions:\n")[1] ?? "";
    for (const [name, option] of Object.entries(COMMANDS[command].options)) {
      const flags = optionFlags(name, option).join(", ");
      expect(help).toMatch(new RegExp(`^  ${flags}(?![\\w-])`, "m"));
    }
  });

  it("aligns the help's descriptions", () => {
    expect(commandUsage("validate")).toContain(
      "  --site DIR        site directory (default .)\n" + "  --specs GLOB…     spec files",
    );
    expect(commandUsage("validate")).toContain("  -o, --format FORMAT  text (default), json, github");
  });
});
