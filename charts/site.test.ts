import { describe, expect, it } from "vitest";
import { clusterKey } from "../synth/cluster-key.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { RenderPlan } from "../synth/plan/render-plan.ts";
import { DEFAULT_SETTINGS, type SiteSettings } from "../synth/schema/settings.ts";
import { addSiteCharts } from "./site.ts";
import { sipHost, sipPlan } from "../test/support/sip.ts";
import { bpaPlan, synthObjects, testApp } from "../test/support/charts.ts";
import { dnsLabel } from "../test/builders/inventory.ts";

/**
 * A site whose BPA cluster and SIPCluster share the name `edge-sip/tenant-a`, and a SIPCluster gone
 * from the site that still has a host to release.
 */
function sitePlan(): RenderPlan {
  return {
    clusters: [bpaPlan({ namespace: "edge-sip", cluster: "tenant-a", masterSoftware: ["htop"] }), sipPlan()],
    retired: [
      {
        key: clusterKey("edge-sip", "tenant-old"),
        namespace: dnsLabel("edge-sip"),
        name: dnsLabel("tenant-old"),
        released: [sipHost("wk-9", "worker", "10.41.0.29")],
      },
    ],
    lock: EMPTY_LOCK,
    allocations: [],
    specs: [],
  };
}

function withTargets(targets: SiteSettings["gitops"]["targets"]): SiteSettings {
  return { ...DEFAULT_SETTINGS, gitops: { ...DEFAULT_SETTINGS.gitops, targets } };
}

describe("addSiteCharts", () => {
  it("renders a BPA cluster and a SIPCluster of one name into one directory, with one Flux Kustomization", () => {
    const { clusters, wiring } = addSiteCharts(sitePlan(), DEFAULT_SETTINGS, testApp);
    expect(
      clusters.map(({ key, directory, files }) => ({ key, directory, files: [...files.keys()] })),
    ).toEqual([
      {
        key: "edge-sip/tenant-a",
        directory: "clusters/edge-sip/tenant-a",
        files: [
          "cluster-configmap.yaml",
          "kud-installer.yaml",
          "software.yaml",
          "bmh-labels.yaml",
          "jumphost.yaml",
          "loadbalancer-controlplane.yaml",
          "loadbalancer-worker.yaml",
        ],
      },
      // A retired SIPCluster's directory only removes its hosts' labels.
      { key: "edge-sip/tenant-old", directory: "clusters/edge-sip/tenant-old", files: ["bmh-labels.yaml"] },
    ]);
    expect(clusters[0]?.plans.map((plan) => plan.kind)).toEqual(["bpa", "sip"]);
    expect(clusters[1]?.retired?.key).toBe("edge-sip/tenant-old");
    expect([...wiring.keys()]).toEqual([
      "argocd/applicationset.yaml",
      "flux/edge-sip.tenant-a.yaml",
      "flux/edge-sip.tenant-old.yaml",
    ]);
  });

  it("has the retired cluster's label Job remove the labels of its released host", () => {
    const { clusters } = addSiteCharts(sitePlan(), DEFAULT_SETTINGS, testApp);
    const objects = synthObjects(clusters[1]!.files.get("bmh-labels.yaml")!);
    expect(objects.map((object) => object.kind)).toEqual(["ServiceAccount", "Role", "RoleBinding", "Job"]);
    const job = objects.find((object) => object.kind === "Job") as
      | { metadata: { name: string }; spec: { template: { spec: { containers: { args: string[] }[] } } } }
      | undefined;
    expect(job?.metadata.name).toMatch(/^bmh-labels-tenant-old-[0-9a-f]{8}$/);
    expect(job?.spec.template.spec.containers.map((container) => container.args)).toEqual([
      [
        "metal3",
        "wk-9",
        "--",
        "metalsynth.io/cluster-",
        "sip.airshipit.org/cluster-namespace-",
        "sip.airshipit.org/cluster-name-",
        "sip.airshipit.org/node-type-",
      ],
    ]);
  });

  it("has each Flux Kustomization of a directory with a label Job report that Job's health, and no other", () => {
    const { clusters, wiring } = addSiteCharts(sitePlan(), DEFAULT_SETTINGS, testApp);
    const checks = (file: string) =>
      synthObjects(wiring.get(file)!)[0]?.["spec"] as { healthChecks?: unknown };
    const jobName = (index: number) =>
      synthObjects(clusters[index]!.files.get("bmh-labels.yaml")!).find((object) => object.kind === "Job")
        ?.metadata.name;
    expect(checks("flux/edge-sip.tenant-a.yaml").healthChecks).toEqual([
      { apiVersion: "batch/v1", kind: "Job", name: jobName(0), namespace: "edge-sip" },
    ]);
    expect(checks("flux/edge-sip.tenant-old.yaml").healthChecks).toEqual([
      { apiVersion: "batch/v1", kind: "Job", name: jobName(1), namespace: "edge-sip" },
    ]);
    const bpaOnly = addSiteCharts(
      {
        clusters: [bpaPlan({ namespace: "edge-a", cluster: "cluster-east" })],
        retired: [],
        allocations: [],
        specs: [],
      },
      DEFAULT_SETTINGS,
      testApp,
    );
    expect(
      synthObjects(bpaOnly.wiring.get("flux/edge-a.cluster-east.yaml")!)[0]?.["spec"],
    ).not.toHaveProperty("healthChecks");
  });

  it("renders only the GitOps targets the site asks for", () => {
    const wiringFor = (targets: SiteSettings["gitops"]["targets"]) => [
      ...addSiteCharts(sitePlan(), withTargets(targets), testApp).wiring.keys(),
    ];
    expect(wiringFor(["argocd"])).toEqual(["argocd/applicationset.yaml"]);
    expect(wiringFor(["flux"])).toEqual(["flux/edge-sip.tenant-a.yaml", "flux/edge-sip.tenant-old.yaml"]);
    expect(wiringFor([])).toEqual([]);
  });

  it("gives edge-a/cluster-east and edge/a-cluster-east a Flux file each (issue #21 case 4)", () => {
    const plan: RenderPlan = {
      clusters: [
        bpaPlan({ namespace: "edge", cluster: "a-cluster-east" }),
        bpaPlan({ namespace: "edge-a", cluster: "cluster-east" }),
      ],
      retired: [],
      lock: EMPTY_LOCK,
      allocations: [],
      specs: [],
    };
    const { wiring } = addSiteCharts(plan, withTargets(["flux"]), testApp);
    expect([...wiring.keys()]).toEqual(["flux/edge-a-cluster-east.yaml", "flux/edge-a.cluster-east.yaml"]);
    expect([...wiring.values()].map((chart) => synthObjects(chart)[0]?.metadata.name)).toEqual([
      "edge-a-cluster-east",
      "edge-a.cluster-east",
    ]);
  });

  it("lets one App hold the whole site, as `npx cdk8s synth` does", () => {
    const app = testApp();
    addSiteCharts(sitePlan(), DEFAULT_SETTINGS, () => app);
    expect(() => app.synthYaml()).not.toThrow();
  });
});
