import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { commandFlags, completionScript } from "./completion.ts";
import { COMMANDS } from "./usage.ts";

/**
 * What bash's completion function offers for `words`, the cursor on the last one. `metalsynth` is a
 * stand-in that answers `__clusters` with the site it was asked about, so the test sees the --site.
 */
function complete(words: string[]): string[] {
  const script = `metalsynth() { [ "$1" = __clusters ] && printf '%s\\n' "$3/one" one two; }
${completionScript("bash")}
COMP_WORDS=(${words.map((word) => `'${word}'`).join(" ")})
COMP_CWORD=${words.length - 1}
_metalsynth
printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync("bash", ["--noprofile", "--norc", "-c", script], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line !== "");
}

const has = (shell: string) => spawnSync(shell, ["--version"]).status === 0;

describe("metalsynth completion", () => {
  it.each([
    [["metalsynth", ""], Object.keys(COMMANDS)],
    [["metalsynth", "va"], ["validate"]],
    [["metalsynth", "validate", "--si"], ["--site"]],
    [
      ["metalsynth", "diff", "--"],
      [
        "--exit-code",
        "--format",
        "--help",
        "--inventory",
        "--map",
        "--out",
        "--patch",
        "--site",
        "--specs",
        "--staged",
      ],
    ],
    [["metalsynth", "validate", "-o", "s"], ["sarif"]],
    [["metalsynth", "inventory", "p"], ["pull"]],
    [["metalsynth", "inventory", "pull", "--k"], ["--kubeconfig"]],
    [["metalsynth", "webhook", "--from"], ["--from-cluster"]],
    [
      ["metalsynth", "explain", ""],
      ["./one", "one", "two"],
    ],
    [["metalsynth", "explain", "--site", "sites/a", "o"], ["one"]],
    [["metalsynth", "explain", "--site", "sites/a", "s"], ["sites/a/one"]],
    [["metalsynth", "explain", "-o", "y"], ["yaml"]],
    [["metalsynth", "diff", "--format", "m"], ["markdown"]],
    [["metalsynth", "validate", "-o", "m"], []],
    [
      ["metalsynth", "version", "-o", ""],
      ["text", "json"],
    ],
  ])("bash completes %j to %j", (words, expected) => {
    expect(complete(words).sort()).toEqual([...expected].sort());
  });

  it("takes every flag from the command table, and only flags", () => {
    const flags = commandFlags();
    expect(flags.validate).toEqual([
      "--format",
      "--help",
      "--inventory",
      "--out",
      "--site",
      "--specs",
      "--staged",
      "-o",
    ]);
    expect(flags.webhook).not.toContain("-n");
    for (const list of Object.values(flags))
      for (const flag of list) expect(flag).toMatch(/^(--[a-z][a-z-]*|-[a-zA-Z])$/);
  });

  it.skipIf(!has("zsh"))("zsh reads its script without a syntax error", () => {
    expect(spawnSync("zsh", ["-n"], { input: "if true; then\n" }).status).not.toBe(0);
    expect(spawnSync("zsh", ["-n"], { input: completionScript("zsh") }).status).toBe(0);
  });

  it.skipIf(!has("fish"))("fish reads its script without a syntax error", () => {
    // fish reads a script from a file (from a pipe it reports the pipe as a directory).
    const file = path.join(mkdtempSync(path.join(tmpdir(), "metalsynth-fish-")), "metalsynth.fish");
    const check = (text: string) => {
      writeFileSync(file, text);
      return spawnSync("fish", ["--no-execute", file], { encoding: "utf8" });
    };
    expect(check("if true\n").status).not.toBe(0);
    const result = check(completionScript("fish"));
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("a syntax check can fail", () => {
    expect(spawnSync("bash", ["-n"], { input: "case x in\n" }).status).not.toBe(0);
    expect(spawnSync("bash", ["-n"], { input: completionScript("bash") }).status).toBe(0);
  });
});
