import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { REPO } from "../../test/harness.ts";
import {
  documentedValues,
  HELM_CHART_DIR,
  helmChartFiles,
  KUBE_VERSION,
  valueAt,
  type ValueSchema,
} from "./helm.ts";
import { DEFAULT_IMAGE, PACKAGE_VERSION, webhookManifests } from "./index.ts";

const files = helmChartFiles("9.8.7", "the license\n");

describe("helmChartFiles", () => {
  it("has a template for every object but the CRDs, which go in crds/, and the Namespace, which is the release's", () => {
    const objects = webhookManifests({ serviceMonitor: true }) as {
      kind: string;
      metadata: { name: string };
    }[];
    for (const object of objects.filter((candidate) => candidate.kind !== "Namespace")) {
      // The webhook's objects by what their name adds to its name; the status reporter's to metalsynth's.
      const { name } = object.metadata;
      const suffix = name.startsWith("metalsynth-status")
        ? name.slice("metalsynth".length)
        : name.slice("metalsynth-webhook".length);
      const file =
        object.kind === "CustomResourceDefinition"
          ? `crds/${name}.yaml`
          : `templates/${object.kind.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase()}${suffix}.yaml`;
      expect(files.has(file), file).toBe(true);
    }
    expect(files.has("templates/namespace.yaml")).toBe(false);
    expect(files.get("LICENSE")).toBe("the license\n");
  });

  it("leaves no marker in any file, and every template action balanced", () => {
    for (const [file, content] of files) {
      expect(content, file).not.toMatch(/helmx\w*x/);
      const opened = content.match(/\{\{-? (if|range|with|define) /g)?.length ?? 0;
      const closed = content.match(/\{\{-? end -?\}\}/g)?.length ?? 0;
      expect(closed, file).toBe(opened);
    }
  });

  it("names every namespaced object into the release's namespace, and every name after the release", () => {
    for (const [file, content] of files) {
      if (!file.startsWith("templates/") || !file.endsWith(".yaml")) continue;
      expect(content, file).not.toContain(".Values.namespace");
      // The admissions ConfigMap keeps the name the webhook looks for (decision 0056).
      const fixed = content.replaceAll("metalsynth-webhook-admissions", "");
      expect(fixed, file).not.toMatch(/metalsynth-(webhook|status)/);
      expect(content, file).toMatch(/\{\{- include "metalsynth\.labels" [$.] \| nindent 4 \}\}/);
    }
  });

  it("takes its defaults from the cdk8s chart's, and its version from the argument", () => {
    const values = parse(files.get("values.yaml") ?? "") as Record<string, unknown>;
    expect(values).toMatchObject({
      image: { repository: DEFAULT_IMAGE.split(":")[0], tag: "" },
      replicas: 2,
      inventoryNamespaces: ["metal3"],
      certManager: { enabled: true },
      serviceMonitor: { enabled: false },
      networkPolicy: { enabled: true },
      priorityClassName: "system-cluster-critical",
      podDisruptionBudget: { enabled: true, maxUnavailable: 1 },
      webhook: { failurePolicy: "Fail", timeoutSeconds: 5 },
      enabled: true,
      global: {},
    });
    // No tag: the chart's appVersion, the package's version, as the cdk8s chart's image.
    expect(DEFAULT_IMAGE).toBe(`${String(valueAt(values, "image.repository"))}:${PACKAGE_VERSION}`);
    expect(parse(files.get("Chart.yaml") ?? "")).toMatchObject({
      apiVersion: "v2",
      name: "metalsynth",
      version: "9.8.7",
      appVersion: "9.8.7",
      kubeVersion: KUBE_VERSION,
    });
  });

  it("tells Artifact Hub its license, image and every CRD of crds/", () => {
    const annotations = (parse(files.get("Chart.yaml") ?? "") as { annotations: Record<string, string> })
      .annotations;
    expect(annotations["artifacthub.io/license"]).toBe("Apache-2.0");
    expect(parse(annotations["artifacthub.io/images"] ?? "")).toEqual([
      { name: "metalsynth", image: "metalsynth:9.8.7" },
    ]);
    const crds = parse(annotations["artifacthub.io/crds"] ?? "") as { name: string }[];
    expect(crds.map((crd) => `crds/${crd.name}.yaml`).sort()).toEqual(
      [...files.keys()].filter((file) => file.startsWith("crds/")).sort(),
    );
  });
});

describe("the committed chart's values README", () => {
  const directory = path.join(REPO, HELM_CHART_DIR);
  const read = (file: string) => readFileSync(path.join(directory, file), "utf8");
  const values: unknown = parse(read("values.yaml"));
  const schema = JSON.parse(read("values.schema.json")) as ValueSchema;
  /** README.md's table: value path → its default as written. */
  const rows = new Map(
    [...read("README.md").matchAll(/^\| `([^`]+)` \| [^|]+ \| `(.*)` \| (.+) \|$/gm)].map((match) => [
      match[1] ?? "",
      { default: match[2] ?? "", description: match[3] ?? "" },
    ]),
  );

  it("lists every value of the schema once, with values.yaml's default and a description", () => {
    const documented = documentedValues(schema).map(([key]) => key);
    expect([...rows.keys()]).toEqual(documented);
    for (const [key, row] of rows) {
      expect(JSON.parse(row.default), key).toEqual(valueAt(values, key));
      expect(row.description.trim(), key).not.toBe("");
    }
  });

  it("leaves no value of values.yaml out", () => {
    /** The paths of values.yaml, objects walked into where the schema lists their properties. */
    const paths = (at: unknown, schemaAt: typeof schema, prefix: string): string[] =>
      Object.entries(at as Record<string, unknown>).flatMap(([key, value]) => {
        const child = schemaAt.properties?.[key];
        return child?.properties !== undefined
          ? paths(value, child, `${prefix}${key}.`)
          : [`${prefix}${key}`];
      });
    expect(paths(values, schema, "").sort()).toEqual([...rows.keys()].sort());
  });
});
