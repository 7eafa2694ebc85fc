import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { clusterKey } from "../../synth/cluster-key.ts";
import type { SipClusterPlan } from "../../synth/plan/model.ts";
import type { SiteSettings } from "../../synth/schema/settings.ts";
import { secretFindings, secretMaterialIn } from "../../synth/rules/secrets.ts";
import { toYaml, toYamlStream } from "../../synth/codec/yaml-output.ts";
import { hasKubectl } from "../../test/harness.ts";
import {
  asKubeObject,
  objectsByFile,
  testApp,
  type KubeObject,
  validateKubernetesObject,
} from "../../test/support/charts.ts";
import { addSipClusterCharts } from "./index.ts";
import { examplePlan, sipPlan } from "../../test/support/sip.ts";
import { serviceObjectName } from "../../synth/names.ts";
import { dnsLabel } from "../../test/builders/inventory.ts";

/** The objects of each of a cluster's files, as synth writes them. */
function sipClusterObjects(cluster: SipClusterPlan, settings: SiteSettings): Map<string, unknown[]> {
  return objectsByFile(addSipClusterCharts(testApp(), cluster, settings));
}

function kubeObjects(files: Map<string, unknown[]>): KubeObject[] {
  return [...files.values()].flat().map(asKubeObject);
}

function rendered(plan: SipClusterPlan, settings = examplePlan().settings): string {
  return [...sipClusterObjects(plan, settings).entries()]
    .map(([file, objects]) => `# ${file}\n${toYamlStream(objects)}`)
    .join("");
}

/** A copy of `values` in a fixed scrambled order (every third, then the rest), never the original. */
function scrambled<T>(values: readonly T[]): T[] {
  const picked = values.filter((_, index) => index % 3 === 2);
  return [...picked, ...values.filter((_, index) => index % 3 !== 2)].reverse();
}

describe("addSipClusterCharts", () => {
  afterEach(() => {
    delete process.env.CDK8S_DISABLE_SORT;
  });

  it("renders one file per component the CR asks for, in name order", () => {
    const { plan, settings } = examplePlan();
    expect([...sipClusterObjects(plan, settings).keys()]).toEqual([
      "auth.yaml",
      "bmh-labels.yaml",
      "jumphost.yaml",
      "loadbalancer-controlplane.yaml",
      "loadbalancer-worker.yaml",
    ]);
    const jumpHostOnly = sipPlan({
      services: {
        jumpHost: [{ nodeInterfaceId: "oam-ipv4", nodePort: 30022, nodeSSHPrivateKeys: "keys" }],
      },
    });
    expect([...sipClusterObjects(jumpHostOnly, settings).keys()]).toEqual([
      "bmh-labels.yaml",
      "jumphost.yaml",
    ]);
    expect([...sipClusterObjects(sipPlan({ services: {} }), settings).keys()]).toEqual(["bmh-labels.yaml"]);
  });

  it("leaves bmh-labels.yaml out when no host gains or loses labels", () => {
    const empty = sipPlan({ controlPlane: { active: 0, standby: 0 }, worker: { active: 0, standby: 0 } });
    expect([...sipClusterObjects(empty, examplePlan().settings).keys()]).toEqual([
      "jumphost.yaml",
      "loadbalancer-controlplane.yaml",
      "loadbalancer-worker.yaml",
    ]);
  });

  it("gives every object a valid schema, the common labels and its sync wave; services live in the CR's namespace", () => {
    const { plan, settings } = examplePlan();
    const objects = kubeObjects(sipClusterObjects(plan, settings));
    // The label Job with its ServiceAccount, Role and RoleBinding; three objects per service; the auth
    // service's cert-manager Issuer and Certificate, and its two ConfigMaps for the tenant.
    expect(objects.length).toBe(4 + 3 * 4 + 2 + 2);
    for (const object of objects) {
      validateKubernetesObject(object);
      expect(object.metadata.labels).toMatchObject({ "metalsynth.io/cluster": "tenant-a" });
      if (object.kind === "Role" || object.kind === "RoleBinding") {
        expect(object.metadata.namespace).toBe("metal3");
        expect(object.metadata.annotations?.["argocd.argoproj.io/sync-wave"]).toBe("-1");
      } else if (object.metadata.name.startsWith("bmh-labels-tenant-a")) {
        expect(object.metadata.namespace).toBe("edge-sip");
        expect(object.metadata.annotations?.["argocd.argoproj.io/sync-wave"]).toBe("-1");
      } else {
        expect(object.metadata.namespace).toBe("edge-sip");
        expect(object.metadata.labels).toMatchObject({ "app.kubernetes.io/managed-by": "metalsynth" });
        expect(object.metadata.annotations?.["argocd.argoproj.io/sync-wave"]).toBe("0");
      }
    }
  });

  it("references Secrets by name and never carries key material or credentials", () => {
    const { plan, settings } = examplePlan();
    const files = sipClusterObjects(plan, settings);
    const text = rendered(plan, settings);
    expect(secretMaterialIn(text)).toBeUndefined();
    expect(secretFindings([...files.values()])).toEqual([]);
    expect(text).not.toMatch(/PRIVATE KEY|BEGIN OPENSSH/);
    expect(text).toContain("secretName: tenant-a-ssh-keys");
    expect(text).toContain("name: r01-node-01-bmc-secret");
    expect(kubeObjects(files).map((object) => object.kind)).not.toContain("Secret");
  });

  it("is byte-identical whatever order the plan lists hosts in, and independent of CDK8S_* variables", () => {
    const { plan, settings } = examplePlan();
    const first = rendered(plan, settings);
    expect(rendered({ ...plan, members: scrambled(plan.members) }, settings)).toBe(first);
    expect(rendered({ ...plan, members: [...plan.members].reverse() }, settings)).toBe(first);
    process.env.CDK8S_DISABLE_SORT = "1";
    expect(rendered(plan, settings)).toBe(first);
  });

  it("lets one App hold the charts of several clusters", () => {
    const { plan, settings } = examplePlan();
    const app = testApp();
    const other = { ...plan, key: clusterKey("edge-sip-b", "tenant-a"), namespace: dnsLabel("edge-sip-b") };
    const charts = [
      ...addSipClusterCharts(app, plan, settings).values(),
      ...addSipClusterCharts(app, other, settings).values(),
    ];
    expect(charts.map((chart) => chart.node.id)).toEqual([
      "edge-sip.tenant-a.auth",
      "edge-sip.tenant-a.bmh-labels",
      "edge-sip.tenant-a.jumphost",
      "edge-sip.tenant-a.loadbalancer-controlplane",
      "edge-sip.tenant-a.loadbalancer-worker",
      "edge-sip-b.tenant-a.auth",
      "edge-sip-b.tenant-a.bmh-labels",
      "edge-sip-b.tenant-a.jumphost",
      "edge-sip-b.tenant-a.loadbalancer-controlplane",
      "edge-sip-b.tenant-a.loadbalancer-worker",
    ]);
    expect(app.synthYaml()).toContain("namespace: edge-sip-b");
  });

  it.skipIf(!hasKubectl)("builds with kubectl kustomize", async () => {
    const { plan, settings } = examplePlan();
    const files = sipClusterObjects(plan, settings);
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-sip-"));
    for (const [file, objects] of files) await writeFile(path.join(dir, file), toYamlStream(objects));
    const resources = [...files.keys()];
    await writeFile(
      path.join(dir, "kustomization.yaml"),
      toYaml({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources }),
    );
    const output = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
    const built = parseAllDocuments(output).map((document) => asKubeObject(document.toJS()));
    expect(
      built.map((object) => `${object.kind}/${object.metadata.namespace}/${object.metadata.name}`).sort(),
    ).toEqual(
      kubeObjects(files)
        .map((object) => `${object.kind}/${object.metadata.namespace}/${object.metadata.name}`)
        .sort(),
    );
  });
});

describe("serviceObjectName", () => {
  it.each<[string, string, number, string | RegExp]>([
    ["the first service", "tenant-a", 0, "loadbalancer-controlplane-tenant-a"],
    ["a further service", "tenant-a", 2, "loadbalancer-controlplane2-tenant-a"],
    ["a long cluster name", "t".repeat(40), 0, /^loadbalancer-controlplane-t{28}-[0-9a-f]{8}$/],
  ])("names %s", (_, cluster, index, expected) => {
    const name = serviceObjectName("loadbalancer-controlplane", dnsLabel(cluster), index);
    if (typeof expected === "string") expect(name).toBe(expected);
    else expect(name).toMatch(expected);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
  });

  it("keeps shortened names apart", () => {
    const names = ["t".repeat(40), `${"t".repeat(40)}x`, "tenant-a", "tenant-a-b"].flatMap((cluster) =>
      [0, 1].map((index) => serviceObjectName("loadbalancer-controlplane", dnsLabel(cluster), index)),
    );
    expect(new Set(names).size).toBe(names.length);
  });
});
