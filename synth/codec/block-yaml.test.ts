import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineCounter, Schema, parseAllDocuments, stringify } from "yaml";
import { generateBmhs, kubectlYaml, makeBmh, type RawObject } from "../../test/builders/inventory.ts";
import { InventoryBuilder, type InventoryResult } from "../inventory/load.ts";
import { isRecord } from "../inventory/raw.ts";
import { yamlInventoryStream } from "../inventory/stream.ts";
import { BlockYamlReader } from "./block-yaml.ts";
import { parseYamlChunk, parseYamlChunkFully, type TextChunk } from "./chunks.ts";
import type { ChunkParser } from "./object-stream.ts";
import { YamlSplitter } from "./yaml-split.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** One reader for every text, as one snapshot's read shares it: keys cached from one text serve the next. */
const reader = new BlockYamlReader();

/**
 * What the full parser makes of `text`: its one document's value and where its root starts, or
 * `undefined` if it has errors.
 */
function fullParse(text: string): { value: unknown; line: number; column: number } | undefined {
  const lines = new LineCounter();
  const documents = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false, lineCounter: lines });
  if (!Array.isArray(documents) || documents.length !== 1) return undefined;
  const [document] = documents;
  if (!document || document.errors.length > 0) return undefined;
  const { line, col } = lines.linePos(document.contents?.range?.[0] ?? 0);
  return { value: document.toJS({ maxAliasCount: 100 }), line, column: col };
}

/** The fast reader either gives up or agrees with the full parser, which then finds no error. */
function expectAgreement(text: string): boolean {
  const fast = reader.read(text);
  if (fast === undefined) return false;
  expect(fullParse(text), text).toEqual(fast);
  return true;
}

/** The chunks the streaming reader parses: list items and the documents or pieces around them. */
function chunksOf(text: string): string[] {
  const chunks: string[] = [];
  const keep = (chunk: TextChunk): number => chunks.push(chunk.text);
  const splitter = new YamlSplitter("f.yaml", {
    segment: keep,
    item: keep,
    documentEnd: () => undefined,
    issue: () => undefined,
  });
  splitter.write(text);
  splitter.end();
  return chunks;
}

function yamlFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: "utf8" })
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => path.join(directory, name))
    .sort();
}

describe("BlockYamlReader", () => {
  it.each([
    [
      "a: 1\nb: true\nc: ~\nd: null\ne: 0x1F\nf: 0o17\ng: .inf\nh: -.5\ni: 1e3\nj: 1.50\nk: +7",
      "core schema",
    ],
    ['a: "true"\nb: \'1\'\nc: "x\\ny\\u00e9\\"z"\nd: \'it\'\'s\'\ne: ""', "quoted"],
    ["a:\n- x\n- y: 1\n  z: 2\nb:\n  - 1\n  -\n    c: d\n  -\nc: []\nd: {}", "sequences"],
    ["a: |\n  x\n\n  y\n\nb: |-\n  z\nc: |+\n  w\n\n", "literal blocks"],
    ['"quoted key": 1\nvino.airshipit.org/rack: r1\na: http://x/y?z=1#frag\nb: x]', "keys and plain text"],
    ["- a\n-  b: 1\n   c: 2", "a sequence at the root"],
    ["# about a\n---\na: 1 # one\n# b is null\nb: # none\nc: 'x' # quoted\nd: | # text\n  #1\n", "comments"],
  ])("reads %j (%s) as the full parser does", (text) => {
    expect(expectAgreement(text)).toBe(true);
  });

  it.each([
    ["a: &x 1\nb: *x", "anchors and aliases"],
    ["a: !!str 1", "a tag"],
    ["a: [1, 2]", "a flow sequence"],
    ["a: b\n  c", "a multi-line plain scalar"],
    ['a: "b\n  c"', "a multi-line quoted scalar"],
    ["a: >\n  folded", "a folded block"],
    ["a: 1\na: 2", "a duplicate key"],
    ["1: a", "a key that is a number"],
    ["<<: {}", "a merge key"],
    ["__proto__: 1", "a __proto__ key"],
    ["a:\tb", "a tab"],
    ["a: b: c", "a nested compact mapping (an error)"],
    ["a: 1\n b: 2", "a stray indented line (an error)"],
    ["- - a", "a compact nested sequence"],
    ['a: "\\x41"', "a YAML-only escape"],
    ["a: 1\n---\nb: 2", "a second document"],
    ["%YAML 1.2\n---\na: 1", "a directive"],
    ["", "empty text"],
    ["just a scalar", "a scalar document"],
  ])("gives up on %j (%s)", (text) => {
    expect(reader.read(text)).toBeUndefined();
  });

  it("agrees with the full parser on every chunk of the example and fixture YAML files", () => {
    let read = 0;
    let total = 0;
    for (const file of [
      ...yamlFiles(path.join(ROOT, "examples")),
      ...yamlFiles(path.join(ROOT, "test", "fixtures")),
    ]) {
      for (const chunk of chunksOf(readFileSync(file, "utf8"))) {
        total++;
        if (expectAgreement(chunk)) read++;
      }
    }
    expect(total).toBeGreaterThan(100);
    // The samples are hand-written, with comments: most, not all, stay in the subset.
    expect(read / total).toBeGreaterThan(0.5);
  });

  it("reads every chunk of a generated kubectl -o yaml snapshot, as the full parser does", () => {
    const text = [...kubectlYaml(generateBmhs(300, { seed: 5 }))].join("");
    const chunks = chunksOf(text);
    expect(chunks.length).toBeGreaterThan(300);
    for (const chunk of chunks) expect(expectAgreement(chunk), chunk).toBe(true);
  });

  it("agrees with the full parser on random documents in every style `yaml` writes (property)", () => {
    const key = fc.oneof(fc.constantFrom("a", "name", "true", "1", "x.y/z", "-", "a b", ""), fc.string());
    const scalar = fc.oneof(
      fc.constantFrom("", "~", "null", "true", "0x1F", ".nan", "1e3", "- x", "a: b", "#", "|", "'", '"'),
      fc.string(),
      fc.string({ unit: "grapheme" }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.string().map((text) => `${text}\n${text}\n`),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, scalar, tie("list"), tie("map")),
      list: fc.array(tie("node"), { maxLength: 4 }),
      map: fc.dictionary(key, tie("node"), { maxKeys: 4 }),
    })).map;
    const options = fc.record({
      indentSeq: fc.boolean(),
      indent: fc.integer({ min: 1, max: 4 }),
      lineWidth: fc.constantFrom(0, 20, 80),
      singleQuote: fc.constantFrom(null, true, false),
      sortMapEntries: fc.boolean(),
    });
    fc.assert(
      fc.property(value, options, (document, style) => {
        expectAgreement(stringify(document, style));
      }),
      { numRuns: 2000 },
    );
  });

  it("resolves every scalar the core schema's null, boolean, integer and float tags match (property)", () => {
    const tags = new Schema({}).tags.flatMap((tag) => (tag.default === true && tag.test ? [tag.test] : []));
    const scalar = fc.oneof(...tags.map((pattern) => fc.stringMatching(pattern)));
    fc.assert(
      fc.property(scalar, (text) => {
        expectAgreement(`a: ${text}`);
      }),
      { numRuns: 2000 },
    );
  });

  it("gives up or agrees with the full parser on YAML-like garbage (property)", () => {
    const text = fc
      .array(
        fc.oneof(
          fc.constantFrom(
            "a:",
            "b: ",
            "- ",
            "  ",
            "\n",
            "|",
            "|-",
            "|+",
            "'",
            '"',
            " #",
            "\\",
            "x",
            "1",
            ": ",
          ),
          fc.constantFrom("---", "...", "[]", "{}", "\t", "\r\n", "&a", "*a", "!", "?", "~", "0x", ".inf"),
          fc.string({ maxLength: 3 }),
        ),
        { maxLength: 40 },
      )
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, (garbage) => {
        expectAgreement(garbage);
      }),
      { numRuns: 5000 },
    );
  });

  it("reads a host with every field kind the builders make", () => {
    const host = makeBmh({ name: "a", sriov: true, qat: true, networkData: { name: "nd", namespace: "ns" } });
    for (const indentSeq of [true, false]) expect(expectAgreement(stringify(host, { indentSeq }))).toBe(true);
  });
});

describe("the streaming reader, fast path and full parser", () => {
  /** A large file's text split into items, each parsed by `parseChunk`. */
  function streamed(text: string, parseChunk: ChunkParser, file = "f.yaml"): InventoryResult {
    const builder = new InventoryBuilder();
    const stream = yamlInventoryStream(file, builder, parseChunk);
    stream.write(text);
    stream.end();
    return builder.build();
  }

  /** Problems the loader reports at a field, so their positions come from the full parser, lazily. */
  const plants: Record<string, (bmh: RawObject) => void> = {
    badMac: (bmh) => set(bmh, ["spec", "bootMACAddress"], "not-a-mac"),
    numberLabel: (bmh) => set(bmh, ["metadata", "labels", "x"], 5),
    badCpus: (bmh) => set(bmh, ["status", "hardware", "cpu", "count"], "many"),
    statusNotMap: (bmh) => set(bmh, ["status"], "broken"),
    noName: (bmh) => set(bmh, ["metadata", "name"], ""),
    hugeAnnotation: (bmh) => set(bmh, ["metadata", "annotations", "note"], "x".repeat(300 * 1024)),
    duplicate: (bmh) => set(bmh, ["metadata", "name"], "r0001n01"),
  };

  function set(object: RawObject, path: readonly string[], value: unknown): void {
    let at: Record<string, unknown> = object;
    for (const key of path.slice(0, -1)) {
      const next = at[key];
      const map: Record<string, unknown> = isRecord(next) ? { ...next } : {};
      at[key] = map;
      at = map;
    }
    at[path[path.length - 1] ?? ""] = value;
  }

  it("give the same hosts and issues, positions included, on generated snapshots with planted problems (property)", () => {
    // The fast reader keeps no positions: every finding here is placed by the full parser, lazily.
    const plant = fc.constantFrom(...Object.keys(plants));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 25 }),
        fc.integer(),
        fc.dictionary(fc.nat({ max: 30 }).map(String), plant, { maxKeys: 4 }),
        (count, seed, planted) => {
          const items = [...generateBmhs(count, { seed, namespace: "site" })];
          for (const [index, name] of Object.entries(planted)) {
            const item = items[Number(index)];
            if (item?.["kind"] === "BareMetalHost") plants[name]?.(item);
          }
          const text = [...kubectlYaml(items)].join("");
          expect(streamed(text, parseYamlChunk)).toEqual(streamed(text, parseYamlChunkFully));
        },
      ),
      { numRuns: 40 },
    );
  });

  it.each(["examples/site/inventory", "examples/broken/inventory", "test/fixtures/inventory"])(
    "give the same hosts and issues for every YAML file of %s",
    (directory) => {
      for (const file of yamlFiles(path.join(ROOT, directory))) {
        const text = readFileSync(file, "utf8");
        expect(streamed(text, parseYamlChunk, file), file).toEqual(streamed(text, parseYamlChunkFully, file));
      }
    },
  );
});
