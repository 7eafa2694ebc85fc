import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { blockPositions } from "./block-positions.ts";
import { fieldPaths } from "../../test/support/field-paths.ts";
import { BlockYamlReader } from "./block-yaml.ts";
import { documentPosition, parseDocumentsFully } from "./read-documents.ts";

/** One reader for every text, as one snapshot's read shares it: keys cached from one text serve the next. */
const reader = new BlockYamlReader();

/** Each document of the example site's specs, the fixtures and the scenarios, as written and as `yaml` writes it. */
const documents = ["examples/site/specs", "test/fixtures/anchors", "test/scenarios"].flatMap((dir) =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".yaml") && !file.includes("expected"))
    .flatMap((file) => {
      const text = readFileSync(path.join(dir, file), "utf8");
      const pieces = text.split(/^(?=---(?:[ ]|$))/m);
      const values = parseDocumentsFully(file, text).documents.map((document) => document.value);
      return [...pieces, ...values.map((value) => `---\n${stringify(value)}`)].filter(
        (piece) => reader.read(piece) !== undefined,
      );
    }),
);

describe("blockPositions", () => {
  it("places every field of the block documents of the specs and fixtures where the full parser does", () => {
    expect(documents.length).toBeGreaterThan(100);
    let known = 0;
    for (const text of documents) {
      const fast = blockPositions(text);
      if (fast === undefined) continue;
      known++;
      const full = documentPosition("f.yaml", text);
      const value = reader.read(text)?.value;
      for (const at of fieldPaths(value)) {
        expect({ at, ...fast(at) }, text).toEqual({ at, ...withoutFile(full?.(at)) });
      }
    }
    // The rest (multi-line scalars, quoted keys) are left to the full parser.
    expect(known).toBeGreaterThan(documents.length * 0.8);
  });

  it.each([
    ["a document", "a: 1\nb:\n  - x\n  - c: 2\n    d: |\n      text\n      - not an item\n    e: []\n", true],
    ["a sequence at its key's column", "--- # c\nk:\n- 1\n- x: y\n  z: [] # n\nw: 2\n", true],
    ["content on the marker's line", "--- a\n", false],
    ["a quoted key", 'a:\n  "b c": 1\n', false],
    ["a multi-line plain scalar", "a: one\n  two\n", false],
    ["a nested sequence", "a:\n  - - 1\n", false],
    ["a folded scalar", "a: >\n  x\n", false],
    ["an item on the next line", "a:\n  -\n    b: 1\n", false],
  ])("knows the positions of %s: %s", (_, text, known) => {
    expect(blockPositions(text) !== undefined).toBe(known);
    if (!known) return;
    const full = documentPosition("f.yaml", text);
    for (const at of fieldPaths(reader.read(text)?.value)) {
      expect({ at, ...blockPositions(text)?.(at) }).toEqual({ at, ...withoutFile(full?.(at)) });
    }
  });
});

function withoutFile(position: { line: number; column: number } | undefined) {
  return position && { line: position.line, column: position.column };
}
