import { ApiObject, Chart } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import { Construct } from "constructs";
import { customResourceDefinitions } from "../../synth/schema/crds.ts";
import { MANAGED_BY_LABEL } from "../metadata.ts";
import { ServingCertificate } from "./certificates.ts";
import { CriticalPodsQuota, WebhookDeployment, WebhookService } from "./deployment.ts";
import { SECRETS_ROLE } from "./names.ts";
import { WebhookNetworkPolicy, WebhookServiceMonitor } from "./network.ts";
import { AdmissionsRecord, WebhookRbac } from "./rbac.ts";
import { DEFAULT_SIZING, memoryFor } from "./sizing.ts";
import { StatusReporter } from "./status-reporter.ts";
import { ValidatingWebhook } from "./validating-webhook.ts";

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

/**
 * Everything `kubectl apply -f deploy/metalsynth.yaml` installs (docs/contract.md §5), in apply order:
 * the four CRDs and the Allocation's, the webhook's Namespace, its identity (ServiceAccount, read-only
 * ClusterRole without Secrets, a Role for Secrets in each inventory namespace), the ConfigMap of
 * admissions in flight, cert-manager's chain (self-signed root, CA Issuer, serving Certificate), the
 * Service, the Deployment (two replicas, probes, non-root, read-only root file system) and its
 * PodDisruptionBudget, a ResourceQuota admitting its priority class, the NetworkPolicy and
 * ServiceMonitor when asked for, the ValidatingWebhookConfiguration whose CA bundle cert-manager
 * injects, and the status reporter.
 */
export class WebhookChart extends Chart {
  constructor(scope: Construct, id: string, props: WebhookChartProps) {
    super(scope, id, {
      labels: { [MANAGED_BY_LABEL]: "metalsynth", "app.kubernetes.io/part-of": "metalsynth" },
      disableResourceNameHashes: true,
    });
    const { namespace, image, inventoryNamespaces, networkPolicy, serviceMonitor, priorityClassName } = props;
    const { allocationNamespaces, allocationManagers } = props;
    if (inventoryNamespaces.length === 0)
      throw new Error("the webhook needs at least one inventory namespace");

    new CustomResourceDefinitions(this, "crds");
    new RestrictedNamespace(this, "namespace", { name: namespace });
    new WebhookRbac(this, "rbac", { namespace, inventoryNamespaces });
    new AdmissionsRecord(this, "admissions-record", { namespace });
    new ServingCertificate(this, "tls", { namespace });
    new WebhookService(this, "service", { namespace });
    new WebhookDeployment(this, "deployment", {
      namespace,
      image,
      inventoryNamespaces,
      allocationNamespaces,
      allocationManagers,
      memory: memoryFor(props.sizing ?? DEFAULT_SIZING),
      ...(priorityClassName !== undefined && { priorityClassName }),
    });
    if (priorityClassName !== undefined)
      new CriticalPodsQuota(this, "critical-pods", { namespace, priorityClassName });
    if (networkPolicy !== undefined)
      new WebhookNetworkPolicy(this, "network-policy", { namespace, ...networkPolicy });
    if (serviceMonitor) new WebhookServiceMonitor(this, "service-monitor", { namespace });
    new ValidatingWebhook(this, "validating-webhook", { namespace });
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

/** The CRDs of the four CR kinds and the Allocation (synth/schema/crds.ts), first: everything after may name them. */
class CustomResourceDefinitions extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    for (const crd of customResourceDefinitions()) {
      const { apiVersion, kind, metadata, ...rest } = crd;
      new ApiObject(this, `crd-${String((metadata as { name: string }).name)}`, {
        apiVersion: String(apiVersion),
        kind: String(kind),
        metadata: metadata as { name: string },
        ...rest,
      });
    }
  }
}

/** The webhook's Namespace, whose Pod Security admission refuses any pod that is not `restricted`. */
class RestrictedNamespace extends Construct {
  constructor(scope: Construct, id: string, props: { readonly name: string }) {
    super(scope, id);
    new k8s.KubeNamespace(this, "namespace", {
      metadata: {
        name: props.name,
        labels: Object.fromEntries(
          ["enforce", "audit", "warn"].map((mode) => [
            `pod-security.kubernetes.io/${mode}`,
            POD_SECURITY_LEVEL,
          ]),
        ),
      },
    });
  }
}
