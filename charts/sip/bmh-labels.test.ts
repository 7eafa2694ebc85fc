import { describe, expect, it } from "vitest";
import { clusterKey } from "../../synth/cluster-key.ts";
import { synthObjects, testApp, validateKubernetesObject } from "../../test/support/charts.ts";
import { BmhLabelsChart } from "./bmh-labels.ts";
import { SIP_HOSTS, sipHost, sipPlan } from "../../test/support/sip.ts";
import type { SipClusterPlan } from "../../synth/plan/model.ts";
import { dnsLabel } from "../../test/builders/inventory.ts";

const ANNOTATIONS = {
  "argocd.argoproj.io/compare-options": "IgnoreExtraneous",
  "argocd.argoproj.io/hook": "Skip",
  "argocd.argoproj.io/sync-options": "ServerSideApply=true,Validate=false,Prune=false,Delete=false",
  "argocd.argoproj.io/sync-wave": "-1",
  "kustomize.toolkit.fluxcd.io/prune": "disabled",
  "kustomize.toolkit.fluxcd.io/ssa": "Merge",
};

const LABEL_JOB = { image: "kubectl:test", imagePullPolicy: "IfNotPresent" };

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
  const objects = synthObjects(new BmhLabelsChart(testApp(), "bmh-labels", { cluster, labelJob: LABEL_JOB }));
  return objects.filter((object) => object.kind === "BareMetalHost");
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
        cluster: clusterKey("edge-sip", "tenant-a"),
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

  describe("the label Job", () => {
    const renderWithJob = (cluster: SipClusterPlan) =>
      synthObjects(new BmhLabelsChart(testApp(), "bmh-labels", { cluster, labelJob: LABEL_JOB }));
    const shrunk = () =>
      sipPlan({
        lock: {
          entries: ["cp-1", "cp-2", "cp-3", "wk-1", "wk-2", "wk-3"].map((name) => ({
            host: `metal3/${name}`,
            cluster: clusterKey("edge-sip", "tenant-a"),
            kind: "sip" as const,
            role: name.startsWith("cp") ? "ControlPlane" : "Worker",
          })),
        },
        worker: { active: 2, standby: 0 },
      });

    it("adds a Sync hook Job that labels every host with kubectl, one container per label set", () => {
      const objects = renderWithJob(shrunk());
      const job = objects.find((object) => object.kind === "Job");
      expect(job?.metadata).toMatchObject({
        name: "bmh-labels-tenant-a",
        namespace: "edge-sip",
        annotations: {
          "argocd.argoproj.io/hook": "Sync",
          "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
          "argocd.argoproj.io/sync-options": "Delete=false",
          "argocd.argoproj.io/sync-wave": "-1",
          "kustomize.toolkit.fluxcd.io/reconcile": "disabled",
        },
      });
      const containers = (
        job?.spec as { template: { spec: { containers: { command: string[]; args: string[] }[] } } }
      ).template.spec.containers;
      const common = [
        "label",
        "--overwrite",
        "--namespace=metal3",
        "--cache-dir=/tmp/kube-cache",
        "baremetalhost",
      ];
      expect(containers.map((container) => [...container.command, ...container.args])).toEqual([
        [
          "kubectl",
          ...common,
          "cp-1",
          "cp-2",
          "cp-3",
          "metalsynth.io/cluster=tenant-a",
          "sip.airshipit.org/cluster-namespace=edge-sip",
          "sip.airshipit.org/cluster-name=tenant-a",
          "sip.airshipit.org/node-type=ControlPlane",
        ],
        [
          "kubectl",
          ...common,
          "wk-1",
          "wk-2",
          "metalsynth.io/cluster=tenant-a",
          "sip.airshipit.org/cluster-namespace=edge-sip",
          "sip.airshipit.org/cluster-name=tenant-a",
          "sip.airshipit.org/node-type=Worker",
        ],
        [
          "kubectl",
          ...common,
          "wk-3",
          "metalsynth.io/cluster-",
          "sip.airshipit.org/cluster-namespace-",
          "sip.airshipit.org/cluster-name-",
          "sip.airshipit.org/node-type-",
        ],
      ]);
      for (const object of objects) validateKubernetesObject(object);
    });

    it("lets the Job get and patch exactly the hosts it labels, in their namespace", () => {
      const objects = renderWithJob(shrunk());
      const role = objects.find((object) => object.kind === "Role");
      expect(role?.metadata).toMatchObject({ name: "bmh-labels-tenant-a.edge-sip", namespace: "metal3" });
      expect(role?.rules).toEqual([
        {
          apiGroups: ["metal3.io"],
          resources: ["baremetalhosts"],
          resourceNames: ["cp-1", "cp-2", "cp-3", "wk-1", "wk-2", "wk-3"],
          verbs: ["get", "patch"],
        },
      ]);
      const binding = objects.find((object) => object.kind === "RoleBinding");
      expect(binding?.subjects).toEqual([
        { kind: "ServiceAccount", name: "bmh-labels-tenant-a", namespace: "edge-sip" },
      ]);
    });
  });

  it("gives edge-sip/tenant-a and a-edge-sip/tenant different Roles in metal3 (issue #21 case 4)", () => {
    const roleNames = [
      sipPlan(),
      {
        ...sipPlan(),
        key: clusterKey("a-edge-sip", "tenant"),
        namespace: dnsLabel("a-edge-sip"),
        name: dnsLabel("tenant"),
      },
    ].map((cluster) =>
      synthObjects(new BmhLabelsChart(testApp(), "bmh-labels", { cluster, labelJob: LABEL_JOB }))
        .filter((object) => object.kind === "Role" || object.kind === "RoleBinding")
        .map((object) => `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`),
    );
    expect(roleNames).toEqual([
      ["Role metal3/bmh-labels-tenant-a.edge-sip", "RoleBinding metal3/bmh-labels-tenant-a.edge-sip"],
      ["Role metal3/bmh-labels-tenant.a-edge-sip", "RoleBinding metal3/bmh-labels-tenant.a-edge-sip"],
    ]);
  });
});
