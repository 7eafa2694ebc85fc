/**
 * The README's CLI examples show real output: each line a `$ npx metalsynth …` block shows (but `…`)
 * is in what that command prints today, so a message change can't leave the README behind.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./harness.ts";
import { run } from "./run-cli.ts";

const README = readFileSync(path.join(REPO, "README.md"), "utf8");

/** Each `$ npx metalsynth validate …` line of the README, with the lines shown under it. */
function examples(): { args: string[]; shown: string[] }[] {
  const lines = README.split("\n");
  return lines.flatMap((line, index) => {
    const command = /^\$ npx metalsynth (validate .*)$/.exec(line);
    if (!command?.[1]) return [];
    const end = lines.findIndex((next, at) => at > index && (next.startsWith("```") || next.startsWith("$")));
    const shown = lines.slice(index + 1, end).filter((next) => next !== "" && next !== "…");
    return [{ args: command[1].split(" "), shown }];
  });
}

describe("README examples", () => {
  it("has validate examples", () => expect(examples().length).toBeGreaterThan(0));

  it.each(examples().map((example) => [example.args.join(" "), example] as const))(
    "`metalsynth %s` prints what the README shows",
    async (_, { args, shown }) => {
      const previous = process.cwd();
      process.chdir(REPO);
      try {
        const { out } = await run(...args);
        for (const line of shown) expect(out).toContain(line);
      } finally {
        process.chdir(previous);
      }
    },
  );
});
