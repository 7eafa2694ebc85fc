import { describe, expect, it } from "vitest";
import { ClusterConfigMapChart } from "./cluster-configmap.ts";
import { bpaPlan, synthObjects, testApp, validateKubernetesObject } from "../test/support/charts.ts";

const metadata = (name: string, namespace = "edge-a", cluster = "cluster-east") => ({
  annotations: { "argocd.argoproj.io/sync-wave": "1", "argocd.argoproj.io/sync-options": "Delete=false" },
  labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": cluster },
  name,
  namespace,
});

function render(options: Parameters<typeof bpaPlan>[0] = {}) {
  return synthObjects(
    new ClusterConfigMapChart(testApp(), "cluster-configmap", { cluster: bpaPlan(options) }),
  );
}

describe("ClusterConfigMapChart", () => {
  it("maps MASTER_/WORKER_<label> to each node's IP, BPA's keys", () => {
    expect(render()).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: metadata("cluster-east-configmap"),
        data: {
          "MASTER_master-1": "10.10.110.21",
          "MASTER_master-2": "10.10.110.22",
          "MASTER_master-3": "10.10.110.23",
          "WORKER_worker-1": "10.10.110.31",
          "WORKER_worker-2": "10.10.110.32",
        },
      },
    ]);
  });

  it("lists masters as workers too when the cluster has no workers (upstream)", () => {
    expect(render({ masters: { "master-1": "node-01" }, workers: {} })).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: metadata("cluster-east-configmap"),
        data: { "MASTER_master-1": "10.10.110.21", "WORKER_master-1": "10.10.110.21" },
      },
    ]);
  });

  it("gives a host in both roles both keys", () => {
    const [configMap] = render({
      masters: { "master-1": "node-01" },
      workers: { "master-1": null, "worker-1": "node-04" },
    });
    expect(configMap?.data).toEqual({
      "MASTER_master-1": "10.10.110.21",
      "WORKER_master-1": "10.10.110.21",
      "WORKER_worker-1": "10.10.110.31",
    });
  });

  it("lives in the CR's namespace and validates as a ConfigMap", () => {
    const objects = render({ namespace: "site-b", cluster: "west" });
    expect(objects.map((object) => object.metadata)).toEqual([metadata("west-configmap", "site-b", "west")]);
    for (const object of objects) validateKubernetesObject(object);
  });
});
