import { describe, expect, it } from "vitest";
import { synthObjects, testApp, validateKubernetesObject } from "../test-support.ts";
import { BmhLabelsChart } from "./bmh-labels.ts";
import { SIP_HOSTS, sipHost, sipPlan } from "./test-support.ts";
import type { SipClusterPlan } from "../../synth/plan/model.ts";

const ANNOTATIONS = {
  "argocd.argoproj.io/compare-options": "IgnoreExtraneous",
  "argocd.argoproj.io/sync-options": "ServerSideApply=true,Validate=false,Prune=false,Delete=false",
  "argocd.argoproj.io/sync-wave": "-1",
  "kustomize.toolkit.fluxcd.io/prune": "disabled",
};

const patch = (name: string, nodeType?: string) => ({
  apiVersion: "metal3.io/v1alpha1",
  kind: "BareMetalHost",
  metadata: {
    annotations: ANNOTATIONS,
    ...(nodeType && {
      labels: {
        "metalsynth.io/cluster": "tenant-a",
        "sip.airshipit.org/cluster-name": "tenant-a",
        "sip.airshipit.org/cluster-namespace": "edge-sip",
        "sip.airshipit.org/node-type": nodeType,
      },
    }),
    name,
    namespace: "metal3",
  },
});

function render(cluster: SipClusterPlan) {
  return synthObjects(new BmhLabelsChart(testApp(), "bmh-labels", { cluster }));
}

describe("BmhLabelsChart", () => {
  it("patches every member, standby hosts too, with the three SIP labels in the BMH's namespace", () => {
    // cp-3 is the ControlPlane standby; wk-3 is not needed.
    expect(render(sipPlan())).toEqual([
      patch("cp-1", "ControlPlane"),
      patch("cp-2", "ControlPlane"),
      patch("cp-3", "ControlPlane"),
      patch("wk-1", "Worker"),
      patch("wk-2", "Worker"),
    ]);
  });

  it("gives a released host a patch without labels, so server-side apply removes them", () => {
    const lock = {
      entries: ["cp-1", "cp-2", "cp-3", "wk-1", "wk-2", "wk-3"].map((name) => ({
        host: `metal3/${name}`,
        cluster: "edge-sip/tenant-a",
        kind: "sip" as const,
        role: name.startsWith("cp") ? "ControlPlane" : "Worker",
      })),
    };
    // The cluster shrinks its workers from three to two: the highest name goes.
    const plan = sipPlan({ lock, worker: { active: 2, standby: 0 } });
    expect(plan.released.map((host) => host.id)).toEqual(["metal3/wk-3"]);
    expect(render(plan)).toEqual([
      patch("cp-1", "ControlPlane"),
      patch("cp-2", "ControlPlane"),
      patch("cp-3", "ControlPlane"),
      patch("wk-1", "Worker"),
      patch("wk-2", "Worker"),
      patch("wk-3"),
    ]);
  });

  it("never claims the BMH as managed by metalsynth, and validates as BareMetalHost metadata", () => {
    for (const object of render(sipPlan())) {
      expect(Object.keys(object)).toEqual(["apiVersion", "kind", "metadata"]);
      expect(object.metadata.labels).not.toHaveProperty("app.kubernetes.io/managed-by");
      validateKubernetesObject(object);
    }
  });

  it("lists hosts by namespace/name whatever order the plan has them in", () => {
    const plan = sipPlan({
      hosts: [...SIP_HOSTS(), sipHost("cp-0", "control-plane", "10.41.0.10", { namespace: "metal3-b" })],
      controlPlane: { active: 4, standby: 0 },
    });
    const reversed = { ...plan, members: [...plan.members].reverse() };
    const ids = (cluster: SipClusterPlan) =>
      render(cluster).map((object) => `${object.metadata.namespace}/${object.metadata.name}`);
    expect(ids(reversed)).toEqual(ids(plan));
    expect(ids(plan)).toEqual([
      "metal3-b/cp-0",
      "metal3/cp-1",
      "metal3/cp-2",
      "metal3/cp-3",
      "metal3/wk-1",
      "metal3/wk-2",
    ]);
  });
});
