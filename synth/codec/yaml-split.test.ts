import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { factsOf, kindless, kubectlYaml, makeBmh } from "../../test/builders/inventory.ts";
import type { Issue } from "../issue.ts";
import type { TextChunk } from "./chunks.ts";
import { MAX_DOCUMENT_TEXT_BYTES } from "../documents.ts";
import { InventoryBuilder } from "../inventory/load.ts";
import { yamlInventoryStream } from "../inventory/stream.ts";
import { YamlSplitter } from "./yaml-split.ts";

type Event =
  | { segment: TextChunk; partOfList: boolean }
  | { item: TextChunk }
  | "end"
  | { issue: Pick<Issue, "rule" | "message" | "source"> };

/** Every event of splitting `text`, written in pieces cut at `cuts` (character offsets). */
function split(text: string, cuts: readonly number[] = []): Event[] {
  const events: Event[] = [];
  const splitter = new YamlSplitter("f.yaml", {
    segment: (chunk, partOfList) => events.push({ segment: chunk, partOfList }),
    item: (chunk) => events.push({ item: chunk }),
    documentEnd: () => events.push("end"),
    issue: ({ rule, message, source }) => events.push({ issue: { rule, message, source } }),
  });
  let start = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    splitter.write(text.slice(start, cut));
    start = cut;
  }
  splitter.write(text.slice(start));
  splitter.end();
  return events;
}

const KUBECTL = `apiVersion: v1
items:
- apiVersion: metal3.io/v1alpha1
  kind: BareMetalHost
  metadata:
    name: a

# a comment between items
- apiVersion: metal3.io/v1alpha1
  kind: BareMetalHost
  metadata:
    name: b
    annotations:
      note: |
        - not an item
        items:
kind: List
metadata:
  resourceVersion: ""
`;

describe("YamlSplitter", () => {
  it("cuts a kubectl List into one chunk per item, keeping lines and columns", () => {
    expect(split(KUBECTL)).toEqual([
      { segment: { text: "apiVersion: v1", line: 1, column: 1 }, partOfList: true },
      {
        item: {
          text: "  apiVersion: metal3.io/v1alpha1\n  kind: BareMetalHost\n  metadata:\n    name: a\n\n# a comment between items",
          line: 3,
          column: 1,
        },
      },
      {
        item: {
          text: [
            "  apiVersion: metal3.io/v1alpha1",
            "  kind: BareMetalHost",
            "  metadata:",
            "    name: b",
            "    annotations:",
            "      note: |",
            "        - not an item",
            "        items:",
          ].join("\n"),
          line: 9,
          column: 1,
        },
      },
      {
        segment: { text: 'kind: List\nmetadata:\n  resourceVersion: ""', line: 17, column: 1 },
        partOfList: true,
      },
      "end",
    ]);
  });

  it("gives the same events however the text is cut (property)", () => {
    const whole = split(KUBECTL);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: KUBECTL.length - 1 }), { maxLength: 12 }),
        (cuts) => {
          expect(split(KUBECTL, cuts)).toEqual(whole);
        },
      ),
    );
  });

  it("reads items indented under items: too", () => {
    const events = split(
      "kind: List\nitems:\n  - kind: BareMetalHost\n    metadata: {name: a}\n  - kind: Secret\n",
    );
    expect(events).toEqual([
      { segment: { text: "kind: List", line: 1, column: 1 }, partOfList: true },
      { item: { text: "    kind: BareMetalHost\n    metadata: {name: a}", line: 3, column: 1 } },
      { item: { text: "    kind: Secret", line: 5, column: 1 } },
      "end",
    ]);
  });

  it("splits documents at --- and ..., and keeps directives with their document", () => {
    const text = "# head\n---\nkind: A\n---\n%YAML 1.2\n---\nkind: B\n...\nkind: C\r\n";
    expect(split(text)).toEqual([
      { segment: { text: "# head\n---\nkind: A", line: 1, column: 1 }, partOfList: false },
      "end",
      { segment: { text: "---\n%YAML 1.2\n---\nkind: B", line: 4, column: 1 }, partOfList: false },
      "end",
      { segment: { text: "kind: C", line: 9, column: 1 }, partOfList: false },
      "end",
    ]);
  });

  it.each<[string, string]>([
    ["flow items", "kind: List\nitems: []\n"],
    ["items: holding a mapping", "kind: Thing\nitems:\n  a: 1\nother: 2\n"],
    ["items: holding null", "kind: List\nitems:\n\nmetadata: {}\n"],
    ["a flow root", "{kind: List,\nitems:\n- a}\n"],
    ["a root that is a sequence", "- items:\n- a\n"],
    ["content on the --- line", "--- !!map\nitems:\n- a\n"],
  ])("reads %s as one whole document", (_name, text) => {
    const events = split(text);
    expect(events).toEqual([
      { segment: { text: text.trimEnd(), line: 1, column: 1 }, partOfList: false },
      "end",
    ]);
  });

  it("reports binary content and stops", () => {
    expect(split("kind: A\nname: \u0000\nkind: B\n")).toEqual([
      {
        issue: {
          rule: "yaml-syntax",
          message: "file is binary, not YAML or JSON text",
          source: { file: "f.yaml", line: 2, column: 1 },
        },
      },
    ]);
  });

  it("refuses an item whose text is over the parse limit without keeping its text", () => {
    const big = "x".repeat(MAX_DOCUMENT_TEXT_BYTES + 1);
    const events = split(`items:\n- a: ${big}\n- b: 1\n`);
    expect(events).toEqual([
      {
        issue: expect.objectContaining({ rule: "too-large", source: { file: "f.yaml", line: 2, column: 1 } }),
      },
      { item: { text: "  b: 1", line: 3, column: 1 } },
      "end",
    ]);
  });
});

describe("yamlInventoryStream", () => {
  function load(text: string): ReturnType<InventoryBuilder["build"]> {
    const builder = new InventoryBuilder();
    const stream = yamlInventoryStream("f.yaml", builder);
    stream.write(text);
    stream.end();
    return builder.build();
  }

  it("loads kubectl output, column-0 and indented, to the same hosts", () => {
    const items = [makeBmh({ name: "a", rack: "r1" }), makeBmh({ name: "b", sriov: true })];
    const flat = load([...kubectlYaml(items)].join(""));
    const indented = load([...kubectlYaml(items, 2)].join(""));
    expect(flat.issues).toEqual([]);
    expect(flat.inventory.hosts.map((host) => host.id)).toEqual(["metal3/a", "metal3/b"]);
    expect(indented.inventory.hosts.map(factsOf)).toEqual(flat.inventory.hosts.map(factsOf));
    expect(flat.inventory.hosts[1]?.source).toEqual({ file: "f.yaml", line: expect.any(Number), column: 3 });
  });

  it("lends a typed list's kind to kindless items, even when kind comes after items", () => {
    const item = kindless(makeBmh({ name: "a" }));
    const text = [...kubectlYaml([item])]
      .join("")
      .replace("apiVersion: v1", "apiVersion: metal3.io/v1alpha1")
      .replace("kind: List", "kind: BareMetalHostList");
    expect(load(text).inventory.hosts.map((host) => host.id)).toEqual(["metal3/a"]);
  });

  it("reports a syntax error inside an item at its line in the file and reads the other items", () => {
    const text = [...kubectlYaml([makeBmh({ name: "a" }), makeBmh({ name: "b" })])].join("");
    const lines = text.split("\n");
    const broken = lines.findIndex((line) => line.includes("name: a"));
    lines[broken] = "    name: [a";
    const { inventory, issues } = load(lines.join("\n"));
    expect(inventory.hosts.map((host) => host.name)).toEqual(["b"]);
    expect(issues.length).toBeGreaterThan(0);
    for (const found of issues) {
      expect(found.rule).toBe("yaml-syntax");
      expect(found.source?.line).toBeGreaterThanOrEqual(broken + 1);
      expect(found.source?.line).toBeLessThan(lines.findIndex((line) => line.includes("name: b")));
    }
  });

  it("reads multi-document YAML of single BMHs", () => {
    const text = [makeBmh({ name: "a" }), makeBmh({ name: "b" })]
      .map((bmh) => JSON.stringify(bmh))
      .join("\n---\n");
    const { inventory, issues } = load(text);
    expect(issues).toEqual([]);
    expect(inventory.hosts.map((host) => [host.name, host.source?.line])).toEqual([
      ["a", 1],
      ["b", 3],
    ]);
  });
});

describe("streams on garbage", () => {
  const fragments = fc.array(
    fc.oneof(
      fc.constantFrom(
        "items:\n",
        "- ",
        "  ",
        "\n",
        "---\n",
        "...\n",
        "kind: List\n",
        "&a ",
        "*a",
        "!!map",
        "#",
        "{",
        "[",
        "é",
        "\r\n",
      ),
      fc.string(),
    ),
    { maxLength: 60 },
  );

  it("never throw: every problem is an issue (property)", () => {
    fc.assert(
      fc.property(fragments, (parts) => {
        const builder = new InventoryBuilder();
        const stream = yamlInventoryStream("f.yaml", builder);
        for (const part of parts) stream.write(part);
        stream.end();
        expect(() => builder.build()).not.toThrow();
      }),
    );
  });
});
