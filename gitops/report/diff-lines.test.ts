import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffLines, unifiedDiff } from "./diff-lines.ts";

/**
 * Applies a unified diff the way `patch` does, strictly: every context and removed line must match
 * the old text at the position the hunk header names. Kept in the test so the property checks the
 * format itself, not a second reading of our own edit script.
 */
function applyPatch(before: string, patch: string): string {
  if (patch === "") return before;
  const oldLines = before.split(/(?<=\n)/).filter((line) => line !== "");
  const lines = patch.split("\n");
  expect(lines[0]).toMatch(/^--- /);
  expect(lines[1]).toMatch(/^\+\+\+ /);
  const result: string[] = [];
  let consumed = 0;
  let index = 2;
  // The line just emitted (to the result, or consumed from the old text) loses its newline on "\".
  let last: { target: "result" | "old"; position: number } | undefined;
  while (index < lines.length && lines[index] !== "") {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(lines[index] ?? "");
    if (!header) throw new Error(`bad hunk header ${lines[index]}`);
    const oldCount = Number(header[2] ?? "1");
    const oldStart = Number(header[1]) - (oldCount === 0 ? 0 : 1);
    expect(oldStart).toBeGreaterThanOrEqual(consumed);
    result.push(...oldLines.slice(consumed, oldStart));
    consumed = oldStart;
    index += 1;
    while (index < lines.length && /^[ +\-\\]/.test(lines[index] ?? "")) {
      const line = lines[index] ?? "";
      const text = `${line.slice(1)}\n`;
      if (line.startsWith("\\")) {
        expect(line).toBe("\\ No newline at end of file");
        if (last?.target === "result") result[last.position] = (result[last.position] ?? "").slice(0, -1);
        else if (last?.target === "old") expect(oldLines[last.position]?.endsWith("\n")).toBe(false);
      } else if (line.startsWith("+")) {
        result.push(text);
        last = { target: "result", position: result.length - 1 };
      } else {
        const old = oldLines[consumed] ?? "";
        expect(old.endsWith("\n") ? old : `${old}\n`).toBe(text);
        if (line.startsWith(" ")) {
          result.push(text);
          last = { target: "result", position: result.length - 1 };
        } else last = { target: "old", position: consumed };
        consumed += 1;
      }
      index += 1;
    }
  }
  result.push(...oldLines.slice(consumed));
  return result.join("");
}

/** Length of a longest common subsequence by dynamic programming: the reference for optimality. */
function lcsLength(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] ?? 0;
      row[j] = x === b[j - 1] ? diagonal + 1 : Math.max(above, row[j - 1] ?? 0);
      diagonal = above;
    }
  }
  return row[b.length] ?? 0;
}

/** Texts over a tiny alphabet, so random pairs share many lines, with or without a final newline. */
const text = fc
  .tuple(fc.array(fc.constantFrom("a", "b", "c", "d", "kind: Job", ""), { maxLength: 40 }), fc.boolean())
  .map(([lines, newline]) => (lines.length === 0 ? "" : lines.join("\n") + (newline ? "\n" : "")));

const labels = { oldLabel: "a/f.yaml", newLabel: "b/f.yaml" };

describe("diffLines", () => {
  it("keeps a longest common subsequence and deletes/inserts exactly the rest", () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        const edits = diffLines(before, after);
        const split = (value: string) => value.split(/(?<=\n)/).filter((line) => line !== "");
        const kept = edits.filter((edit) => edit.op === " ").map((edit) => edit.line);
        expect(kept.length).toBe(lcsLength(split(before), split(after)));
        const old = edits.filter((edit) => edit.op !== "+").map((edit) => edit.line);
        const next = edits.filter((edit) => edit.op !== "-").map((edit) => edit.line);
        expect(old.join("")).toBe(before);
        expect(next.join("")).toBe(after);
      }),
      { numRuns: 500 },
    );
  });

  it("handles large inputs with few changes quickly and exactly", () => {
    const lines = Array.from({ length: 20_000 }, (_, index) => `line ${index}\n`);
    const changed = [...lines];
    changed.splice(10_000, 1, "changed\n");
    changed.push("appended\n");
    const edits = diffLines(lines.join(""), changed.join(""));
    expect(edits.filter((edit) => edit.op !== " ")).toEqual([
      { op: "-", line: "line 10000\n" },
      { op: "+", line: "changed\n" },
      { op: "+", line: "appended\n" },
    ]);
  });
});

describe("unifiedDiff", () => {
  it("produces a patch that turns the old text into the new one", () => {
    fc.assert(
      fc.property(text, text, fc.integer({ min: 0, max: 4 }), (before, after, context) => {
        const patch = unifiedDiff(before, after, { ...labels, context });
        expect(applyPatch(before, patch)).toBe(after);
      }),
      { numRuns: 500 },
    );
  });

  it("is empty for equal texts", () => {
    expect(unifiedDiff("a\nb\n", "a\nb\n", labels)).toBe("");
  });

  it("writes hunks in diff's format, merging nearby changes and separating distant ones", () => {
    const before = Array.from({ length: 20 }, (_, index) => `${index + 1}\n`).join("");
    const after = before.replace("2\n", "two\n").replace("4\n", "four\n").replace("18\n", "");
    expect(unifiedDiff(before, after, labels)).toBe(
      [
        "--- a/f.yaml",
        "+++ b/f.yaml",
        "@@ -1,7 +1,7 @@",
        " 1",
        "-2",
        "+two",
        " 3",
        "-4",
        "+four",
        " 5",
        " 6",
        " 7",
        "@@ -15,6 +15,5 @@",
        " 15",
        " 16",
        " 17",
        "-18",
        " 19",
        " 20",
        "",
      ].join("\n"),
    );
  });

  it("uses diff's conventions for new, deleted and newline-less files", () => {
    expect(unifiedDiff("", "a\nb\n", { oldLabel: "/dev/null", newLabel: "b/f" })).toBe(
      "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n",
    );
    expect(unifiedDiff("a\n", "", { oldLabel: "a/f", newLabel: "/dev/null" })).toBe(
      "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
    );
    expect(unifiedDiff("a\nb", "a\nb\n", labels)).toBe(
      "--- a/f.yaml\n+++ b/f.yaml\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
    );
  });
});
