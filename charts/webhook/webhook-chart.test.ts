import { Certificate, Issuer } from "@kubernetes-models/cert-manager/cert-manager.io/v1";
import { ValidatingWebhookConfiguration } from "kubernetes-models/admissionregistration.k8s.io/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ClusterRole, Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { Namespace, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { ALLOCATION_DEFINITION } from "../../synth/schema/allocation.ts";
import { KINDS } from "../../synth/schema/kinds.ts";
import {
  asKubeObject,
  findObject,
  validateKubernetesObject,
  type KubeObject,
} from "../../test/support/charts.ts";
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE, webhookManifests } from "./index.ts";

const objects = (options?: Parameters<typeof webhookManifests>[0]) =>
  webhookManifests(options).map(asKubeObject);
/** The object of `kind`, in its kubernetes-models class for typed reading. */
function one<T>(list: KubeObject[], kind: string, model: new (data: never) => T): T {
  return new model(findObject(list, kind) as never);
}

describe("WebhookChart", () => {
  it("validates every object against its kind's schema, in apply order", () => {
    const rendered = objects();
    for (const object of rendered) {
      // test/support/charts.ts knows no NetworkPolicy: its kubernetes-models class checks it here.
      const validate = () =>
        object.kind === "NetworkPolicy"
          ? new NetworkPolicy(object as never).validate()
          : validateKubernetesObject(object);
      expect(validate, `${object.kind} ${object.metadata.name}`).not.toThrow();
    }
    expect(rendered.map((object) => object.kind)).toEqual([
      ...Object.values(KINDS).map(() => "CustomResourceDefinition"),
      "CustomResourceDefinition", // Allocation
      "Namespace",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      "RoleBinding",
      // The admissions in flight the replicas share (decision 0056).
      "ConfigMap",
      "Role",
      "RoleBinding",
      "Issuer",
      "Certificate",
      "Issuer",
      "Certificate",
      "Service",
      "Deployment",
      "PodDisruptionBudget",
      "ResourceQuota",
      "NetworkPolicy",
      "ValidatingWebhookConfiguration",
      // The status reporter (decision 0059).
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "RoleBinding",
      "Service",
      "Deployment",
      "NetworkPolicy",
    ]);
  });

  it("configures the webhook as docs/contract.md §5 says, one entry per kind, its own namespace excluded", () => {
    const configuration = one(objects(), "ValidatingWebhookConfiguration", ValidatingWebhookConfiguration);
    expect(configuration.metadata?.annotations).toEqual({
      "cert-manager.io/inject-ca-from": `${DEFAULT_NAMESPACE}/metalsynth-webhook-ca`,
    });
    expect(configuration.webhooks).toEqual(
      [...Object.values(KINDS), ALLOCATION_DEFINITION].map((definition) => ({
        name: `${definition.singular}.metalsynth.io`,
        admissionReviewVersions: ["v1"],
        // A CR admitted for real is recorded for the other replicas; a dry run writes nothing.
        sideEffects: definition === ALLOCATION_DEFINITION ? "None" : "NoneOnDryRun",
        failurePolicy: "Fail",
        matchPolicy: "Equivalent",
        timeoutSeconds: 5,
        clientConfig: {
          service: {
            name: "metalsynth-webhook",
            namespace: DEFAULT_NAMESPACE,
            path: `/validate/${definition.singular}`,
            port: 443,
          },
        },
        namespaceSelector: {
          matchExpressions: [
            { key: "kubernetes.io/metadata.name", operator: "NotIn", values: [DEFAULT_NAMESPACE] },
          ],
        },
        rules: [
          {
            apiGroups: [definition.group],
            apiVersions: [definition.version],
            operations: ["CREATE", "UPDATE"],
            resources: [definition.plural],
            scope: "Namespaced",
          },
        ],
      })),
    );
  });

  it("grants read access only, and to nothing but what the informers watch", () => {
    const rules = one(objects(), "ClusterRole", ClusterRole).rules ?? [];
    for (const rule of rules) expect(rule.verbs).toEqual(["get", "list", "watch"]);
    const granted = rules.flatMap((rule) =>
      (rule.resources ?? []).map((resource) => `${rule.apiGroups?.[0]}/${resource}`),
    );
    expect(granted.sort()).toEqual([
      "airship.airshipit.org/sipclusters",
      "bpa.akraino.org/clusters",
      "bpa.akraino.org/provisionings",
      "bpa.akraino.org/softwares",
      "metal3.io/baremetalhosts",
      "metal3.io/hardwaredata",
      "metalsynth.io/allocations",
    ]);
  });

  it("grants Secrets in each inventory namespace only, to the webhook's ServiceAccount, and reads only those", () => {
    const rendered = objects({ inventoryNamespaces: ["metal3", "site-b"] });
    const roles = rendered
      .filter((object) => object.kind === "Role" && object.metadata.name === "metalsynth-webhook-secrets")
      .map((object) => new Role(object as never));
    expect(roles.map((role) => [role.metadata?.namespace, role.metadata?.name, role.rules])).toEqual(
      ["metal3", "site-b"].map((namespace) => [
        namespace,
        "metalsynth-webhook-secrets",
        [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] }],
      ]),
    );
    const bindings = rendered
      .filter(
        (object) => object.kind === "RoleBinding" && object.metadata.name === "metalsynth-webhook-secrets",
      )
      .map((object) => new RoleBinding(object as never));
    expect(
      bindings.map((binding) => [binding.metadata?.namespace, binding.roleRef, binding.subjects]),
    ).toEqual(
      ["metal3", "site-b"].map((namespace) => [
        namespace,
        { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "metalsynth-webhook-secrets" },
        [{ kind: "ServiceAccount", name: "metalsynth-webhook", namespace: DEFAULT_NAMESPACE }],
      ]),
    );
    // Nothing cluster-wide grants Secrets.
    for (const rule of one(rendered, "ClusterRole", ClusterRole).rules ?? []) {
      expect(rule.resources ?? []).not.toContain("secrets");
      expect(rule.resources ?? []).not.toContain("*");
    }
    const args = one(rendered, "Deployment", Deployment).spec?.template.spec?.containers[0]?.args ?? [];
    expect(args.slice(8, 12)).toEqual(["--secrets-namespace", "metal3", "--secrets-namespace", "site-b"]);
    expect(() => objects({ inventoryNamespaces: [] })).toThrow(/at least one inventory namespace/);
  });

  it("runs two non-root replicas with probes, a read-only root and the rotating certificate mounted", () => {
    const deployment = one(objects(), "Deployment", Deployment);
    expect(deployment.spec?.replicas).toBe(2);
    const pod = deployment.spec?.template.spec;
    expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    const [container] = pod?.containers ?? [];
    expect(container?.image).toBe(DEFAULT_IMAGE);
    expect(container?.args).toEqual([
      "webhook",
      "--from-cluster",
      "--tls-cert",
      "/tls/tls.crt",
      "--tls-key",
      "/tls/tls.key",
      "--port",
      "8443",
      "--secrets-namespace",
      "metal3",
      "--namespace",
      DEFAULT_NAMESPACE,
      "--allocation-manager",
      "kustomize-controller",
      "--allocation-manager",
      "argocd-controller",
      "--allocation-manager",
      "kubectl-client-side-apply",
    ]);
    expect(container?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(container?.readinessProbe?.httpGet).toMatchObject({ path: "/readyz", scheme: "HTTPS" });
    expect(container?.livenessProbe?.httpGet).toMatchObject({ path: "/healthz", scheme: "HTTPS" });
    // The server's thread with the small young generation its review workers have, and one thread
    // for V8's background work (decision 0056).
    expect(container?.env).toEqual([
      { name: "NODE_OPTIONS", value: "--max-semi-space-size=8 --v8-pool-size=1" },
    ]);
    // Sized by the measured formula for the default site (charts/webhook/sizing.ts).
    expect(container?.resources).toEqual({
      requests: { cpu: "200m", memory: "448Mi" },
      limits: { cpu: "2", memory: "896Mi" },
    });
    expect(pod?.volumes).toContainEqual({
      name: "tls",
      secret: { secretName: "metalsynth-webhook-tls", defaultMode: 0o440 },
    });
    // A drain evicts one replica at a time, and is never blocked (decision 0061).
    expect(one(objects(), "PodDisruptionBudget", PodDisruptionBudget).spec).toMatchObject({
      maxUnavailable: 1,
    });
  });

  it("points the Service and the PodDisruptionBudget at the Deployment's pods and port", () => {
    const rendered = objects();
    const deployment = one(rendered, "Deployment", Deployment);
    const labels = deployment.spec?.template.metadata?.labels;
    expect(labels).toBeDefined();
    expect(deployment.spec?.selector.matchLabels).toEqual(labels);
    const service = one(rendered, "Service", Service).spec;
    expect(service?.selector).toEqual(labels);
    expect(service?.ports).toEqual([{ name: "https", port: 443, targetPort: "https" }]);
    expect(deployment.spec?.template.spec?.containers[0]?.ports).toEqual([
      { name: "https", containerPort: 8443 },
    ]);
    expect(one(rendered, "PodDisruptionBudget", PodDisruptionBudget).spec?.selector?.matchLabels).toEqual(
      labels,
    );
  });

  it("labels its namespace Pod Security restricted, and its pods meet that level", () => {
    const rendered = objects();
    expect(one(rendered, "Namespace", Namespace).metadata?.labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/audit": "restricted",
      "pod-security.kubernetes.io/warn": "restricted",
    });
    // What the restricted level requires of a pod (Pod Security Standards).
    const pod = one(rendered, "Deployment", Deployment).spec?.template.spec;
    expect(pod?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(pod?.hostNetwork ?? false).toBe(false);
    for (const container of pod?.containers ?? []) {
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      });
      expect(container.securityContext?.capabilities?.add ?? []).toEqual([]);
    }
    expect((pod?.volumes ?? []).every((volume) => volume.secret !== undefined)).toBe(true);
  });

  it("runs at system-cluster-critical priority unless told otherwise", () => {
    const priority = (options?: Parameters<typeof webhookManifests>[0]) =>
      one(objects(options), "Deployment", Deployment).spec?.template.spec?.priorityClassName;
    expect(priority()).toBe("system-cluster-critical");
    expect(priority({ priorityClassName: "platform-high" })).toBe("platform-high");
    expect(priority({ priorityClassName: null })).toBeUndefined();
  });

  it("allows pods of its priority class in its namespace by a ResourceQuota, none without a class", () => {
    const quota = (options?: Parameters<typeof webhookManifests>[0]) =>
      objects(options).filter((object) => object.kind === "ResourceQuota");
    expect(quota({ priorityClassName: "platform-high" }).map((object) => object.spec)).toEqual([
      {
        hard: { pods: "100" },
        scopeSelector: {
          matchExpressions: [{ operator: "In", scopeName: "PriorityClass", values: ["platform-high"] }],
        },
      },
    ]);
    expect(quota()[0]?.metadata).toMatchObject({
      name: "metalsynth-webhook-critical-pods",
      namespace: DEFAULT_NAMESPACE,
    });
    expect(quota({ priorityClassName: null })).toEqual([]);
  });

  it("admits traffic to the webhook's port only, from the API server's addresses and the metrics namespaces", () => {
    const policy = one(objects(), "NetworkPolicy", NetworkPolicy);
    const deployment = one(objects(), "Deployment", Deployment);
    expect(policy.metadata?.namespace).toBe(DEFAULT_NAMESPACE);
    expect(policy.spec?.podSelector).toEqual(deployment.spec?.selector);
    expect(policy.spec?.policyTypes).toEqual(["Ingress"]);
    expect(policy.spec?.ingress).toEqual([
      {
        ports: [{ protocol: "TCP", port: 8443 }],
        from: [{ ipBlock: { cidr: "0.0.0.0/0" } }, { ipBlock: { cidr: "::/0" } }],
      },
      {
        ports: [{ protocol: "TCP", port: 8443 }],
        from: [{ namespaceSelector: { matchLabels: { "metalsynth.io/metrics": "allowed" } } }],
      },
    ]);
    const narrowed = one(
      objects({
        networkPolicy: { apiServerCidrs: ["10.0.0.10/32"], metricsNamespaceLabel: { team: "obs" } },
      }),
      "NetworkPolicy",
      NetworkPolicy,
    );
    expect(narrowed.spec?.ingress?.map((rule) => rule.from)).toEqual([
      [{ ipBlock: { cidr: "10.0.0.10/32" } }],
      [{ namespaceSelector: { matchLabels: { team: "obs" } } }],
    ]);
    expect(objects({ networkPolicy: false }).map((object) => object.kind)).not.toContain("NetworkPolicy");
  });

  it("adds a ServiceMonitor on request that scrapes the Service's https port with the serving CA", () => {
    expect(objects().map((object) => object.kind)).not.toContain("ServiceMonitor");
    const rendered = objects({ serviceMonitor: true });
    const monitor = findObject(rendered, "ServiceMonitor") as unknown as {
      metadata: { namespace: string };
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: Record<string, unknown>[] };
    };
    const service = one(rendered, "Service", Service);
    expect(monitor.metadata.namespace).toBe(DEFAULT_NAMESPACE);
    expect(service.metadata?.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(monitor.spec.endpoints).toEqual([
      {
        port: service.spec?.ports?.[0]?.name,
        scheme: "https",
        path: "/metrics",
        tlsConfig: {
          serverName: `metalsynth-webhook.${DEFAULT_NAMESPACE}.svc`,
          ca: { secret: { name: "metalsynth-webhook-tls", key: "ca.crt" } },
        },
      },
    ]);
  });

  it("makes a chain that renews without changing the CA bundle: self-signed root, CA Issuer, serving certificate", () => {
    const rendered = objects();
    const named = <T>(kind: string, name: string, model: new (data: never) => T): T => {
      const found = rendered.find((object) => object.kind === kind && object.metadata.name === name);
      expect(found, `${kind} ${name}`).toBeDefined();
      return new model(found as never);
    };
    expect(named("Issuer", "metalsynth-webhook-selfsigned", Issuer).spec).toEqual({ selfSigned: {} });
    const root = named("Certificate", "metalsynth-webhook-ca", Certificate).spec;
    expect(root).toMatchObject({
      isCA: true,
      secretName: "metalsynth-webhook-ca",
      issuerRef: { name: "metalsynth-webhook-selfsigned", kind: "Issuer" },
      // The root keeps its key when renewed: serving certificates it issued before still verify.
      privateKey: { rotationPolicy: "Never" },
    });
    expect(named("Issuer", "metalsynth-webhook", Issuer).spec).toEqual({
      ca: { secretName: "metalsynth-webhook-ca" },
    });
    const serving = named("Certificate", "metalsynth-webhook", Certificate).spec;
    expect(serving).toMatchObject({ issuerRef: { name: "metalsynth-webhook", kind: "Issuer" } });
    expect(serving?.isCA).toBeUndefined();
    // The bundle is the root's: a serving renewal changes nothing the API server trusts.
    const configuration = one(rendered, "ValidatingWebhookConfiguration", ValidatingWebhookConfiguration);
    expect(configuration.metadata?.annotations?.["cert-manager.io/inject-ca-from"]).toBe(
      `${DEFAULT_NAMESPACE}/metalsynth-webhook-ca`,
    );
    // Issuers come before what they issue, in apply order.
    const order = rendered.map((object) => `${object.kind}/${object.metadata.name}`);
    expect(order.indexOf("Issuer/metalsynth-webhook-selfsigned")).toBeLessThan(
      order.indexOf("Certificate/metalsynth-webhook-ca"),
    );
    expect(order.indexOf("Issuer/metalsynth-webhook")).toBeLessThan(
      order.indexOf("Certificate/metalsynth-webhook"),
    );
  });

  it("issues the serving certificate for the Service's DNS names", () => {
    const serving = objects().find(
      (object) => object.kind === "Certificate" && object.metadata.name === "metalsynth-webhook",
    );
    expect(new Certificate(serving as never).spec).toMatchObject({
      secretName: "metalsynth-webhook-tls",
      dnsNames: [
        `metalsynth-webhook.${DEFAULT_NAMESPACE}.svc`,
        `metalsynth-webhook.${DEFAULT_NAMESPACE}.svc.cluster.local`,
      ],
      issuerRef: { name: "metalsynth-webhook", kind: "Issuer" },
    });
  });

  it("puts namespaced objects in the given namespace and runs the given image", () => {
    const rendered = objects({ namespace: "bare-metal", image: "registry.example/metalsynth:1.2.3" });
    // The Roles for Secrets live in the inventory namespaces; everything else in the given one.
    const namespaced = rendered.filter(
      (object) => object.metadata.namespace !== undefined && !object.kind.startsWith("Role"),
    );
    expect(new Set(namespaced.map((object) => object.metadata.namespace))).toEqual(new Set(["bare-metal"]));
    expect(one(rendered, "Namespace", Namespace).metadata?.name).toBe("bare-metal");
    expect(one(rendered, "Deployment", Deployment).spec?.template.spec?.containers[0]?.image).toBe(
      "registry.example/metalsynth:1.2.3",
    );
    expect(JSON.stringify(rendered)).not.toContain(DEFAULT_NAMESPACE);
  });

  it("records admissions in one ConfigMap it made, which the webhook may read and update and nothing else", () => {
    const rendered = objects();
    expect(findObject(rendered, "ConfigMap")).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: expect.objectContaining({
        name: "metalsynth-webhook-admissions",
        namespace: DEFAULT_NAMESPACE,
      }),
    });
    const role = rendered.find(
      (object) => object.kind === "Role" && object.metadata.name === "metalsynth-webhook-admissions",
    );
    expect(new Role(role as never).rules).toEqual([
      {
        apiGroups: [""],
        resources: ["configmaps"],
        resourceNames: ["metalsynth-webhook-admissions"],
        verbs: ["get", "list", "watch", "update"],
      },
    ]);
  });

  it("passes the site's Allocation namespaces and managers, and sizes memory for the site it is told", () => {
    const deployment = one(
      objects({
        allocationNamespaces: ["edge-a"],
        allocationManagers: ["fleet-agent"],
        sizing: { hosts: 10_000, clusters: 1000 },
      }),
      "Deployment",
      Deployment,
    );
    const [container] = deployment.spec?.template.spec?.containers ?? [];
    expect(container?.args?.slice(-4)).toEqual([
      "--allocation-namespace",
      "edge-a",
      "--allocation-manager",
      "fleet-agent",
    ]);
    expect(container?.resources?.requests?.memory).toBe("896Mi");
  });
});
