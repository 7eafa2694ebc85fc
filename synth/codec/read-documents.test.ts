import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { MAX_DOCUMENT_BYTES, MAX_DOCUMENT_TEXT_BYTES } from "../documents.ts";
import { fieldPaths } from "../../test/support/field-paths.ts";
import {
  parseDocuments,
  parseDocumentsFully,
  readBlockDocuments,
  readEmbeddedValue,
  type ParsedFile,
} from "./read-documents.ts";

const rulesAt = (text: string) =>
  parseDocuments("f.yaml", text).issues.map(
    (found) => `${found.rule} ${found.source?.line}:${found.source?.column}`,
  );

describe("parseDocuments", () => {
  it("returns every document with positions of nested fields", () => {
    const parsed = parseDocuments(
      "f.yaml",
      "a: 1\n---\nspec:\n  masters:\n    - master-1:\n        mac-address: x\n",
    );
    expect(parsed.issues).toEqual([]);
    expect(parsed.documents).toHaveLength(2);
    expect(parsed.documents[1]?.position(["spec", "masters", 0, "master-1", "mac-address"])).toEqual({
      file: "f.yaml",
      line: 6,
      column: 9,
    });
    // A path that doesn't exist points at its nearest existing ancestor.
    expect(parsed.documents[1]?.position(["spec", "masters", 0, "master-1", "cpu"])).toEqual({
      file: "f.yaml",
      line: 5,
      column: 7,
    });
  });

  it("reads JSON with positions", () => {
    const parsed = parseDocuments("f.json", '{"a": {"b": 1}}');
    expect(parsed.documents[0]?.position(["a", "b"])).toEqual({ file: "f.json", line: 1, column: 8 });
  });

  it.each([
    ["malformed YAML", "a: [1, 2\nb: 3\n", ["yaml-syntax 2:1"]],
    ["a tab-indented mapping", "a:\n\tb: 1\n", ["yaml-syntax 2:1"]],
    ["duplicate keys", "a: 1\nb: 2\na: 3\n", ["yaml-syntax 3:1"]],
    ["binary garbage", "\u0000\u0001PNG\u0000", ["yaml-syntax 1:1"]],
    ["truncated JSON", '{"apiVersion": "v1", "kind": ', ["yaml-syntax 1:30"]],
  ])("reports %s with line and column", (_name, text, expected) => {
    expect(rulesAt(text)).toEqual(expected);
  });

  it("keeps the valid documents of a file with one broken document", () => {
    const parsed = parseDocuments("f.yaml", "a: 1\n---\nb: [\n---\nc: 3\n");
    expect(parsed.documents.map((document) => document.value)).toEqual([{ a: 1 }, { c: 3 }]);
    expect(parsed.issues).toHaveLength(1);
  });

  it("treats empty files and empty documents as nothing", () => {
    expect(parseDocuments("f.yaml", "")).toEqual({ documents: [], issues: [] });
    expect(parseDocuments("f.yaml", "---\n---\n# only a comment\n")).toEqual({ documents: [], issues: [] });
  });

  it("stops an alias bomb instead of expanding it", () => {
    const bomb = [
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
      "f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
    ].join("\n");
    const parsed = parseDocuments("bomb.yaml", bomb);
    expect(parsed.documents).toEqual([]);
    expect(parsed.issues.map((found) => found.rule)).toEqual(["yaml-syntax"]);
    expect(parsed.issues[0]?.message).toMatch(/alias/i);
  });

  it("refuses a document over the Kubernetes object size limit", () => {
    const big = `apiVersion: v1\nkind: ConfigMap\ndata:\n  blob: "${"x".repeat(MAX_DOCUMENT_BYTES)}"\n---\nsmall: 1\n`;
    const parsed = parseDocuments("big.yaml", big);
    expect(parsed.issues.map((found) => `${found.rule} ${found.source?.line}`)).toEqual(["too-large 1"]);
    expect(parsed.issues[0]?.message).toMatch(/1\.5 MiB/);
    expect(parsed.documents.map((document) => document.value)).toEqual([{ small: 1 }]);
  });

  it("measures the object, not the text: a 2 MiB comment is fine, 300 KiB of annotations are not", () => {
    const comment = `# ${"c".repeat(2 * 1024 * 1024)}\nkind: ConfigMap\n`;
    expect(parseDocuments("comment.yaml", comment)).toMatchObject({
      issues: [],
      documents: [{ value: { kind: "ConfigMap" } }],
    });
    const annotated = `kind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    note: "${"a".repeat(300 * 1024)}"\n`;
    const parsed = parseDocuments("annotated.yaml", annotated);
    expect(parsed.documents).toEqual([]);
    expect(parsed.issues.map((found) => `${found.rule} ${found.path} ${found.source?.line}`)).toEqual([
      "too-large metadata.annotations 4",
    ]);
  });

  it("refuses a document whose text is over the parse limit without parsing it, keeping later lines right", () => {
    const huge = `---\nblob: ${"x".repeat(MAX_DOCUMENT_TEXT_BYTES + 1)}\n---\nsmall: 1\n`;
    const parsed = parseDocuments("huge.yaml", huge);
    expect(parsed.issues.map((found) => `${found.rule} ${found.source?.line}`)).toEqual(["too-large 1"]);
    expect(parsed.documents.map((document) => [document.value, document.position([]).line])).toEqual([
      [{ small: 1 }, 4],
    ]);
  });

  it("reports an unclosed quote where it opens, not where the file ends", () => {
    const parsed = parseDocuments(
      "quote.yaml",
      'apiVersion: v1\nkind: "Provisioning\nmetadata:\n  name: x\n\n\n',
    );
    expect(parsed.issues).toEqual([
      expect.objectContaining({
        rule: "yaml-syntax",
        message: "this quoted string is never closed",
        source: { file: "quote.yaml", line: 2, column: 7 },
      }),
    ]);
  });

  describe("block-style files, read by the fast reader", () => {
    const specFiles = ["examples/site/specs", "test/fixtures/anchors", "test/fixtures/rules"].flatMap((dir) =>
      readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith(".yaml"))
        .map((file) => path.join(dir, file)),
    );
    const edgeCases: Record<string, string> = {
      "comments before the first marker": "# a comment\n\n---\na: 1\n---\nb: [x]\n",
      "a document before the first marker": "a: 1\n---\nb:\n  c: 2\n",
      "a marker with a comment": "--- # first\na: 1\n--- # second\nb: 2\n",
      "a literal block": "key: |\n  line one\n  --- not a marker\nnext: 3\n",
      "a list of objects": "kind: List\nitems:\n- kind: Provisioning\n  spec: {}\n- kind: Software\n",
    };

    it("reads every spec of the example site and the fixtures, as the full parser does", () => {
      expect(specFiles.length).toBeGreaterThan(20);
      const read = specFiles.filter(
        (file) => readBlockDocuments(file, readFileSync(file, "utf8")) !== undefined,
      );
      // Most are in the fast reader's subset; the rest are read fully, and compared all the same.
      expect(read.length).toBeGreaterThan(specFiles.length / 2);
      for (const file of specFiles) expectSameAsFullParser(file, readFileSync(file, "utf8"));
    });

    it.each(Object.entries(edgeCases))("reads %s as the full parser does", (_, text) => {
      expectSameAsFullParser("edge.yaml", text);
    });

    it("reads documents in its subset itself, and leaves a file with any other to the full parser", () => {
      expect(readBlockDocuments("f.yaml", edgeCases["a document before the first marker"]!)).toBeDefined();
      expect(readBlockDocuments("f.yaml", "a: 1\n---\nb: &x 1\nc: *x\n")).toBeUndefined();
      expect(readBlockDocuments("f.yaml", "a: 1\n...\n")).toBeUndefined();
      expect(readBlockDocuments("f.yaml", "a: 1\n---\n")).toBeUndefined();
      expect(readBlockDocuments("f.yaml", "a: 1\na: 2\n")).toBeUndefined();
    });

    it("reports a document's oversized annotations where the full parser does", () => {
      const annotation = "x".repeat(300 * 1024);
      expectSameAsFullParser("big.yaml", `a: 1\n---\nmetadata:\n  annotations:\n    big: ${annotation}\n`);
    });
  });

  describe("JSON documents, read by JSON.parse", () => {
    const specs = ["examples/site/specs", "test/fixtures/anchors", "test/scenarios"].flatMap((dir) =>
      readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith(".yaml") && !file.includes("expected"))
        .flatMap((file) => parseDocumentsFully(file, readFileSync(path.join(dir, file), "utf8")).documents)
        .map((document) => document.value),
    );
    const asJson: Record<string, string> = {
      "kubectl's indented documents": specs
        .map((value) => `---\n${JSON.stringify(value, null, 4)}\n`)
        .join(""),
      "compact documents after markers": specs.map((value) => `--- ${JSON.stringify(value)}\n`).join(""),
      "one List": JSON.stringify({ apiVersion: "v1", kind: "List", items: specs.slice(0, 20) }, null, 2),
      "JSON beside block YAML": `a: 1\n---\n${JSON.stringify(specs[0], null, 2)}\n---\nb:\n  c: 2\n`,
      "escapes and numbers":
        '{"a": "\\u00e9\\n\\"q\\": x", "b": [1.5e3, -2, 0.25, true, null, {}], "c": {"": []}}',
    };
    const outside: Record<string, string> = {
      "a duplicate key": '{"a": 1, "b": {"c": 1, "c": 2}}',
      "a comment": '{"a": 1} # why\n',
      tabs: '{\n\t"a": 1\n}\n',
      "a key apart from its colon": '{"a"\n: 1}\n',
      "a long key": `{"${"k".repeat(1100)}": 1}\n`,
      "a __proto__ key": '{"__proto__": {"a": 1}}',
      "not JSON": "{a: 1}\n",
    };

    it.each(Object.entries(asJson))("reads %s as the full parser does", (_, text) => {
      expect(specs.length).toBeGreaterThan(20);
      expect(readBlockDocuments("specs.json", text)).toBeDefined();
      expectSameAsFullParser("specs.json", text);
    });

    it.each(Object.entries(outside))("leaves a document with %s to the full parser", (_, text) => {
      expect(readBlockDocuments("f.json", text)).toBeUndefined();
      expectSameAsFullParser("f.json", text);
    });

    it("refuses an oversized JSON document where the full parser does", () => {
      const big = {
        metadata: { annotations: { big: "x".repeat(300 * 1024) } },
        data: "y".repeat(1.6 * 2 ** 20),
      };
      expectSameAsFullParser("big.json", `{"a": 1}\n---\n${JSON.stringify(big)}\n`);
    });
  });
});

describe("YAML merge keys, as kubectl, Argo CD and Flux read them (go-yaml, YAML 1.1)", () => {
  const base = "base: &base\n  cpu: 16\n  memory: 64Gi\n";
  const valueOf = (text: string) => {
    const parsed = parseDocuments("f.yaml", text);
    expect(parsed.issues).toEqual([]);
    return parsed.documents[0]?.value;
  };

  it.each([
    ["one map", `${base}node:\n  <<: *base\n`, { cpu: 16, memory: "64Gi" }],
    [
      "its own key over a merged one, after the merge",
      `${base}node:\n  <<: *base\n  cpu: 8\n`,
      { cpu: 8, memory: "64Gi" },
    ],
    [
      "its own key over a merged one, before the merge",
      `${base}node:\n  cpu: 8\n  <<: *base\n`,
      { cpu: 8, memory: "64Gi" },
    ],
    [
      "a list, the earlier map first",
      `${base}small: &small {cpu: 4, disk: 1Ti}\nnode:\n  <<: [*small, *base]\n`,
      { cpu: 4, disk: "1Ti", memory: "64Gi" },
    ],
    ["a map written in place", "node:\n  <<: {cpu: 2}\n  memory: 1Gi\n", { cpu: 2, memory: "1Gi" }],
    [
      "a merge inside the merged map",
      `${base}mid: &mid\n  <<: *base\n  disk: 1Ti\nnode: {<<: *mid}\n`,
      { cpu: 16, memory: "64Gi", disk: "1Ti" },
    ],
    ['a quoted "<<": a key like any other', 'node:\n  "<<": {cpu: 2}\n', { "<<": { cpu: 2 } }],
  ])("merges %s", (_name, text, node) => {
    expect((valueOf(text) as { node: unknown }).node).toEqual(node);
    // The fast reader leaves merge keys to the full parser: the same values and positions either way.
    expectSameAsFullParser("f.yaml", text);
  });

  it("places a merged field where it is written: in the map it is merged from", () => {
    const text = `${base}node:\n  <<: *base\n  cpu: 8\n`;
    const [document] = parseDocuments("f.yaml", text).documents;
    expect(["memory", "cpu", "disk"].map((field) => document?.position(["node", field]))).toEqual([
      { file: "f.yaml", line: 3, column: 3 },
      { file: "f.yaml", line: 6, column: 3 },
      // Absent everywhere: the node that would hold it.
      { file: "f.yaml", line: 4, column: 1 },
    ]);
  });

  it.each([
    [
      "merged maps that double at each level",
      ["a: &a {x: [lol, lol, lol, lol, lol, lol, lol, lol]}"]
        .concat(
          Array.from({ length: 8 }, (_, level) => {
            const below = level === 0 ? "a" : `m${level - 1}`;
            const keys = Array.from({ length: 4 }, (_, key) => `k${key}: {<<: *${below}}`);
            return `m${level}: &m${level} {${keys.join(", ")}}`;
          }),
        )
        .join("\n"),
      /alias/i,
    ],
    ["a map that merges itself", "a: &a {<<: *a, x: 1}\n", /alias/i],
    ["a merge of a number", "node:\n  <<: 5\n", /merge/i],
  ])("refuses %s as yaml-syntax", (_name, text, message) => {
    const parsed = parseDocuments("f.yaml", text);
    expect(parsed.documents).toEqual([]);
    expect(parsed.issues.map((found) => found.rule)).toEqual(["yaml-syntax"]);
    expect(parsed.issues[0]?.message).toMatch(message);
  });

  it("merges in an embedded value too (networkData a person wrote in YAML)", () => {
    expect(readEmbeddedValue("a: &a {x: 1}\nb:\n  <<: *a\n  y: 2\n")).toEqual({
      value: { a: { x: 1 }, b: { x: 1, y: 2 } },
    });
  });
});

describe("readEmbeddedValue", () => {
  it.each([
    ['{"networks": [{"id": "n1", "ip_address": "10.0.0.1"}]}', "JSON"],
    ['[1, "a", null]', "a JSON list"],
    ["networks:\n- id: n1\n  ip_address: 10.0.0.1\n", "block YAML"],
    ["networks: [{id: n1, ip_address: 10.0.0.1}]", "flow YAML"],
    ['{"a": 1, "a": 2}', "a duplicate key, the last kept as JSON keeps it"],
    ["a: 1\na: 2", "a duplicate key in block YAML"],
    ["a: &x [1]\nb: *x", "an alias"],
    ["just text", "a scalar"],
  ])("reads %j (%s) as the full parser does", (text) => {
    const full: unknown = parseDocument(text, { uniqueKeys: false }).toJS({ maxAliasCount: 100 });
    expect(readEmbeddedValue(text)).toEqual({ value: full });
  });

  it("says why text is no value", () => {
    expect(readEmbeddedValue("a: [1\n")).toEqual({
      problem: expect.stringMatching(/^is not JSON or YAML: /),
    });
    // Each level doubles the one below it: 2^13 expansions, far over the alias limit.
    const levels = Array.from({ length: 12 }, (_, index) => {
      const below = index === 0 ? "a" : `b${index - 1}`;
      return `b${index}: &b${index} [*${below}, *${below}]`;
    });
    const bomb = ["a: &a [x, x]", ...levels].join("\n");
    expect(readEmbeddedValue(bomb)).toEqual({ problem: expect.stringMatching(/^can't be expanded: /) });
  });
});

/** `parseDocuments` gives what the full parser gives: values, findings, and every field's position. */
function expectSameAsFullParser(file: string, text: string): void {
  const fast = parseDocuments(file, text);
  const full = parseDocumentsFully(file, text);
  expect(fast.issues, file).toEqual(full.issues);
  expect(summary(fast), file).toEqual(summary(full));
}

function summary(parsed: ParsedFile) {
  return parsed.documents.map((document) => ({
    index: document.index,
    value: document.value,
    positions: fieldPaths(document.value).map((at) => [at.join("."), document.position(at)]),
  }));
}
