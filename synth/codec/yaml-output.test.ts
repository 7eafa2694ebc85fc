import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { LIBRARY_OPTIONS, toYaml, toYamlStream } from "./yaml-output.ts";

/** What toYaml must equal byte for byte: the library with metalsynth's options. */
const library = (value: unknown) => stringify(value, LIBRARY_OPTIONS);

/**
 * Strings built from the pieces the library's scalar choices turn on: indicators, `: ` and ` #`,
 * quotes, newlines (leading, trailing, repeated), blanks around them, document markers, and text
 * that reads as a number, boolean or null.
 */
const tricky = fc
  .array(
    fc.constantFrom(
      "a",
      "Z",
      "0",
      "7",
      "1.5",
      "0x1F",
      "0o7",
      "1e3",
      ".inf",
      "true",
      "Null",
      "~",
      " ",
      "  ",
      "\t",
      "\n",
      "\n\n",
      ":",
      ": ",
      "#",
      " #",
      "-",
      "- ",
      "?",
      ",",
      "[",
      "]",
      "{",
      "}",
      "&",
      "*",
      "!",
      "|",
      ">",
      "'",
      '"',
      "%",
      "@",
      "`",
      "\\",
      "---",
      "...",
      "=",
      "<<",
      "yes",
      "On",
      "n",
      "_",
      "0b1",
      "0O7",
      "0X",
      "e5",
      "12:30",
      "2001-12-14",
      "/",
      "é",
      "\u00a0",
      "\u2028",
      "\r",
      "\u0007",
      "\u007f",
      "\u0085",
      "\ud800",
      "\u{1F600}",
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(""));

// Undefined (left out of maps by the library) is rare, so most documents take the direct writer.
const scalar = fc.oneof(
  { arbitrary: tricky, weight: 6 },
  { arbitrary: fc.string(), weight: 2 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double(), weight: 1 },
  { arbitrary: fc.boolean(), weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: fc.constant(undefined), weight: 1 },
);
const key = fc.oneof(
  tricky,
  fc.string({ maxLength: 4 }),
  fc.constantFrom("apiVersion", "1", "", "a".repeat(1030)),
);

const { value: document } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
}));

describe("toYaml", () => {
  it("writes what the yaml library writes, for any JSON-like document", () => {
    fc.assert(
      fc.property(document, (value) => {
        expect(toYaml(value)).toBe(library(value));
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ["a Kubernetes object", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: {} }],
    ["nested sequences", { a: [[1, [2, []]], [{}], [{ b: [] }]] }],
    ["a literal block", { data: { "hosts.ini": "[all]\nnode-1 ansible_host=10.0.0.1\n" } }],
    ["a block kept open", { a: ["x\n\n", "\n\nx\n", "  x\ny", "x\n  y\n\n\nz"] }],
    ["sync waves and quantities", { "sync-wave": "-1", cpu: "500m", replicas: 3, port: "8080" }],
    ["document markers, after a line separator too", { "---": "...", "\u2028---": ["a\u2028%"] }],
    ["a root sequence", ["a", { b: "c" }]],
    ["empty collections at the root", {}],
  ])("writes %s as the library does", (_name, value) => {
    expect(toYaml(value)).toBe(library(value));
  });
});

/**
 * Strings a YAML 1.1 reader (go-yaml in kubectl, Flux, Argo CD, Helm; PyYAML) resolves to a boolean,
 * null, number, timestamp or merge key when written plain, and the YAML 1.2 core schema to a string.
 */
const YAML_1_1_WORDS = [
  ...["y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO"],
  ...["on", "On", "ON", "off", "Off", "OFF"],
  ...["1_000", "0b101", "-0b1", "017", "0o17", "+0o17", "0O17", "0X1F", "+_1", "1_", "09"],
  ...["1_000.5", ".5_0", "1e_5", "e5", "1.", "190:20:30", "190:20:30.15", "-1:20"],
  ...["2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10"],
  ...["<<", "="],
];

/** Strings every reader reads as themselves: written plain, as before. */
const PLAIN_STRINGS = [
  "yess",
  "onion",
  "10.41.0.11",
  "1.2.3",
  "500m",
  "4Gi",
  "00:c6:14:04:61:b3",
  "v1.6",
  "o",
];

describe("toYaml under YAML 1.1 readers", () => {
  it.each(YAML_1_1_WORDS)("quotes %s, as a value and as a key", (word) => {
    const text = toYaml({ [word]: word });
    expect(text).toBe(`${JSON.stringify(word)}: ${JSON.stringify(word)}\n`);
    expect(parse(text, { version: "1.1" })).toEqual({ [word]: word });
  });

  it.each(PLAIN_STRINGS)("writes %s plain", (word) => {
    expect(toYaml({ key: word })).toBe(`key: ${word}\n`);
  });

  it("writes strings that read back as the same strings under YAML 1.1 and 1.2", () => {
    fc.assert(
      fc.property(fc.dictionary(key, tricky, { maxKeys: 4 }), (value) => {
        const text = toYaml({ metadata: { labels: value } });
        expect(parse(text, { version: "1.1" })).toEqual({ metadata: { labels: value } });
        expect(parse(text)).toEqual({ metadata: { labels: value } });
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ["a line separator", "a\u2028b", String.raw`"a\u2028b"`],
    ["a paragraph separator", "\u2029", String.raw`"\u2029"`],
    ["a next line, with a tab", "a\u0085\tb", String.raw`"a\u0085\tb"`],
    ["a non-character", "a\uFFFE", String.raw`"a\ufffe"`],
    ["a line separator in lines", "a\u2028\nb\n", String.raw`"a\u2028\nb\n"`],
    ["blank lines", " \n", String.raw`" \n"`],
  ])("writes %s escaped, as a value and as a key: libyaml breaks lines there", (_name, value, written) => {
    expect(toYaml({ [value]: value })).toBe(`${written}: ${written}\n`);
    expect(parse(toYaml({ [value]: value }))).toEqual({ [value]: value });
  });
});

describe("toYamlStream", () => {
  it("separates documents with --- and ends with a newline", () => {
    expect(toYamlStream([{ a: 1 }, { b: [2] }])).toBe("a: 1\n---\nb:\n  - 2\n");
  });
});
