import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { helmChartFiles } from "./helm.ts";
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE, webhookManifests } from "./index.ts";

const files = helmChartFiles("9.8.7");

describe("helmChartFiles", () => {
  it("has a template for every object but the CRDs, which go in crds/", () => {
    const objects = webhookManifests({ serviceMonitor: true }) as {
      kind: string;
      metadata: { name: string };
    }[];
    for (const object of objects) {
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
  });

  it("leaves no marker in any file, and every template action balanced", () => {
    for (const [file, content] of files) {
      expect(content, file).not.toMatch(/helmx\w*x/);
      const opened = content.match(/\{\{-? (if|range|with) /g)?.length ?? 0;
      const closed = content.match(/\{\{-? end \}\}/g)?.length ?? 0;
      expect(closed, file).toBe(opened);
    }
  });

  it("takes its defaults from the cdk8s chart's, and its version from the argument", () => {
    const values = parse(files.get("values.yaml") ?? "") as Record<string, unknown>;
    expect(values).toMatchObject({
      namespace: DEFAULT_NAMESPACE,
      image: DEFAULT_IMAGE,
      replicas: 2,
      inventoryNamespaces: ["metal3"],
      certManager: { enabled: true },
      serviceMonitor: { enabled: false },
      networkPolicy: { enabled: true },
      priorityClassName: "system-cluster-critical",
    });
    expect(parse(files.get("Chart.yaml") ?? "")).toMatchObject({
      apiVersion: "v2",
      name: "metalsynth",
      version: "9.8.7",
      appVersion: "9.8.7",
    });
    const schema = JSON.parse(files.get("values.schema.json") ?? "") as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(values).sort());
  });
});
