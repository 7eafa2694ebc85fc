import { k8s } from "cdk8s-plus-27";
import { Construct } from "constructs";
import { allocationTrustArgs } from "./allocation-trust-args.ts";
import { CONTAINER_SECURITY, POD_SECURITY } from "./pod-security.ts";
import { CRITICAL_PODS_QUOTA, SELECTOR, TLS_SECRET, WEBHOOK_NAME, WEBHOOK_PORT } from "./names.ts";

/** How many pods of the webhook's priority class the quota allows: room for replicas and a rollout's surge, as Gatekeeper's. */
export const CRITICAL_PODS = 100;

/** Where the serving certificate's Secret is mounted. */
const TLS_DIR = "/tls";

/**
 * Node.js options of the webhook's process:
 *
 * - V8's semi-spaces at 8 MiB (a young generation of 24 MiB, as each review worker has). Left to
 *   itself V8 grows them to 64 MiB, and the server's thread then stalled 12–26 ms at a time, in
 *   front of every request waiting on it (decision 0056, amended 2026-11-30). A process can't size
 *   its own heap once started.
 * - One thread for V8's background work. What a costly review makes for them (the collector's
 *   parallel and concurrent tasks, optimising compilations) ran on up to four, taking the CPU the
 *   server's thread and the other review worker needed: with one, the other requests' p99 while
 *   it ran fell from a median of 35 ms to 15 ms in ten rounds taken in turn, at a cost of about
 *   4 % more CPU a request at peak (decision 0056, second amendment of 2026-11-30).
 */
export const WEBHOOK_NODE_OPTIONS = "--max-semi-space-size=8 --v8-pool-size=1";

/** Props of {@link WebhookDeployment}. */
export interface WebhookDeploymentProps {
  /** The webhook's namespace, also where the replicas record admissions in flight. */
  readonly namespace: string;
  /** The metalsynth image. */
  readonly image: string;
  /** The namespaces whose networkData Secrets the webhook reads (`--secrets-namespace`). */
  readonly inventoryNamespaces: readonly string[];
  /** The namespaces of the site's Allocations (`--allocation-namespace`). Empty: every namespace. */
  readonly allocationNamespaces: readonly string[];
  /** The field managers that may write an Allocation's spec (`--allocation-manager`). */
  readonly allocationManagers: readonly string[];
  /** The container's memory request and limit, from charts/webhook/sizing.ts. */
  readonly memory: { readonly requestMiB: number; readonly limitMiB: number };
  /** The pods' priorityClassName; none when undefined. */
  readonly priorityClassName?: string;
}

/**
 * The webhook's pods: two replicas, never fewer than two ready while rolling, spread over nodes,
 * non-root with a read-only root; and a PodDisruptionBudget that lets a drain evict one at a time.
 */
export class WebhookDeployment extends Construct {
  constructor(scope: Construct, id: string, props: WebhookDeploymentProps) {
    super(scope, id);
    const { namespace, priorityClassName } = props;
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
            containers: [webhookContainer(props)],
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
  }
}

/** The webhook's container: `metalsynth webhook --from-cluster` over the mounted serving certificate. */
function webhookContainer(props: WebhookDeploymentProps): k8s.Container {
  const { namespace, image, inventoryNamespaces, allocationNamespaces, allocationManagers, memory } = props;
  const probe = (path: string) => ({
    httpGet: { path, port: k8s.IntOrString.fromString("https"), scheme: "HTTPS" },
  });
  return {
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
      ...inventoryNamespaces.flatMap((inventoryNamespace) => ["--secrets-namespace", inventoryNamespace]),
      // Where the replicas record admissions in flight (decision 0056).
      "--namespace",
      namespace,
      ...allocationTrustArgs(allocationNamespaces, allocationManagers),
    ],
    env: [{ name: "NODE_OPTIONS", value: WEBHOOK_NODE_OPTIONS }],
    ports: [{ name: "https", containerPort: WEBHOOK_PORT }],
    readinessProbe: { ...probe("/readyz"), periodSeconds: 5, failureThreshold: 2 },
    livenessProbe: { ...probe("/healthz"), periodSeconds: 10, failureThreshold: 3 },
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
  };
}

/** Props of {@link WebhookService}. */
export interface WebhookServiceProps {
  /** The webhook's namespace. */
  readonly namespace: string;
}

/** The Service the API server calls the webhook through (port 443 to the pods' `https`). */
export class WebhookService extends Construct {
  constructor(scope: Construct, id: string, props: WebhookServiceProps) {
    super(scope, id);
    new k8s.KubeService(this, "service", {
      // Labelled like the pods, for a ServiceMonitor's selector.
      metadata: { name: WEBHOOK_NAME, namespace: props.namespace, labels: SELECTOR },
      spec: {
        selector: SELECTOR,
        ports: [{ name: "https", port: 443, targetPort: k8s.IntOrString.fromString("https") }],
      },
    });
  }
}

/** Props of {@link CriticalPodsQuota}. */
export interface CriticalPodsQuotaProps {
  /** The webhook's namespace. */
  readonly namespace: string;
  /** The webhook pods' priority class. */
  readonly priorityClassName: string;
}

/**
 * A ResourceQuota naming the webhook pods' priority class. Some distributions admit pods of a
 * system-* priority class outside kube-system only where a ResourceQuota names that class (the
 * ResourceQuota admission plugin's limitedResources, as GKE configures it); elsewhere this quota
 * changes nothing. Gatekeeper ships the same.
 */
export class CriticalPodsQuota extends Construct {
  constructor(scope: Construct, id: string, props: CriticalPodsQuotaProps) {
    super(scope, id);
    new k8s.KubeResourceQuota(this, "critical-pods", {
      metadata: { name: CRITICAL_PODS_QUOTA, namespace: props.namespace },
      spec: {
        hard: { pods: k8s.Quantity.fromString(String(CRITICAL_PODS)) },
        scopeSelector: {
          matchExpressions: [
            { operator: "In", scopeName: "PriorityClass", values: [props.priorityClassName] },
          ],
        },
      },
    });
  }
}
