import { describe, expect, it } from "vitest";
import { parseDocuments } from "../codec/read-documents.ts";
import { MAX_ANNOTATION_BYTES } from "../checked.ts";
import type { SourceDocument } from "../documents.ts";
import { readResources } from "../site/resources.ts";
import { reporter } from "./reporter.ts";
import { crMetadata } from "./schema.ts";

/** A CR of `kind` in spec-file YAML, with `metadata` lines (indented by four) after its name. */
function cr(kind: "Provisioning" | "Software" | "Cluster" | "SIPCluster", metadata: string): string {
  const head =
    kind === "SIPCluster"
      ? "apiVersion: airship.airshipit.org/v1\nkind: SIPCluster"
      : `apiVersion: bpa.akraino.org/v1alpha1\nkind: ${kind}`;
  const spec = {
    Provisioning: "spec:\n  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n",
    Software: "spec:\n  masterSoftware: [htop]\n",
    Cluster: "spec:\n  provisioningCR: alpha\n",
    SIPCluster:
      "spec:\n  nodes:\n    ControlPlane:\n      labelSelector: {matchLabels: {flavor: cp}}\n      count: {active: 1}\n",
  }[kind];
  return `${head}\nmetadata:\n  name: alpha\n  namespace: edge-a\n${metadata}${spec}`;
}

/** The `metadata-invalid` findings of `yaml`, as `rule path line`, and whether the CR was kept. */
function metadataFindings(yaml: string): { found: string[]; kept: number } {
  const parsed = parseDocuments("specs/test.yaml", yaml);
  expect(parsed.issues).toEqual([]);
  const read = readResources(parsed.documents);
  return {
    found: read.issues.map((found) => `${found.rule} ${found.path} ${found.source?.line}`),
    kept: read.resources.length,
  };
}

describe("metadata-invalid: labels and annotations the API server accepts", () => {
  it.each([
    ["no labels or annotations", cr("Provisioning", "")],
    ["a plain label", cr("Provisioning", "  labels:\n    cluster: alpha\n")],
    [
      "prefixed keys, mixed case, '_' and '.' in names and values",
      cr("Software", "  labels:\n    app.kubernetes.io/name: A-b_c.9\n    example.com/My_Name.v2: x\n"),
    ],
    ["an empty label value", cr("Cluster", '  labels:\n    team: ""\n')],
    [
      "a name part and a value of 63, a prefix of 253",
      cr(
        "SIPCluster",
        `  labels:\n    ${"p".repeat(63)}.${"q".repeat(63)}.${"r".repeat(63)}.${"s".repeat(61)}/${"n".repeat(63)}: ${"v".repeat(63)}\n`,
      ),
    ],
    [
      "an annotation key with an upper-case prefix, which the API server lowercases before checking",
      cr(
        "Provisioning",
        `  annotations:\n    Example.COM/Note: "any text at all: spaces, 'quotes' and yes"\n`,
      ),
    ],
    [
      "multi-line annotation values",
      cr("SIPCluster", "  annotations:\n    note: |\n      two\n      lines\n"),
    ],
  ])("accepts %s", (_name, yaml) => {
    expect(metadataFindings(yaml)).toEqual({ found: [], kept: 1 });
  });

  it.each([
    [
      "a label value with a space",
      "Provisioning",
      '  labels:\n    team: "team a"\n',
      "metadata.labels.team 7",
    ],
    ["a label key with a space", "Software", '  labels:\n    "bad key": x\n', 'metadata.labels["bad key"] 7'],
    ["a label key with two '/'", "Cluster", "  labels:\n    a/b/c: x\n", "metadata.labels.a/b/c 7"],
    [
      "a label key with an upper-case prefix",
      "SIPCluster",
      "  labels:\n    Example.com/x: y\n",
      'metadata.labels["Example.com/x"] 7',
    ],
    ["a label key with an empty prefix", "Provisioning", "  labels:\n    /x: y\n", "metadata.labels./x 7"],
    [
      "a label key whose name part is 64 long",
      "Provisioning",
      `  labels:\n    ${"k".repeat(64)}: y\n`,
      `metadata.labels.${"k".repeat(64)} 7`,
    ],
    [
      "a label value 64 long",
      "Software",
      `  labels:\n    team: ${"v".repeat(64)}\n`,
      "metadata.labels.team 7",
    ],
    ["a label value that starts with '-'", "Cluster", "  labels:\n    team: -a\n", "metadata.labels.team 7"],
    [
      "an annotation key with spaces",
      "SIPCluster",
      "  annotations:\n    my note: hello\n",
      'metadata.annotations["my note"] 7',
    ],
    [
      "an annotation key with an empty name part",
      "Provisioning",
      "  annotations:\n    example.com/: x\n",
      'metadata.annotations["example.com/"] 7',
    ],
  ])("refuses %s (%s)", (_name, kind, metadata, where) => {
    const yaml = cr(kind as Parameters<typeof cr>[0], metadata);
    expect(metadataFindings(yaml)).toEqual({ found: [`metadata-invalid ${where}`], kept: 0 });
  });

  it("says what it found, what it expected, and the nearest value that would do", () => {
    const read = readResources(
      parseDocuments("specs/test.yaml", cr("Provisioning", '  labels:\n    "bad key": "team a"\n')).documents,
    );
    expect(read.issues.map((found) => found.message)).toEqual([
      `label key "bad key" is not a qualified name (its name part "bad key" has a character other than letters, digits, '-', '_' and '.', or does not start and end with a letter or digit): expected a qualified name: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, after an optional DNS-1123 subdomain and '/' (example.com/My_name); label "bad key" has value "team a", expected a label value: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit (did you mean "team-a"?)`,
    ]);
  });

  it("reports every bad entry of a CR, and remembers the CR as invalid by its cluster label", () => {
    const yaml = cr(
      "Software",
      '  labels:\n    cluster: alpha\n    "a b": x\n  annotations:\n    "c d": y\n    ok: fine\n',
    );
    const read = readResources(parseDocuments("specs/test.yaml", yaml).documents);
    expect(read.issues.map((found) => `${found.rule} ${found.path}`)).toEqual([
      'metadata-invalid metadata.labels["a b"]',
      'metadata-invalid metadata.annotations["c d"]',
    ]);
    expect(read.invalid).toEqual([
      { kind: "Software", namespace: "edge-a", name: "alpha", cluster: "alpha" },
    ]);
  });

  it("leaves a label of another type than string to the schema: one mistake, one finding", () => {
    const read = readResources(
      parseDocuments("specs/test.yaml", cr("Cluster", "  labels:\n    replicas: 3\n")).documents,
    );
    expect(read.issues.map((found) => `${found.rule} ${found.path}`)).toEqual([
      "schema metadata.labels.replicas",
    ]);
  });

  it("refuses annotations over 256 KiB in all, as the API server adds keys and values up", () => {
    const document: SourceDocument = {
      file: "review",
      index: 0,
      value: {},
      position: () => ({ file: "review", line: 1, column: 1 }),
    };
    const report = reporter({ document, basePath: [], key: "SIPCluster/edge-a/alpha" });
    const at = (bytes: number) => ({ annotations: { note: "x".repeat(bytes - "note".length) } });
    expect(crMetadata(at(MAX_ANNOTATION_BYTES), report)).toEqual({
      labels: {},
      annotations: at(MAX_ANNOTATION_BYTES).annotations,
    });
    const over = crMetadata(at(MAX_ANNOTATION_BYTES + 1), report);
    expect(
      Array.isArray(over) && over.map((found) => `${found.rule} ${found.path} ${found.message}`),
    ).toEqual([
      "metadata-invalid metadata.annotations annotations total 262145 bytes, over the Kubernetes limit of 262144 (256 KiB of keys and values)",
    ]);
  });
});
