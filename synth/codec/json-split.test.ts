import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kindless, makeBmh } from "../../test/builders/inventory.ts";
import type { Issue } from "../issue.ts";
import type { TextChunk } from "./chunks.ts";
import { JsonSplitter } from "./json-split.ts";
import { MAX_DOCUMENT_TEXT_BYTES } from "../documents.ts";
import { InventoryBuilder } from "../inventory/load.ts";
import { jsonInventoryStream } from "../inventory/stream.ts";

type Event =
  | { item: TextChunk }
  | { root: TextChunk; hadItems: boolean }
  | { rootString: [string, string] }
  | { issue: Pick<Issue, "rule" | "message" | "source"> };

/** Every event of splitting `text`, written in pieces cut at `cuts` (byte offsets). */
function split(text: string, cuts: readonly number[] = []): Event[] {
  const events: Event[] = [];
  const splitter = new JsonSplitter("f.json", {
    item: (chunk) => events.push({ item: chunk }),
    root: (chunk, hadItems) => events.push({ root: chunk, hadItems }),
    rootString: (key, value) => events.push({ rootString: [key, value] }),
    issue: ({ rule, message, source }) => events.push({ issue: { rule, message, source } }),
  });
  const bytes = new TextEncoder().encode(text);
  let start = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    splitter.write(bytes.subarray(start, cut));
    start = cut;
  }
  splitter.write(bytes.subarray(start));
  splitter.end();
  return events;
}

const LIST = `{
    "apiVersion": "v1",
    "items": [
        {
            "kind": "BareMetalHost",
            "metadata": { "name": "a" }
        },
        { "kind": "BareMetalHost", "metadata": { "name": "b, \\"quoted\\" ]}" } }
    ],
    "kind": "List",
    "metadata": { "resourceVersion": "" }
}
`;

describe("JsonSplitter", () => {
  it("delivers each item with its own line and column, then the list with items as null", () => {
    const events = split(LIST);
    expect(events).toEqual([
      { rootString: ["apiVersion", "v1"] },
      {
        item: {
          text: '{\n            "kind": "BareMetalHost",\n            "metadata": { "name": "a" }\n        }',
          line: 4,
          column: 9,
          keys: 3,
        },
      },
      {
        item: {
          text: '{ "kind": "BareMetalHost", "metadata": { "name": "b, \\"quoted\\" ]}" } }',
          line: 8,
          column: 9,
          keys: 3,
        },
      },
      { rootString: ["kind", "List"] },
      {
        root: {
          // Blank lines stand in for the items, so positions after them stay right.
          text: '{\n    "apiVersion": "v1",\n    "items": null\n\n\n\n\n\n,\n    "kind": "List",\n    "metadata": { "resourceVersion": "" }\n}',
          line: 1,
          column: 1,
          // The items' keys are their own chunks'.
          keys: 5,
        },
        hadItems: true,
      },
    ]);
    const root = events.find((event) => "root" in event);
    expect(root && "root" in root && JSON.parse(root.root.text)).toEqual({
      apiVersion: "v1",
      items: null,
      kind: "List",
      metadata: { resourceVersion: "" },
    });
  });

  it("gives the same events however the bytes are cut (property)", () => {
    const whole = split(LIST);
    const length = new TextEncoder().encode(LIST).length;
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: length - 1 }), { maxLength: 12 }), (cuts) => {
        expect(split(LIST, cuts)).toEqual(whole);
      }),
    );
    expect(
      split(
        LIST,
        Array.from({ length: length - 1 }, (_, index) => index + 1),
      ),
    ).toEqual(whole);
  });

  it("delivers an object without items whole, and several top-level values one by one", () => {
    expect(split('{"kind": "BareMetalHost"}\n"a scalar" 42\n{"kind": "Secret"}')).toEqual([
      { rootString: ["kind", "BareMetalHost"] },
      { root: { text: '{"kind": "BareMetalHost"}', line: 1, column: 1, keys: 1 }, hadItems: false },
      { rootString: ["kind", "Secret"] },
      { root: { text: '{"kind": "Secret"}', line: 3, column: 1, keys: 1 }, hadItems: false },
    ]);
  });

  it("counts columns in characters, skips a byte order mark, and handles scalar items", () => {
    expect(split('\uFEFF{"a": "ééé", "items": [1, "x" , {"k": 2}]}')).toEqual([
      { item: { text: "1", line: 1, column: 24, keys: 0 } },
      { item: { text: '"x"', line: 1, column: 27, keys: 0 } },
      { item: { text: '{"k": 2}', line: 1, column: 33, keys: 1 } },
      { root: { text: '{"a": "ééé", "items": null}', line: 1, column: 1, keys: 2 }, hadItems: true },
    ]);
  });

  it.each<[string, string, string, number, number]>([
    ["an unexpected close", '{"items": [}', "unexpected '}'", 1, 12],
    ["a truncated file", '{"items": [\n  {"a": 1}', "unexpected end of file: unclosed { or [", 2, 11],
    ["an unterminated string", '{"a": "b', "unexpected end of file: unterminated string", 1, 9],
    [
      "a missing comma between items",
      '{"items": [\n {"a": 1}\n {"b": 2}]}',
      "expected ',' or ']' after an item of items",
      3,
      2,
    ],
    ["binary content", '{"a": "\u0000"}', "file is binary, not YAML or JSON text", 1, 8],
    ["a comma between top-level values", '{"a": 1},\n{"b": 2}', "unexpected ','", 1, 9],
  ])("reports %s with its position", (_name, text, message, line, column) => {
    const events = split(text);
    expect(events.at(-1)).toEqual({
      issue: { rule: "yaml-syntax", message, source: { file: "f.json", line, column } },
    });
  });

  it("refuses an item whose text is over the parse limit without buffering it", () => {
    const big = "x".repeat(MAX_DOCUMENT_TEXT_BYTES + 1);
    const events = split(`{"items": [\n {"a": "${big}"},\n {"b": 1}]}`);
    expect(events[0]).toEqual({
      issue: expect.objectContaining({ rule: "too-large", source: { file: "f.json", line: 2, column: 2 } }),
    });
    expect(events[1]).toEqual({ item: { text: '{"b": 1}', line: 3, column: 2, keys: 1 } });
  });
});

describe("jsonInventoryStream", () => {
  it("measures the object, not the text: an indented 1.4 MiB item is read, a 1.6 MiB one is too large", () => {
    const padded = `{\n${" ".repeat(600 * 1024)}"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "${"x".repeat(1.4 * 1024 * 1024)}"}}`;
    const huge = `{"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "${"x".repeat(1.6 * 1024 * 1024)}"}}`;
    const { issues } = load(`{"kind": "List", "items": [\n${padded},\n${huge}\n]}`);
    expect(issues.map((found) => `${found.rule} ${found.source?.line}`)).toEqual(["too-large 4"]);
  });

  it("refuses annotations over Kubernetes' 256 KiB", () => {
    const host = makeBmh({ name: "a" });
    const annotated = {
      ...host,
      metadata: { ...(host["metadata"] as object), annotations: { note: "x".repeat(1.2 * 1024 * 1024) } },
    };
    const { inventory, issues } = load(JSON.stringify({ kind: "List", items: [annotated] }, null, 1));
    expect(inventory.size).toBe(0);
    expect(issues).toEqual([
      expect.objectContaining({
        rule: "too-large",
        path: "metadata.annotations",
        message: expect.stringMatching(/1229 KiB, over the Kubernetes limit of 256 KiB/),
      }),
    ]);
  });

  function load(text: string): ReturnType<InventoryBuilder["build"]> {
    const builder = new InventoryBuilder();
    const stream = jsonInventoryStream("f.json", builder);
    stream.write(new TextEncoder().encode(text));
    stream.end();
    return builder.build();
  }

  it("lends a typed list's kind to items that omit it, even when kind comes after items", () => {
    const item = kindless(makeBmh({ name: "a" }));
    const sorted = JSON.stringify({
      apiVersion: "metal3.io/v1alpha1",
      items: [item],
      kind: "BareMetalHostList",
    });
    const goOrder = JSON.stringify({
      kind: "BareMetalHostList",
      apiVersion: "metal3.io/v1alpha1",
      items: [item],
    });
    expect(load(sorted).inventory.hosts.map((host) => host.id)).toEqual(["metal3/a"]);
    expect(load(goOrder).inventory.hosts.map((host) => host.id)).toEqual(["metal3/a"]);
  });

  it("reports a broken item at its line and keeps reading the others", () => {
    const good = JSON.stringify(makeBmh({ name: "good" }));
    const { inventory, issues } = load(
      `{"kind": "List", "items": [\n{"kind": "BareMetalHost",\n "metadata": {"name": "a" "b"}},\n${good}]}`,
    );
    expect(inventory.hosts.map((host) => host.name)).toEqual(["good"]);
    expect(issues).toEqual([
      expect.objectContaining({
        rule: "yaml-syntax",
        source: expect.objectContaining({ file: "f.json", line: 3 }),
      }),
    ]);
  });

  // JSON.parse keeps the last of two equal keys: `"name": "a", "name": "b"` read as host b, silently,
  // where the same in YAML or in a JSON spec is an error.
  it.each([
    [
      "an item of a list",
      `{"kind": "List", "items": [\n{"kind": "BareMetalHost",\n "metadata": {"name": "a", "name": "b"}},\nGOOD]}`,
      3,
      28,
    ],
    [
      "a nested map",
      `{"kind": "List", "items": [\nGOOD,\n{"kind": "BareMetalHost", "metadata": {"name": "a"},\n "spec": {"online": true, "x": {}, "online": false}}]}`,
      4,
      36,
    ],
    [
      "a single object",
      `{"kind": "BareMetalHost", "metadata": {"name": "a"},\n "kind": "BareMetalHost"}\nGOOD`,
      2,
      2,
    ],
  ])(
    "refuses a duplicate key in %s as yaml-syntax at the key, as in YAML",
    (_name, template, line, column) => {
      const text = template.replace("GOOD", JSON.stringify(makeBmh({ name: "good" })));
      const { inventory, issues } = load(text);
      expect(inventory.hosts.map((host) => host.name)).toEqual(["good"]);
      expect(
        issues.map((found) => `${found.rule} ${found.path} ${found.source?.line}:${found.source?.column}`),
      ).toEqual([`yaml-syntax  ${line}:${column}`]);
      expect(issues[0]?.message).toMatch(/Map keys must be unique/);
    },
  );

  it("reads items whose colons sit inside strings or whose keys differ only in case", () => {
    const text = `{"kind": "List", "items": [{"kind": "BareMetalHost", "metadata": {"name": "a", "Name": "x", "labels": {"l": "a:b"}, "annotations": {"k": "x: y"}}}]}`;
    expect(load(text).issues).toEqual([]);
  });

  it("points inventory-invalid issues at the field inside a streamed item", () => {
    const bmh = makeBmh({ name: "a", bootMac: "nope", nics: [] });
    const text = `{"kind": "List", "items": [\n${JSON.stringify(bmh, null, 2)}\n]}`;
    const { issues } = load(text);
    const line = text.split("\n").findIndex((row) => row.includes('"bootMACAddress"')) + 1;
    expect(issues).toEqual([
      expect.objectContaining({
        rule: "inventory-invalid",
        path: "spec.bootMACAddress",
        source: { file: "f.json", line, column: 5 },
      }),
    ]);
  });
});

describe("streams on garbage", () => {
  const fragments = fc.array(
    fc.oneof(
      fc.constantFrom(
        "{",
        "}",
        "[",
        "]",
        '"',
        "\\",
        ",",
        ":",
        '"items"',
        '"kind"',
        '"List"',
        "\n",
        "é",
        "null",
        "1",
      ),
      fc.string(),
    ),
    { maxLength: 60 },
  );

  it("never throw: every problem is an issue (property)", () => {
    fc.assert(
      fc.property(fragments, (parts) => {
        const builder = new InventoryBuilder();
        const stream = jsonInventoryStream("f.json", builder);
        for (const part of parts) stream.write(new TextEncoder().encode(part));
        stream.end();
        expect(() => builder.build()).not.toThrow();
      }),
    );
  });
});
