import { ApiObject } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import { Construct } from "constructs";
import { ALLOCATION_DEFINITION } from "../../synth/schema/allocation.ts";
import { KINDS } from "../../synth/schema/kinds.ts";
import { allocationTrustArgs } from "./allocation-trust-args.ts";
import { CONTAINER_SECURITY, POD_SECURITY } from "./pod-security.ts";

/** Name of the reporter's Deployment, ServiceAccount, ClusterRole, Service and bindings. */
export const STATUS_NAME = "metalsynth-status";
/** The port of `/healthz`, `/readyz` and `/metrics` (plain HTTP: nothing served there changes anything). */
export const STATUS_PORT = 8080;

/** Props of {@link StatusReporter}. */
export interface StatusReporterProps {
  /** Namespace of the reporter's objects (the webhook's). */
  readonly namespace: string;
  /** The metalsynth image (the webhook's): the reporter is `metalsynth status --write`. */
  readonly image: string;
  /** The inventory namespaces: the reporter reads networkData Secrets there, as the webhook does. */
  readonly inventoryNamespaces: readonly string[];
  /** The Role in each inventory namespace that reads Secrets there (the webhook chart's). */
  readonly secretsRole: string;
  /** The namespaces of the site's Allocations, as the webhook's (decision 0056). Empty: every namespace. */
  readonly allocationNamespaces: readonly string[];
  /** The field managers that may write an Allocation's spec, as the webhook's. */
  readonly allocationManagers: readonly string[];
  /** Namespaces labelled so may scrape `/metrics`; absent: no NetworkPolicy. */
  readonly metricsNamespaceLabel?: Readonly<Record<string, string>>;
  /** A prometheus-operator ServiceMonitor scraping `/metrics`. */
  readonly serviceMonitor: boolean;
}

const SELECTOR = { "app.kubernetes.io/name": STATUS_NAME };
const READ = ["get", "list", "watch"];

/**
 * The status reporter (docs/contract.md §5, decision 0059): one replica of `metalsynth status --write`
 * with a ServiceAccount of its own. It reads what a status is made of (the inventory, the four CR
 * kinds, Allocations, Jobs, Flux Kustomizations, Argo CD Applications, and networkData Secrets in the
 * inventory namespaces through the webhook's Role there), and writes nothing but `<kind>/status` of
 * the four kinds (patch: server-side apply) and Events (create, and patch to count a repeat). The
 * webhook's ServiceAccount stays read-only.
 */
export class StatusReporter extends Construct {
  constructor(scope: Construct, id: string, props: StatusReporterProps) {
    super(scope, id);
    const { namespace, inventoryNamespaces, secretsRole, metricsNamespaceLabel, serviceMonitor } = props;
    const subjects = [{ kind: "ServiceAccount", name: STATUS_NAME, namespace }];
    new k8s.KubeServiceAccount(this, "service-account", { metadata: { name: STATUS_NAME, namespace } });
    new k8s.KubeClusterRole(this, "cluster-role", { metadata: { name: STATUS_NAME }, rules: statusRules() });
    new k8s.KubeClusterRoleBinding(this, "cluster-role-binding", {
      metadata: { name: STATUS_NAME },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: STATUS_NAME },
      subjects,
    });
    for (const inventoryNamespace of inventoryNamespaces) {
      new k8s.KubeRoleBinding(this, `secrets-role-binding-${inventoryNamespace}`, {
        metadata: { name: `${STATUS_NAME}-secrets`, namespace: inventoryNamespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: secretsRole },
        subjects,
      });
    }

    new k8s.KubeService(this, "service", {
      metadata: { name: STATUS_NAME, namespace, labels: SELECTOR },
      spec: {
        selector: SELECTOR,
        ports: [
          { name: "http-metrics", port: STATUS_PORT, targetPort: k8s.IntOrString.fromString("http-metrics") },
        ],
      },
    });
    new k8s.KubeDeployment(this, "deployment", {
      metadata: { name: STATUS_NAME, namespace },
      spec: {
        // One writer: a second would compute the same statuses and write nothing new, but would tell
        // each transition twice. Recreate keeps a rollout from running two (decision 0059).
        replicas: 1,
        selector: { matchLabels: SELECTOR },
        strategy: { type: "Recreate" },
        template: {
          metadata: { labels: SELECTOR },
          spec: {
            serviceAccountName: STATUS_NAME,
            securityContext: POD_SECURITY,
            // SIGTERM: the writes in flight finish, the informers stop.
            terminationGracePeriodSeconds: 30,
            containers: [statusContainer(props)],
          },
        },
      },
    });

    if (metricsNamespaceLabel !== undefined) {
      new k8s.KubeNetworkPolicy(this, "network-policy", {
        metadata: { name: STATUS_NAME, namespace },
        spec: {
          podSelector: { matchLabels: SELECTOR },
          policyTypes: ["Ingress"],
          // Scrapes from the monitoring namespaces; the kubelet's probes pass whatever the policy.
          ingress: [
            {
              ports: [{ protocol: "TCP", port: k8s.IntOrString.fromNumber(STATUS_PORT) }],
              from: [{ namespaceSelector: { matchLabels: { ...metricsNamespaceLabel } } }],
            },
          ],
        },
      });
    }
    if (serviceMonitor) {
      new ApiObject(this, "service-monitor", {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "ServiceMonitor",
        metadata: { name: STATUS_NAME, namespace },
        spec: {
          selector: { matchLabels: SELECTOR },
          endpoints: [{ port: "http-metrics", path: "/metrics" }],
        },
      });
    }
  }
}

/**
 * What the reporter's ClusterRole allows: reading what a status is made of, patching the four kinds'
 * status subresource, and creating and patching Events.
 */
function statusRules(): k8s.PolicyRule[] {
  const definitions = Object.values(KINDS);
  const watched = [...definitions, ALLOCATION_DEFINITION];
  const groups = [...new Set(watched.map((definition) => definition.group))];
  return [
    { apiGroups: ["metal3.io"], resources: ["baremetalhosts", "hardwaredata"], verbs: READ },
    ...groups.map((group) => ({
      apiGroups: [group],
      resources: watched
        .filter((definition) => definition.group === group)
        .map((definition) => definition.plural),
      verbs: READ,
    })),
    { apiGroups: ["batch"], resources: ["jobs"], verbs: READ },
    { apiGroups: ["kustomize.toolkit.fluxcd.io"], resources: ["kustomizations"], verbs: READ },
    { apiGroups: ["argoproj.io"], resources: ["applications"], verbs: READ },
    // The status subresource alone: the spec, labels and annotations stay Git's.
    ...[...new Set(definitions.map((definition) => definition.group))].map((group) => ({
      apiGroups: [group],
      resources: definitions
        .filter((definition) => definition.group === group)
        .map((definition) => `${definition.plural}/status`),
      verbs: ["patch"],
    })),
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  ];
}

/** The reporter's container: `metalsynth status --write`, probes and `/metrics` on {@link STATUS_PORT}. */
function statusContainer(props: StatusReporterProps): k8s.Container {
  const { image, inventoryNamespaces, allocationNamespaces, allocationManagers } = props;
  const probe = (path: string) => ({
    httpGet: { path, port: k8s.IntOrString.fromString("http-metrics") },
  });
  return {
    name: "status",
    image,
    imagePullPolicy: "IfNotPresent",
    args: [
      "status",
      "--write",
      "--port",
      String(STATUS_PORT),
      ...inventoryNamespaces.flatMap((inventoryNamespace) => ["--secrets-namespace", inventoryNamespace]),
      // Judged by the Allocations the webhook trusts, so a status agrees with its answers.
      ...allocationTrustArgs(allocationNamespaces, allocationManagers),
    ],
    ports: [{ name: "http-metrics", containerPort: STATUS_PORT }],
    readinessProbe: { ...probe("/readyz"), periodSeconds: 10, failureThreshold: 3 },
    livenessProbe: { ...probe("/healthz"), periodSeconds: 10, failureThreshold: 3 },
    resources: {
      requests: {
        cpu: k8s.Quantity.fromString("100m"),
        memory: k8s.Quantity.fromString("256Mi"),
      },
      // The informers hold every BMH, CR and rendered Job, and the site's evaluation, as the webhook's do.
      limits: { cpu: k8s.Quantity.fromString("1"), memory: k8s.Quantity.fromString("1Gi") },
    },
    securityContext: CONTAINER_SECURITY,
  };
}
