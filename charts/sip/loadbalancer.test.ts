import { Deployment } from "kubernetes-models/apps/v1";
import { ConfigMap, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import type { SipClusterPlan } from "../../synth/plan/model.ts";
import { DEFAULT_SETTINGS, type SiteSettings } from "../../synth/schema/settings.ts";
import { toYamlStream } from "../../synth/codec/yaml-output.ts";
import {
  findObject,
  synthObjects,
  testApp,
  type KubeObject,
  validateKubernetesObject,
} from "../../test/support/charts.ts";
import { LoadBalancerChart, type LoadBalancerTier } from "./loadbalancer.ts";
import { examplePlan, sipPlan, type SipServices } from "../../test/support/sip.ts";

function render(cluster: SipClusterPlan, tier: LoadBalancerTier, settings: SiteSettings = DEFAULT_SETTINGS) {
  return synthObjects(new LoadBalancerChart(testApp(), `loadbalancer-${tier}`, { cluster, settings, tier }));
}

function haproxyCfg(objects: readonly KubeObject[], name: string): string {
  return new ConfigMap(findObject(objects, "ConfigMap", name)).data?.["haproxy.cfg"] ?? "";
}

function serverLines(config: string): string[] {
  return config.split("\n").filter((line) => line.startsWith("  server "));
}

/** Per backend, its lines other than `balance` and the servers: how its servers are checked. */
function backendChecks(config: string): string[][] {
  return config
    .split("\n\n")
    .filter((section) => section.startsWith("backend "))
    .map((backend) =>
      backend
        .split("\n")
        .slice(1)
        .map((line) => line.trim())
        .filter((line) => line !== "" && line !== "balance roundrobin" && !line.startsWith("server ")),
    );
}

function podTemplate(objects: readonly KubeObject[], name: string) {
  const template = new Deployment(findObject(objects, "Deployment", name)).spec?.template;
  if (!template?.spec) throw new Error(`Deployment ${name} without a pod template`);
  return { metadata: template.metadata, spec: template.spec };
}

const ONE_OF_EACH: SipServices = {
  loadBalancerControlPlane: [{ nodeInterfaceId: "oam-ipv4", nodePort: 30443 }],
  loadBalancerWorker: [{ nodeInterfaceId: "oam-ipv4", nodePortRange: { start: 30100, end: 30101 } }],
};

describe("LoadBalancerChart", () => {
  // Reviewed: the example site's rendered/clusters/edge-sip/tenant-a/loadbalancer-*.yaml.
  it.each<LoadBalancerTier>(["controlplane", "worker"])("matches the reviewed snapshot: %s", async (tier) => {
    const { plan, settings } = examplePlan();
    await expect(toYamlStream(render(plan, tier, settings))).toMatchFileSnapshot(
      `__snapshots__/loadbalancer-${tier}.yaml`,
    );
  });

  it("renders a ConfigMap, a Deployment and a NodePort Service named loadbalancer-<tier>-<cluster>", () => {
    for (const tier of ["controlplane", "worker"] as const) {
      const objects = render(sipPlan(), tier);
      expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
        `ConfigMap/loadbalancer-${tier}-tenant-a`,
        `Deployment/loadbalancer-${tier}-tenant-a`,
        `Service/loadbalancer-${tier}-tenant-a`,
      ]);
      for (const object of objects) {
        expect(object.metadata.namespace).toBe("edge-sip");
        expect(object.metadata.annotations).toEqual({
          "argocd.argoproj.io/sync-wave": "0",
          "argocd.argoproj.io/sync-options": "Delete=false",
        });
        validateKubernetesObject(object);
      }
    }
  });

  it("balances the API over every ControlPlane host, standby included, each checked on 6443", () => {
    // ControlPlane 2 + 1: cp-3 is the standby. Whether it becomes a node is the machine provider's
    // choice, so it is listed, and the health check keeps it out while it serves nothing.
    const plan = sipPlan();
    expect(plan.members.filter((member) => member.standby).map((member) => member.host.name)).toEqual([
      "cp-3",
    ]);
    const config = haproxyCfg(render(plan, "controlplane"), "loadbalancer-controlplane-tenant-a");
    expect(serverLines(config)).toEqual([
      "  server cp-1 10.41.0.11:6443",
      "  server cp-2 10.41.0.12:6443",
      "  server cp-3 10.41.0.13:6443",
    ]);
    expect(config).toContain("  bind *:6443\n");
    expect(backendChecks(config)).toEqual([
      [
        "option httpchk GET /readyz",
        "http-check expect status 200",
        "default-server check check-ssl verify none inter 5s downinter 2s fall 4 rise 2 on-marked-down shutdown-sessions",
      ],
    ]);
  });

  it("gives the worker load balancer one frontend per port of the range, to every Worker, standby included", () => {
    const objects = render(sipPlan({ worker: { active: 2, standby: 1 } }), "worker");
    const config = haproxyCfg(objects, "loadbalancer-worker-tenant-a");
    expect(config.match(/^frontend port-\d+$/gm)).toEqual(["frontend port-30100", "frontend port-30101"]);
    expect(serverLines(config)).toEqual([
      "  server wk-1 10.41.0.21:30100",
      "  server wk-2 10.41.0.22:30100",
      "  server wk-3 10.41.0.23:30100",
      "  server wk-1 10.41.0.21:30101",
      "  server wk-2 10.41.0.22:30101",
      "  server wk-3 10.41.0.23:30101",
    ]);
    expect(backendChecks(config)).toEqual([
      ["default-server check inter 5s fall 3 rise 2"],
      ["default-server check inter 5s fall 3 rise 2"],
    ]);
    expect(new Service(findObject(objects, "Service", "loadbalancer-worker-tenant-a")).spec?.ports).toEqual([
      { name: "port-30100", protocol: "TCP", port: 30100, targetPort: 30100, nodePort: 30100 },
      { name: "port-30101", protocol: "TCP", port: 30101, targetPort: 30101, nodePort: 30101 },
    ]);
  });

  it("publishes 6443 on the CR's nodePort, and lets Kubernetes choose for nodePort 0", () => {
    const ports = (nodePort: number) =>
      new Service(
        findObject(
          render(
            sipPlan({ services: { loadBalancerControlPlane: [{ nodeInterfaceId: "oam-ipv4", nodePort }] } }),
            "controlplane",
          ),
          "Service",
          "loadbalancer-controlplane-tenant-a",
        ),
      ).spec;
    expect(ports(30443)).toMatchObject({
      type: "NodePort",
      ports: [{ name: "kube-apiserver", protocol: "TCP", port: 6443, targetPort: 6443, nodePort: 30443 }],
    });
    expect(ports(0)?.ports).toEqual([
      { name: "kube-apiserver", protocol: "TCP", port: 6443, targetPort: 6443 },
    ]);
  });

  it("selects exactly its own pods", () => {
    const objects = render(sipPlan(), "controlplane");
    const name = "loadbalancer-controlplane-tenant-a";
    const selector = { "app.kubernetes.io/name": "haproxy", "app.kubernetes.io/instance": name };
    expect(new Service(findObject(objects, "Service", name)).spec?.selector).toEqual(selector);
    expect(new Deployment(findObject(objects, "Deployment", name)).spec?.selector).toEqual({
      matchLabels: selector,
    });
    expect(podTemplate(objects, name).metadata?.labels).toEqual({
      ...selector,
      "app.kubernetes.io/managed-by": "metalsynth",
      "metalsynth.io/cluster": "tenant-a",
    });
  });

  it("runs HAProxy as nobody with a read-only root filesystem and no capabilities", () => {
    const { spec } = podTemplate(render(sipPlan(), "worker"), "loadbalancer-worker-tenant-a");
    expect(spec.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65534,
      runAsGroup: 65534,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(spec.automountServiceAccountToken).toBe(false);
    const [container] = spec.containers;
    expect(container?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(container?.resources?.requests).toBeDefined();
    expect(container?.resources?.limits).toHaveProperty("memory");
    expect(container?.readinessProbe?.httpGet).toEqual({ path: "/healthz", port: "health" });
    expect(container?.volumeMounts).toEqual([
      { name: "config", mountPath: "/usr/local/etc/haproxy", readOnly: true },
    ]);
    expect(spec.volumes).toEqual([{ name: "config", configMap: { name: "loadbalancer-worker-tenant-a" } }]);
  });

  it("takes the image from the CR, else from the site settings", () => {
    const image = (services: SipServices) =>
      podTemplate(render(sipPlan({ services }), "controlplane"), "loadbalancer-controlplane-tenant-a").spec
        .containers[0]?.image;
    const settingsImage = DEFAULT_SETTINGS.images.haproxy;
    expect(image(ONE_OF_EACH)).toBe(settingsImage);
    expect(
      image({
        loadBalancerControlPlane: [
          { image: "registry.local/haproxy:2.8", nodeInterfaceId: "oam-ipv4", nodePort: 30443 },
        ],
      }),
    ).toBe("registry.local/haproxy:2.8");
  });

  it("rolls the pods when haproxy.cfg changes, and only then", () => {
    const hash = (plan: SipClusterPlan) =>
      podTemplate(render(plan, "controlplane"), "loadbalancer-controlplane-tenant-a").metadata?.annotations?.[
        "metalsynth.io/config-hash"
      ];
    const plan = sipPlan();
    expect(hash(plan)).toMatch(/^[0-9a-f]{8}$/);
    expect(hash({ ...plan, members: [...plan.members].reverse() })).toBe(hash(plan));
    // A worker leaving changes nothing the control-plane load balancer serves.
    expect(hash(sipPlan({ worker: { active: 1, standby: 0 } }))).toBe(hash(plan));
    // Promoting the standby leaves the backends as they were: the health checks follow it.
    expect(hash(sipPlan({ controlPlane: { active: 3, standby: 0 } }))).toBe(hash(plan));
    expect(hash(sipPlan({ controlPlane: { active: 1, standby: 1 } }))).not.toBe(hash(plan));
  });

  it("names further services of a tier with their index after the prefix, so no cluster name can clash", () => {
    const plan = sipPlan({
      services: {
        loadBalancerControlPlane: [
          { nodeInterfaceId: "oam-ipv4", nodePort: 30443 },
          { nodeInterfaceId: "oam-ipv4", nodePort: 30444 },
        ],
      },
    });
    expect(render(plan, "controlplane").map((object) => object.metadata.name)).toEqual([
      "loadbalancer-controlplane-tenant-a",
      "loadbalancer-controlplane-tenant-a",
      "loadbalancer-controlplane-tenant-a",
      "loadbalancer-controlplane1-tenant-a",
      "loadbalancer-controlplane1-tenant-a",
      "loadbalancer-controlplane1-tenant-a",
    ]);
  });

  it("renders nothing for a tier the CR does not ask for", () => {
    expect(
      render(
        sipPlan({ services: { loadBalancerControlPlane: ONE_OF_EACH.loadBalancerControlPlane } }),
        "worker",
      ),
    ).toEqual([]);
  });
});
