import { afterEach, describe, expect, it } from "vitest";
import { toYamlStream } from "../synth/codec/yaml-output.ts";
import type { BpaRender } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { addBpaClusterCharts } from "./index.ts";
import {
  asKubeObject,
  bpaPlan,
  objectsByFile,
  settings,
  testApp,
  validateKubernetesObject,
  type KubeObject,
} from "../test/support/charts.ts";

const WITH_SOFTWARE = { masterSoftware: ["htop"], workerSoftware: ["curl=7.81.0-1ubuntu1.15"] };

/** The objects of each of a cluster's files. */
function bpaClusterObjects(cluster: BpaRender, siteSettings: SiteSettings): Map<string, unknown[]> {
  return objectsByFile(addBpaClusterCharts(testApp(), cluster, siteSettings));
}

function kubeObjects(files: Map<string, unknown[]>): KubeObject[] {
  return [...files.values()].flat().map((value) => {
    const object = asKubeObject(value);
    validateKubernetesObject(object);
    return object;
  });
}

describe("addBpaClusterCharts", () => {
  afterEach(() => {
    delete process.env.CDK8S_DISABLE_SORT;
  });

  it("renders one file per component, in name order", () => {
    expect([...bpaClusterObjects(bpaPlan(), settings()).keys()]).toEqual([
      "cluster-configmap.yaml",
      "kud-installer.yaml",
    ]);
    expect([...bpaClusterObjects(bpaPlan(WITH_SOFTWARE), settings()).keys()]).toEqual([
      "cluster-configmap.yaml",
      "kud-installer.yaml",
      "software.yaml",
    ]);
  });

  it("gives every object a valid schema, the CR's namespace, the common labels and its file's sync wave", () => {
    // docs/contract.md §4: the installer (with the ConfigMaps it and its consumers read) is wave 1, software 2.
    const waves: Record<string, string> = {
      "cluster-configmap.yaml": "1",
      "kud-installer.yaml": "1",
      "software.yaml": "2",
    };
    const files = bpaClusterObjects(bpaPlan({ ...WITH_SOFTWARE, namespace: "edge-b" }), settings());
    expect([...files.keys()]).toEqual(Object.keys(waves));
    for (const [file, values] of files) {
      const objects = kubeObjects(new Map([[file, values]]));
      expect(objects.length, file).toBeGreaterThan(0);
      for (const object of objects) {
        expect(object.metadata.namespace).toBe("edge-b");
        expect(object.metadata.labels).toMatchObject({
          "app.kubernetes.io/managed-by": "metalsynth",
          "metalsynth.io/cluster": "cluster-east",
        });
        expect(object.metadata.annotations, `${file} ${object.kind}`).toEqual({
          "argocd.argoproj.io/sync-wave": waves[file],
          "argocd.argoproj.io/sync-options": "Delete=false",
        });
      }
    }
  });

  it("is byte-identical across runs and independent of CDK8S_* environment variables", () => {
    const yaml = () =>
      [...bpaClusterObjects(bpaPlan(WITH_SOFTWARE), settings()).entries()]
        .map(([file, objects]) => `# ${file}\n${toYamlStream(objects)}`)
        .join("");
    const first = yaml();
    expect(yaml()).toBe(first);
    process.env.CDK8S_DISABLE_SORT = "1";
    expect(yaml()).toBe(first);
  });

  it("references the SSH key Secret and never contains key material", () => {
    const text = JSON.stringify([...bpaClusterObjects(bpaPlan(WITH_SOFTWARE), settings()).values()]);
    expect(text).toContain('"secretName":"ssh-key-secret"');
    expect(text).not.toMatch(/PRIVATE KEY|ssh-rsa|password/i);
  });
});
