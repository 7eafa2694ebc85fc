import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { toYaml, toYamlStream } from "./yaml-output.ts";

/** What toYaml must equal byte for byte: the library with metalsynth's options. */
const library = (value: unknown) =>
  stringify(value, { lineWidth: 0, indent: 2, aliasDuplicateObjects: false });

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

describe("toYamlStream", () => {
  it("separates documents with --- and ends with a newline", () => {
    expect(toYamlStream([{ a: 1 }, { b: [2] }])).toBe("a: 1\n---\nb:\n  - 2\n");
  });
});
