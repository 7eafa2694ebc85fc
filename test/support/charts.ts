/**
 * Fixtures for the chart tests (imported by `*.test.ts` only): real BPA cluster plans, made by running
 * spec YAML through the same rules and planner as synth, so the charts are tested on plans synth
 * would really render.
 */
import { ApplicationSet } from "@kubernetes-models/argo-cd/argoproj.io/v1alpha1";
import { Certificate, Issuer } from "@kubernetes-models/cert-manager/cert-manager.io/v1";
import { Kustomization } from "@kubernetes-models/flux-cd/kustomize.toolkit.fluxcd.io/v1";
import { App, type Chart } from "cdk8s";
import { ValidatingWebhookConfiguration } from "kubernetes-models/admissionregistration.k8s.io/v1";
import { CustomResourceDefinition } from "kubernetes-models/apiextensions.k8s.io/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { ConfigMap, Namespace, ResourceQuota, Service, ServiceAccount } from "kubernetes-models/v1";
import { Job } from "kubernetes-models/batch/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { makeInventory, makeHost } from "../builders/inventory.ts";
import { evaluateYaml } from "../harness.ts";
import { labelKeyProblem, labelValueProblem } from "../../synth/inventory/selector.ts";
import { renderPlan, type BpaRender } from "../../synth/plan/render-plan.ts";
import { DEFAULT_SETTINGS, type SiteSettings } from "../../synth/schema/settings.ts";
import { objectsOf } from "../../charts/index.ts";
import { ALLOCATION_DEFINITION } from "../../synth/schema/allocation.ts";
import { apiVersionOf, kindFor } from "../../synth/schema/kinds.ts";

/** A host of the fixture inventory: its BMH name, the MAC the specs use and that NIC's address. */
export interface FixtureHost {
  readonly name: string;
  readonly mac: string;
  readonly ip: string;
}

/** Three masters and two workers, addressed on 10.10.110.0/24. */
const FIXTURE_HOSTS: readonly FixtureHost[] = [
  { name: "node-01", mac: "00:c6:14:04:61:01", ip: "10.10.110.21" },
  { name: "node-02", mac: "00:c6:14:04:61:02", ip: "10.10.110.22" },
  { name: "node-03", mac: "00:c6:14:04:61:03", ip: "10.10.110.23" },
  { name: "node-04", mac: "00:c6:14:04:61:04", ip: "10.10.110.31" },
  { name: "node-05", mac: "00:c6:14:04:61:05", ip: "10.10.110.32" },
];

/** Overrides of {@link bpaPlan}. */
export interface BpaPlanOptions {
  /** @default "cluster-east" */
  readonly cluster?: string;
  /** @default "edge-a" */
  readonly namespace?: string;
  /** Node label → fixture host name. @default master-1..3 on node-01..03 */
  readonly masters?: Readonly<Record<string, string>>;
  /** Node label → fixture host name, or `null` for "same host as that master". @default worker-1, worker-2 on node-04, node-05 */
  readonly workers?: Readonly<Record<string, string | null>>;
  /** @default ["multus", "ovn4nfv"] */
  readonly plugins?: readonly string[];
  /** @default "10.244.64.0/18"; `null` omits it */
  readonly podSubnet?: string | null;
  /** Master packages (`name` or `name=version`); `undefined` for no Software CR. */
  readonly masterSoftware?: readonly string[];
  /** Worker packages (`name` or `name=version`). @default [] */
  readonly workerSoftware?: readonly string[];
  /** Address overrides by fixture host name. */
  readonly ips?: Readonly<Record<string, string>>;
}

/** A real cluster plan: spec YAML built from the options, planned against the fixture hosts. */
export function bpaPlan(options: BpaPlanOptions = {}): BpaRender {
  const cluster = options.cluster ?? "cluster-east";
  const namespace = options.namespace ?? "edge-a";
  const masters = options.masters ?? { "master-1": "node-01", "master-2": "node-02", "master-3": "node-03" };
  const workers = options.workers ?? { "worker-1": "node-04", "worker-2": "node-05" };
  const plugins = options.plugins ?? ["multus", "ovn4nfv"];
  const podSubnet = options.podSubnet === undefined ? "10.244.64.0/18" : options.podSubnet;
  const hostByName = new Map(FIXTURE_HOSTS.map((host) => [host.name, host]));
  const macOf = (name: string): string => {
    const host = hostByName.get(name);
    if (!host) throw new Error(`no fixture host ${name}`);
    return host.mac;
  };
  const entry = (label: string, host: string | null) =>
    host === null ? `    - ${label}:\n` : `    - ${label}:\n        mac-address: ${macOf(host)}\n`;
  const provisioning = [
    "apiVersion: bpa.akraino.org/v1alpha1",
    "kind: Provisioning",
    `metadata:\n  name: ${cluster}\n  namespace: ${namespace}\n  labels:\n    cluster: ${cluster}`,
    "spec:",
    `  masters:\n${Object.entries(masters)
      .map(([label, host]) => entry(label, host))
      .join("")}`.trimEnd(),
    ...(Object.keys(workers).length > 0
      ? [
          `  workers:\n${Object.entries(workers)
            .map(([label, host]) => entry(label, host))
            .join("")}`.trimEnd(),
        ]
      : []),
    ...(plugins.length > 0
      ? [`  KUDPlugins:\n${plugins.map((plugin) => `    - ${plugin}`).join("\n")}`]
      : []),
    ...(podSubnet === null ? [] : [`  PodSubnet: ${podSubnet}`]),
  ].join("\n");
  const software =
    options.masterSoftware === undefined
      ? []
      : [
          [
            "apiVersion: bpa.akraino.org/v1alpha1",
            "kind: Software",
            `metadata:\n  name: ${cluster}-software\n  namespace: ${namespace}\n  labels:\n    cluster: ${cluster}`,
            "spec:",
            `  masterSoftware:${softwareItems(options.masterSoftware)}`,
            `  workerSoftware:${softwareItems(options.workerSoftware ?? [])}`,
          ].join("\n"),
        ];
  const yaml = [provisioning, ...software].join("\n---\n");
  const inventory = makeInventory(
    FIXTURE_HOSTS.map((host) =>
      makeHost({
        name: host.name,
        nics: [{ name: "ens1f0", mac: host.mac, ipv4: options.ips?.[host.name] ?? host.ip }],
      }),
    ),
  );
  const evaluation = evaluateYaml(yaml, inventory);
  if (evaluation.all.length > 0)
    throw new Error(`fixture has issues:\n${yaml}\n${JSON.stringify(evaluation.all, null, 2)}`);
  const plan = renderPlan(evaluation.plan, evaluation.all)?.clusters.find(
    (candidate) => candidate.key === `${namespace}/${cluster}`,
  );
  if (plan?.kind !== "bpa") throw new Error(`no BPA plan for ${namespace}/${cluster}`);
  return plan;
}

function softwareItems(packages: readonly string[]): string {
  if (packages.length === 0) return " []";
  return packages
    .map((item) => {
      const [name, version] = item.split("=");
      return version === undefined ? `\n    - ${name}` : `\n    - ${name}:\n        version: "${version}"`;
    })
    .join("");
}

/** The default site settings. */
export function settings(overrides: { job?: Partial<SiteSettings["job"]> } = {}): SiteSettings {
  return { ...DEFAULT_SETTINGS, job: { ...DEFAULT_SETTINGS.job, ...overrides.job } };
}

/** A fresh App for a chart under test, independent of CDK8S_* environment variables. */
export function testApp(): App {
  return new App({ recordConstructMetadata: false });
}

/** A chart's objects as `objectsOf` renders them, typed loosely for assertions. */
export function synthObjects(chart: Chart): KubeObject[] {
  return objectsOf(chart).map(asKubeObject);
}

/** The objects of each file of a cluster's charts (file name → chart), as synth writes them. */
export function objectsByFile(charts: ReadonlyMap<string, Chart>): Map<string, unknown[]> {
  return new Map([...charts].map(([file, chart]) => [file, objectsOf(chart)]));
}

/** The first object of `kind` (and `name`, when given), or an error listing what there is. */
export function findObject(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.find(
    (object) => object.kind === kind && (name === undefined || object.metadata.name === name),
  );
  if (!found) {
    const present = objects.map((object) => `${object.kind}/${object.metadata.name}`).join(", ");
    throw new Error(`no ${kind}${name === undefined ? "" : `/${name}`} in ${present}`);
  }
  return found;
}

/** `value` as a {@link KubeObject}, or an error naming what it is instead. */
export function asKubeObject(value: unknown): KubeObject {
  if (!isKubeObject(value)) throw new Error(`not a Kubernetes object: ${JSON.stringify(value)}`);
  return value;
}

/** The fields every chart test reads; the rest stays unknown until a test narrows it. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [field: string]: unknown;
}

function isKubeObject(value: unknown): value is KubeObject {
  if (typeof value !== "object" || value === null) return false;
  const metadata: unknown = Reflect.get(value, "metadata");
  return (
    typeof Reflect.get(value, "apiVersion") === "string" &&
    typeof Reflect.get(value, "kind") === "string" &&
    typeof metadata === "object" &&
    metadata !== null &&
    typeof Reflect.get(metadata, "name") === "string"
  );
}

/** An empty model of each kind the charts render; validation fills it with the object under test. */
const MODELS: Readonly<Record<string, () => { validate(): void }>> = {
  "v1/ConfigMap": () => new ConfigMap(),
  "v1/ServiceAccount": () => new ServiceAccount(),
  "rbac.authorization.k8s.io/v1/Role": () => new Role(),
  "rbac.authorization.k8s.io/v1/RoleBinding": () => new RoleBinding(),
  "batch/v1/Job": () => new Job(),
  "apps/v1/Deployment": () => new Deployment(),
  "v1/Service": () => new Service(),
  "argoproj.io/v1alpha1/ApplicationSet": () => new ApplicationSet(),
  "kustomize.toolkit.fluxcd.io/v1/Kustomization": () => new Kustomization(),
  "apiextensions.k8s.io/v1/CustomResourceDefinition": () => new CustomResourceDefinition(),
  "v1/Namespace": () => new Namespace(),
  "rbac.authorization.k8s.io/v1/ClusterRole": () => new ClusterRole(),
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": () => new ClusterRoleBinding(),
  "cert-manager.io/v1/Issuer": () => new Issuer(),
  "cert-manager.io/v1/Certificate": () => new Certificate(),
  "policy/v1/PodDisruptionBudget": () => new PodDisruptionBudget(),
  "v1/ResourceQuota": () => new ResourceQuota(),
  "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": () =>
    new ValidatingWebhookConfiguration(),
};

/**
 * Validates an object against the Kubernetes OpenAPI schema of its kind (kubernetes-models), and its
 * labels against Kubernetes' label syntax (which the schemas don't check), throwing with the errors.
 * Unknown kinds throw too, so a new kind can't slip past unvalidated. A BareMetalHost label patch has
 * no spec to check: only its metadata, validated as the ObjectMeta it is. The schemas allow unknown
 * fields, so a misspelt optional field is caught by the exact-output tests only.
 */
export function validateKubernetesObject(object: KubeObject): void {
  for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem) throw new Error(`${object.kind}/${object.metadata.name}: label ${key}: ${problem}`);
  }
  const key = `${object.apiVersion}/${object.kind}`;
  if (key === "metal3.io/v1alpha1/BareMetalHost") {
    new ConfigMap({ metadata: object.metadata }).validate();
    return;
  }
  // Allocations and the cluster CRs a directory carries: checked by the zod schemas their CRDs are
  // generated from, so what the API server accepts.
  const crd =
    key === `${apiVersionOf(ALLOCATION_DEFINITION)}/${ALLOCATION_DEFINITION.kind}`
      ? ALLOCATION_DEFINITION
      : kindFor(object.apiVersion, object.kind);
  if (crd) {
    crd.schema.parse(object);
    return;
  }
  const model = MODELS[key];
  if (!model) throw new Error(`no schema for ${key}`);
  Object.assign(model(), object).validate();
}

/** Every container (init containers first) of a Job object, as plain records. */
export function containersOf(job: KubeObject): Record<string, unknown>[] {
  const spec = new Job(job).spec?.template.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((container) => ({
    ...container,
  }));
}
