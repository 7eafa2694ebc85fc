import { App } from "cdk8s";
import { readFileSync } from "node:fs";
import { toYamlStream } from "../../synth/codec/yaml-output.ts";
import { DEFAULT_ALLOCATION_MANAGERS } from "../../synth/schema/allocation.ts";
import { objectsOf } from "../index.ts";
import { WEBHOOK_NAME } from "./names.ts";
import { WebhookChart, type WebhookChartProps } from "./webhook-chart.ts";

export { ADMISSIONS_CONFIGMAP, SECRETS_ROLE, WEBHOOK_NAME } from "./names.ts";
export { TIMEOUT_SECONDS } from "./validating-webhook.ts";
export { WebhookChart, type WebhookChartProps } from "./webhook-chart.ts";

/** Where the webhook is installed unless `--namespace` says otherwise. */
export const DEFAULT_NAMESPACE = "metalsynth-system";
/**
 * The namespace the inventory's networkData Secrets are in unless `--inventory-namespace` says
 * otherwise: Metal3's own (where its baremetal-operator and the BareMetalHosts live by default).
 */
export const DEFAULT_INVENTORY_NAMESPACES: readonly string[] = ["metal3"];
/** The API server reaches the webhook from outside the pod network: any address unless narrowed. */
export const DEFAULT_API_SERVER_CIDRS: readonly string[] = ["0.0.0.0/0", "::/0"];
/** Namespaces whose Prometheus may scrape `/metrics` carry this label. */
export const DEFAULT_METRICS_NAMESPACE_LABEL: Readonly<Record<string, string>> = {
  "metalsynth.io/metrics": "allowed",
};
/** Like the other admission controllers of a cluster: evicted last, scheduled first. */
export const DEFAULT_PRIORITY_CLASS = "system-cluster-critical";
/** The image `docker build -t metalsynth:<version> .` produces from the repository's Dockerfile. */
export const DEFAULT_IMAGE = `metalsynth:${packageVersion()}`;
/** The version of the package, of the image it builds and of its Helm chart. */
export const PACKAGE_VERSION = packageVersion();

/**
 * The version in package.json: two directories up from charts/webhook/ in the sources, three up from
 * dist/charts/webhook/ in the build and the installed package. Read, not imported as JSON: Node 20
 * before 20.18.3 warns on stderr that JSON modules are experimental, and tsc would copy package.json
 * into dist/, where a copy goes stale.
 */
function packageVersion(): string {
  const relative = import.meta.url.endsWith(".ts") ? "../../package.json" : "../../../package.json";
  const parsed: unknown = JSON.parse(readFileSync(new URL(relative, import.meta.url), "utf8"));
  if (
    typeof parsed === "object" &&
    parsed !== null &&
    "version" in parsed &&
    typeof parsed.version === "string"
  ) {
    return parsed.version;
  }
  throw new Error(`package.json (${relative}) has no version`);
}

/** Options of {@link webhookManifests}; each defaults as its constant says. */
export interface WebhookManifestOptions {
  /** @default DEFAULT_NAMESPACE */
  readonly namespace?: string;
  /** @default DEFAULT_IMAGE */
  readonly image?: string;
  /** @default DEFAULT_INVENTORY_NAMESPACES */
  readonly inventoryNamespaces?: readonly string[];
  /** `false` leaves the NetworkPolicy out. @default DEFAULT_API_SERVER_CIDRS and DEFAULT_METRICS_NAMESPACE_LABEL */
  readonly networkPolicy?: WebhookChartProps["networkPolicy"] | false;
  /** @default false */
  readonly serviceMonitor?: boolean;
  /** `null`: none. @default DEFAULT_PRIORITY_CLASS */
  readonly priorityClassName?: string | null;
  /** @default none: every namespace */
  readonly allocationNamespaces?: readonly string[];
  /** @default DEFAULT_ALLOCATION_MANAGERS */
  readonly allocationManagers?: readonly string[];
  /** The site the memory is sized for. @default DEFAULT_SIZING */
  readonly sizing?: { readonly hosts: number; readonly clusters: number };
}

/** The webhook's deployment objects, in apply order (CRDs and Namespace first). */
export function webhookManifests(options: WebhookManifestOptions = {}): unknown[] {
  const app = new App({ recordConstructMetadata: false });
  return objectsOf(
    new WebhookChart(app, WEBHOOK_NAME, {
      namespace: options.namespace ?? DEFAULT_NAMESPACE,
      image: options.image ?? DEFAULT_IMAGE,
      inventoryNamespaces: options.inventoryNamespaces ?? DEFAULT_INVENTORY_NAMESPACES,
      ...(options.networkPolicy !== false && {
        networkPolicy: options.networkPolicy ?? {
          apiServerCidrs: DEFAULT_API_SERVER_CIDRS,
          metricsNamespaceLabel: DEFAULT_METRICS_NAMESPACE_LABEL,
        },
      }),
      serviceMonitor: options.serviceMonitor ?? false,
      ...(options.priorityClassName !== null && {
        priorityClassName: options.priorityClassName ?? DEFAULT_PRIORITY_CLASS,
      }),
      allocationNamespaces: options.allocationNamespaces ?? [],
      allocationManagers: options.allocationManagers ?? DEFAULT_ALLOCATION_MANAGERS,
      ...(options.sizing && { sizing: options.sizing }),
    }),
  );
}

/** {@link webhookManifests} as the YAML stream `metalsynth manifests` prints and deploy/metalsynth.yaml holds. */
export function webhookManifestsYaml(options: WebhookManifestOptions = {}): string {
  return [
    "# metalsynth: CRDs and the validating admission webhook. Requires cert-manager.",
    "# Generated by `metalsynth manifests` (`npm run manifests` writes deploy/metalsynth.yaml); do not edit.",
    toYamlStream(webhookManifests(options)),
  ].join("\n");
}
