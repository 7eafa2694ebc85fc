import { ApiObject, Chart } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import { customResourceDefinitions } from "../../synth/schema/crds.ts";
import { ALLOCATION_DEFINITION } from "../../synth/schema/allocation.ts";
import { KINDS } from "../../synth/schema/kinds.ts";
import { MANAGED_BY_LABEL } from "../metadata.ts";
import { DEFAULT_SIZING, memoryFor } from "./sizing.ts";
import { allocationTrustArgs } from "./allocation-trust-args.ts";
import { CONTAINER_SECURITY, POD_SECURITY } from "./pod-security.ts";
import { StatusReporter } from "./status-reporter.ts";

/** Props of {@link WebhookChart}. */
export interface WebhookChartProps {
  /** Namespace of the webhook's own objects; excluded from review. */
  readonly namespace: string;
  /** The metalsynth image the Deployment runs (built from the repository's Dockerfile). */
  readonly image: string;
  /**
   * The namespaces that hold the inventory's networkData Secrets: the webhook may read Secrets there
   * (a Role in each) and nowhere else, and reads only those (`--secrets-namespace`). Each must exist.
   */
  readonly inventoryNamespaces: readonly string[];
  /**
   * A NetworkPolicy that admits traffic to the webhook's port only, from `apiServerCidrs` (the API
   * server is no pod a selector could name) and from namespaces labelled `metricsNamespaceLabel`
   * (Prometheus); nothing else reaches the pods. Omitted when undefined.
   */
  readonly networkPolicy?: {
    readonly apiServerCidrs: readonly string[];
    readonly metricsNamespaceLabel: Readonly<Record<string, string>>;
  };
  /** A prometheus-operator ServiceMonitor scraping `/metrics` over the Service's TLS. */
  readonly serviceMonitor: boolean;
  /** The pods' priorityClassName; none when undefined. */
  readonly priorityClassName?: string;
  /**
   * The namespaces the site's Allocations are in: only those are watched and trusted
   * (`--allocation-namespace`, decision 0056). Empty: every namespace.
   */
  readonly allocationNamespaces: readonly string[];
  /** The field managers that may write an Allocation's spec (`--allocation-manager`). */
  readonly allocationManagers: readonly string[];
  /**
   * The site the webhook's memory is sized for (charts/webhook/sizing.ts).
   * @default DEFAULT_SIZING
   */
  readonly sizing?: { readonly hosts: number; readonly clusters: number };
}

/** The Pod Security level the webhook's namespace enforces (its pods meet it). */
export const POD_SECURITY_LEVEL = "restricted";

/** Name of the Deployment, Service, ServiceAccount, RBAC objects, PDB, certificate and configuration. */
export const WEBHOOK_NAME = "metalsynth-webhook";
/** The Role (and RoleBinding) in each inventory namespace that lets the webhook read Secrets there. */
export const SECRETS_ROLE = `${WEBHOOK_NAME}-secrets`;
/**
 * The ConfigMap the replicas record admissions in flight in (decision 0056): made by the chart, so
 * the webhook needs no right to create ConfigMaps, only to read and write this one.
 */
export const ADMISSIONS_CONFIGMAP = `${WEBHOOK_NAME}-admissions`;
/** The ResourceQuota that lets the namespace run pods of the webhook's priority class. */
export const CRITICAL_PODS_QUOTA = `${WEBHOOK_NAME}-critical-pods`;
/** How many pods of that class the quota allows: room for replicas and a rollout's surge, as Gatekeeper's. */
export const CRITICAL_PODS = 100;
/** The Secret cert-manager writes the serving certificate into. */
const TLS_SECRET = `${WEBHOOK_NAME}-tls`;
/** The root CA's Certificate and Secret: it issues the serving certificate; its certificate is the CA bundle. */
export const CA_NAME = `${WEBHOOK_NAME}-ca`;
/** The self-signed Issuer that makes the root CA. */
const ROOT_ISSUER = `${WEBHOOK_NAME}-selfsigned`;
/** The port the server listens on inside the pod (non-root: above 1024). */
const WEBHOOK_PORT = 8443;
/** The API server gives up on a call after this many seconds (docs/contract.md §5); the server answers within 4 s. */
export const TIMEOUT_SECONDS = 5;

const TLS_DIR = "/tls";
const SELECTOR = { "app.kubernetes.io/name": WEBHOOK_NAME };

/**
 * Everything `kubectl apply -f deploy/metalsynth.yaml` installs (docs/contract.md §5): the four CRDs, the
 * webhook's Namespace, ServiceAccount, read-only ClusterRole (no Secrets) and a Role for Secrets in
 * each inventory namespace, cert-manager's chain (self-signed root, CA Issuer, serving Certificate), the Deployment (two replicas, probes, non-root, read-only root file system), its
 * Service and PodDisruptionBudget, a ResourceQuota admitting its priority class, and the
 * ValidatingWebhookConfiguration whose CA bundle cert-manager injects.
 */
export class WebhookChart extends Chart {
  constructor(scope: Construct, id: string, props: WebhookChartProps) {
    super(scope, id, {
      labels: { [MANAGED_BY_LABEL]: "metalsynth", "app.kubernetes.io/part-of": "metalsynth" },
      disableResourceNameHashes: true,
    });
    const {
      namespace,
      image,
      inventoryNamespaces,
      networkPolicy,
      serviceMonitor,
      priorityClassName,
      allocationNamespaces,
      allocationManagers,
    } = props;
    const memory = memoryFor(props.sizing ?? DEFAULT_SIZING);
    if (inventoryNamespaces.length === 0)
      throw new Error("the webhook needs at least one inventory namespace");
    const service = `${WEBHOOK_NAME}.${namespace}.svc`;

    for (const crd of customResourceDefinitions()) {
      const { apiVersion, kind, metadata, ...rest } = crd;
      new ApiObject(this, `crd-${String((metadata as { name: string }).name)}`, {
        apiVersion: String(apiVersion),
        kind: String(kind),
        metadata: metadata as { name: string },
        ...rest,
      });
    }

    // Pod Security admission refuses any pod in the namespace that is not `restricted`.
    new k8s.KubeNamespace(this, "namespace", {
      metadata: {
        name: namespace,
        labels: Object.fromEntries(
          ["enforce", "audit", "warn"].map((mode) => [
            `pod-security.kubernetes.io/${mode}`,
            POD_SECURITY_LEVEL,
          ]),
        ),
      },
    });
    new k8s.KubeServiceAccount(this, "service-account", { metadata: { name: WEBHOOK_NAME, namespace } });

    const definitions = Object.values(KINDS);
    // It reads the four CR kinds it reviews, and the Allocations that carry Git's lock (decision 0039).
    const watched = [...definitions, ALLOCATION_DEFINITION];
    const read = ["get", "list", "watch"];
    new k8s.KubeClusterRole(this, "cluster-role", {
      metadata: { name: WEBHOOK_NAME },
      rules: [
        { apiGroups: ["metal3.io"], resources: ["baremetalhosts", "hardwaredata"], verbs: read },
        ...[...new Set(watched.map((definition) => definition.group))].map((group) => ({
          apiGroups: [group],
          resources: watched
            .filter((definition) => definition.group === group)
            .map((definition) => definition.plural),
          verbs: read,
        })),
      ],
    });
    new k8s.KubeClusterRoleBinding(this, "cluster-role-binding", {
      metadata: { name: WEBHOOK_NAME },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: WEBHOOK_NAME },
      subjects: [{ kind: "ServiceAccount", name: WEBHOOK_NAME, namespace }],
    });
    // Secrets in the inventory namespaces only, nothing cluster-wide (decision 0037). RBAC can't
    // select by label: this allows reading every Secret of those namespaces, but the webhook lists and
    // watches only those labelled metalsynth.io/network-data=true.
    for (const inventoryNamespace of inventoryNamespaces) {
      new k8s.KubeRole(this, `secrets-role-${inventoryNamespace}`, {
        metadata: { name: SECRETS_ROLE, namespace: inventoryNamespace },
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: read }],
      });
      new k8s.KubeRoleBinding(this, `secrets-role-binding-${inventoryNamespace}`, {
        metadata: { name: SECRETS_ROLE, namespace: inventoryNamespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: SECRETS_ROLE },
        subjects: [{ kind: "ServiceAccount", name: WEBHOOK_NAME, namespace }],
      });
    }

    // Admissions in flight, shared by the replicas (decision 0056): this ConfigMap and no other.
    new k8s.KubeConfigMap(this, "admissions", {
      metadata: { name: ADMISSIONS_CONFIGMAP, namespace },
    });
    new k8s.KubeRole(this, "admissions-role", {
      metadata: { name: ADMISSIONS_CONFIGMAP, namespace },
      rules: [
        {
          apiGroups: [""],
          resources: ["configmaps"],
          resourceNames: [ADMISSIONS_CONFIGMAP],
          verbs: ["get", "list", "watch", "update"],
        },
      ],
    });
    new k8s.KubeRoleBinding(this, "admissions-role-binding", {
      metadata: { name: ADMISSIONS_CONFIGMAP, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: ADMISSIONS_CONFIGMAP },
      subjects: [{ kind: "ServiceAccount", name: WEBHOOK_NAME, namespace }],
    });

    // A chain, as cert-manager advises for webhooks (decision 0037): a self-signed root, a CA Issuer
    // of that root, and the serving certificate it issues. The CA bundle the API server trusts is the
    // root's certificate, so renewing the serving certificate (new key each time) changes nothing the
    // API server holds; and the root renews with the same key, so a serving certificate issued before
    // a root renewal verifies against the renewed root too: no request is refused at either renewal.
    new ApiObject(this, "root-issuer", {
      apiVersion: "cert-manager.io/v1",
      kind: "Issuer",
      metadata: { name: ROOT_ISSUER, namespace },
      spec: { selfSigned: {} },
    });
    new ApiObject(this, "ca-certificate", {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: CA_NAME, namespace },
      spec: {
        isCA: true,
        commonName: CA_NAME,
        secretName: CA_NAME,
        // Five years, renewed a year early; the key is kept (see above).
        duration: "43800h",
        renewBefore: "8760h",
        issuerRef: { name: ROOT_ISSUER, kind: "Issuer" },
        privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Never" },
      },
    });
    new ApiObject(this, "issuer", {
      apiVersion: "cert-manager.io/v1",
      kind: "Issuer",
      metadata: { name: WEBHOOK_NAME, namespace },
      spec: { ca: { secretName: CA_NAME } },
    });
    new ApiObject(this, "certificate", {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: WEBHOOK_NAME, namespace },
      spec: {
        secretName: TLS_SECRET,
        dnsNames: [service, `${service}.cluster.local`],
        issuerRef: { name: WEBHOOK_NAME, kind: "Issuer" },
        privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      },
    });

    new k8s.KubeService(this, "service", {
      // Labelled like the pods, for a ServiceMonitor's selector.
      metadata: { name: WEBHOOK_NAME, namespace, labels: SELECTOR },
      spec: {
        selector: SELECTOR,
        ports: [{ name: "https", port: 443, targetPort: k8s.IntOrString.fromString("https") }],
      },
    });

    new k8s.KubeDeployment(this, "deployment", {
      metadata: { name: WEBHOOK_NAME, namespace },
      spec: {
        replicas: 2,
        selector: { matchLabels: SELECTOR },
        // Never fewer than two ready replicas while rolling: every CR write depends on them.
        strategy: {
          type: "RollingUpdate",
          rollingUpdate: {
            maxUnavailable: k8s.IntOrString.fromNumber(0),
            maxSurge: k8s.IntOrString.fromNumber(1),
          },
        },
        template: {
          metadata: { labels: SELECTOR },
          spec: {
            serviceAccountName: WEBHOOK_NAME,
            ...(priorityClassName !== undefined && { priorityClassName }),
            securityContext: POD_SECURITY,
            // SIGTERM: 3 s of draining, then up to 10 s for requests in flight.
            terminationGracePeriodSeconds: 30,
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: "kubernetes.io/hostname",
                whenUnsatisfiable: "ScheduleAnyway",
                labelSelector: { matchLabels: SELECTOR },
              },
            ],
            containers: [
              {
                name: "webhook",
                image,
                imagePullPolicy: "IfNotPresent",
                args: [
                  "webhook",
                  "--from-cluster",
                  "--tls-cert",
                  `${TLS_DIR}/tls.crt`,
                  "--tls-key",
                  `${TLS_DIR}/tls.key`,
                  "--port",
                  String(WEBHOOK_PORT),
                  ...inventoryNamespaces.flatMap((inventoryNamespace) => [
                    "--secrets-namespace",
                    inventoryNamespace,
                  ]),
                  // Where the replicas record admissions in flight (decision 0056).
                  "--namespace",
                  namespace,
                  ...allocationTrustArgs(allocationNamespaces, allocationManagers),
                ],
                ports: [{ name: "https", containerPort: WEBHOOK_PORT }],
                readinessProbe: {
                  httpGet: { path: "/readyz", port: k8s.IntOrString.fromString("https"), scheme: "HTTPS" },
                  periodSeconds: 5,
                  failureThreshold: 2,
                },
                livenessProbe: {
                  httpGet: { path: "/healthz", port: k8s.IntOrString.fromString("https"), scheme: "HTTPS" },
                  periodSeconds: 10,
                  failureThreshold: 3,
                },
                // Memory from the measured formula for the site's size (charts/webhook/sizing.ts);
                // CPU for three threads: the server's and two review workers'.
                resources: {
                  requests: {
                    cpu: k8s.Quantity.fromString("200m"),
                    memory: k8s.Quantity.fromString(`${memory.requestMiB}Mi`),
                  },
                  limits: {
                    cpu: k8s.Quantity.fromString("2"),
                    memory: k8s.Quantity.fromString(`${memory.limitMiB}Mi`),
                  },
                },
                securityContext: CONTAINER_SECURITY,
                volumeMounts: [{ name: "tls", mountPath: TLS_DIR, readOnly: true }],
              },
            ],
            volumes: [
              // Mounted as a directory (not subPath) so that cert-manager's renewals reach the pod.
              { name: "tls", secret: { secretName: TLS_SECRET, defaultMode: 0o440 } },
            ],
          },
        },
      },
    });

    // One replica may be evicted at a time: a drain proceeds whatever the replica count, and never
    // takes the last ready one while another is up (`minAvailable: 1` blocked a drain at one replica).
    new k8s.KubePodDisruptionBudget(this, "pdb", {
      metadata: { name: WEBHOOK_NAME, namespace },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: SELECTOR } },
    });

    // Some distributions admit pods of a system-* priority class outside kube-system only where a
    // ResourceQuota names that class (the ResourceQuota admission plugin's limitedResources, as GKE
    // configures it); elsewhere this quota changes nothing. Gatekeeper ships the same.
    if (priorityClassName !== undefined) {
      new k8s.KubeResourceQuota(this, "critical-pods", {
        metadata: { name: CRITICAL_PODS_QUOTA, namespace },
        spec: {
          hard: { pods: k8s.Quantity.fromString(String(CRITICAL_PODS)) },
          scopeSelector: {
            matchExpressions: [{ operator: "In", scopeName: "PriorityClass", values: [priorityClassName] }],
          },
        },
      });
    }

    if (networkPolicy !== undefined) {
      const port = [{ protocol: "TCP", port: k8s.IntOrString.fromNumber(WEBHOOK_PORT) }];
      new k8s.KubeNetworkPolicy(this, "network-policy", {
        metadata: { name: WEBHOOK_NAME, namespace },
        spec: {
          podSelector: { matchLabels: SELECTOR },
          policyTypes: ["Ingress"],
          ingress: [
            // Admission reviews (and the kubelet's probes, which no policy filters).
            { ports: port, from: networkPolicy.apiServerCidrs.map((cidr) => ({ ipBlock: { cidr } })) },
            // /metrics shares the port: scrapes from the monitoring namespaces.
            {
              ports: port,
              from: [{ namespaceSelector: { matchLabels: { ...networkPolicy.metricsNamespaceLabel } } }],
            },
          ],
        },
      });
    }

    if (serviceMonitor) {
      new ApiObject(this, "service-monitor", {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "ServiceMonitor",
        metadata: { name: WEBHOOK_NAME, namespace },
        spec: {
          selector: { matchLabels: SELECTOR },
          endpoints: [
            {
              port: "https",
              scheme: "https",
              path: "/metrics",
              // The serving certificate's own Secret holds the CA that issued it.
              tlsConfig: { serverName: service, ca: { secret: { name: TLS_SECRET, key: "ca.crt" } } },
            },
          ],
        },
      });
    }

    new k8s.KubeValidatingWebhookConfiguration(this, "validating-webhook", {
      metadata: {
        name: WEBHOOK_NAME,
        // The root's certificate: it changes only when the root is renewed.
        annotations: { "cert-manager.io/inject-ca-from": `${namespace}/${CA_NAME}` },
      },
      webhooks: [...definitions, ALLOCATION_DEFINITION].map((definition) => ({
        // kubectl shows it: admission webhook "provisioning.metalsynth.io" denied the request: …
        name: `${definition.singular}.metalsynth.io`,
        admissionReviewVersions: ["v1"],
        // A CR admitted for real is recorded in the admissions ConfigMap; a dry run writes nothing
        // (decision 0056). An Allocation's review writes nothing at all.
        sideEffects: definition === ALLOCATION_DEFINITION ? "None" : "NoneOnDryRun",
        failurePolicy: "Fail",
        matchPolicy: "Equivalent",
        timeoutSeconds: TIMEOUT_SECONDS,
        clientConfig: {
          service: { namespace, name: WEBHOOK_NAME, path: `/validate/${definition.singular}`, port: 443 },
        },
        // DELETE is always allowed (docs/contract.md §5), so the API server need not call for it.
        rules: [
          {
            apiGroups: [definition.group],
            apiVersions: [definition.version],
            operations: ["CREATE", "UPDATE"],
            resources: [definition.plural],
            scope: "Namespaced",
          },
        ],
        namespaceSelector: {
          matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: [namespace] }],
        },
      })),
    });

    // The status reporter beside it, with a ServiceAccount of its own (decision 0059).
    new StatusReporter(this, "status", {
      namespace,
      image,
      inventoryNamespaces,
      secretsRole: SECRETS_ROLE,
      allocationNamespaces,
      allocationManagers,
      ...(networkPolicy && { metricsNamespaceLabel: networkPolicy.metricsNamespaceLabel }),
      serviceMonitor,
    });
  }
}
