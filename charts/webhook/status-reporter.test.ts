import { Deployment } from "kubernetes-models/apps/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { ClusterRole, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { describe, expect, it } from "vitest";
import { DEFAULT_ALLOCATION_MANAGERS } from "../../synth/schema/allocation.ts";
import { asKubeObject, type KubeObject } from "../../test/support/charts.ts";
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE, webhookManifests } from "./index.ts";

const objects = (options?: Parameters<typeof webhookManifests>[0]) =>
  webhookManifests(options).map(asKubeObject);

/** The reporter's object of `kind`, in its kubernetes-models class. */
function reporters<T>(list: KubeObject[], kind: string, model: new (data: never) => T): T[] {
  return list
    .filter((object) => object.kind === kind && object.metadata.name.startsWith("metalsynth-status"))
    .map((object) => new model(object as never));
}

describe("the status reporter in the install (decision 0059)", () => {
  it("may patch the four kinds' status subresource and Events, and only read everything else it watches", () => {
    const [role] = reporters(objects(), "ClusterRole", ClusterRole);
    const grants = (role?.rules ?? []).flatMap((rule) =>
      (rule.resources ?? []).map(
        (resource) => `${rule.verbs.join(",")} ${rule.apiGroups?.[0] ?? ""}/${resource}`,
      ),
    );
    expect(grants.sort()).toEqual([
      "create,patch /events",
      "get,list,watch airship.airshipit.org/sipclusters",
      "get,list,watch argoproj.io/applications",
      "get,list,watch batch/jobs",
      "get,list,watch bpa.akraino.org/clusters",
      "get,list,watch bpa.akraino.org/provisionings",
      "get,list,watch bpa.akraino.org/softwares",
      "get,list,watch kustomize.toolkit.fluxcd.io/kustomizations",
      "get,list,watch metal3.io/baremetalhosts",
      "get,list,watch metal3.io/hardwaredata",
      "get,list,watch metalsynth.io/allocations",
      "patch airship.airshipit.org/sipclusters/status",
      "patch bpa.akraino.org/clusters/status",
      "patch bpa.akraino.org/provisionings/status",
      "patch bpa.akraino.org/softwares/status",
    ]);
  });

  it("reads networkData Secrets through the webhook's Role in each inventory namespace, nowhere else", () => {
    const bindings = reporters(
      objects({ inventoryNamespaces: ["metal3", "site-b"] }),
      "RoleBinding",
      RoleBinding,
    );
    expect(
      bindings.map((binding) => [binding.metadata?.namespace, binding.roleRef.name, binding.subjects]),
    ).toEqual(
      ["metal3", "site-b"].map((namespace) => [
        namespace,
        "metalsynth-webhook-secrets",
        [{ kind: "ServiceAccount", name: "metalsynth-status", namespace: DEFAULT_NAMESPACE }],
      ]),
    );
  });

  it("runs one `metalsynth status --write` at a time, non-root, read-only, probed over HTTP", () => {
    const [deployment] = reporters(
      objects({ inventoryNamespaces: ["metal3", "site-b"] }),
      "Deployment",
      Deployment,
    );
    expect(deployment?.spec?.replicas).toBe(1);
    expect(deployment?.spec?.strategy).toEqual({ type: "Recreate" });
    const pod = deployment?.spec?.template.spec;
    expect(pod?.serviceAccountName).toBe("metalsynth-status");
    expect(pod?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const [container] = pod?.containers ?? [];
    expect(container?.image).toBe(DEFAULT_IMAGE);
    expect(container?.args).toEqual([
      "status",
      "--write",
      "--port",
      "8080",
      "--secrets-namespace",
      "metal3",
      "--secrets-namespace",
      "site-b",
      ...DEFAULT_ALLOCATION_MANAGERS.flatMap((manager) => ["--allocation-manager", manager]),
    ]);
    expect(container?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(container?.readinessProbe?.httpGet).toMatchObject({ path: "/readyz", port: "http-metrics" });
    expect(container?.livenessProbe?.httpGet).toMatchObject({ path: "/healthz", port: "http-metrics" });
  });

  it("trusts the Allocations the webhook trusts: the same arguments (decision 0056)", () => {
    const list = objects({ allocationNamespaces: ["edge-a", "edge-b"], allocationManagers: ["fleet-agent"] });
    const trustArgs = (container: { args?: string[] } | undefined) =>
      (container?.args ?? []).filter(
        (_arg, index, args) =>
          args[index]?.startsWith("--allocation-") || args[index - 1]?.startsWith("--allocation-"),
      );
    const [reporter] = reporters(list, "Deployment", Deployment);
    const webhook = list.find(
      (object) => object.kind === "Deployment" && object.metadata.name === "metalsynth-webhook",
    );
    const expected = [
      "--allocation-namespace",
      "edge-a",
      "--allocation-namespace",
      "edge-b",
      "--allocation-manager",
      "fleet-agent",
    ];
    expect(trustArgs(reporter?.spec?.template.spec?.containers[0])).toEqual(expected);
    expect(trustArgs(new Deployment(webhook as never).spec?.template.spec?.containers[0])).toEqual(expected);
  });

  it("admits scrapes from the metrics namespaces only, and adds a ServiceMonitor on request", () => {
    const [policy] = reporters(objects(), "NetworkPolicy", NetworkPolicy);
    expect(policy?.spec?.ingress).toEqual([
      {
        ports: [{ protocol: "TCP", port: 8080 }],
        from: [{ namespaceSelector: { matchLabels: { "metalsynth.io/metrics": "allowed" } } }],
      },
    ]);
    expect(reporters(objects({ networkPolicy: false }), "NetworkPolicy", NetworkPolicy)).toEqual([]);
    const monitors = objects({ serviceMonitor: true }).filter(
      (object) => object.kind === "ServiceMonitor" && object.metadata.name === "metalsynth-status",
    );
    expect(monitors.map((monitor) => (monitor as unknown as { spec: unknown }).spec)).toEqual([
      {
        selector: { matchLabels: { "app.kubernetes.io/name": "metalsynth-status" } },
        endpoints: [{ port: "http-metrics", path: "/metrics" }],
      },
    ]);
  });
});
