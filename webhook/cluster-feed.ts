/**
 * `--from-cluster`: the webhook's knowledge from the API server, kept current with
 * `@kubernetes/client-node` informers (list, then watch) for BareMetalHosts, HardwareData, networkData
 * Secrets and the four CR kinds, so cross-CR conflicts are judged against what is really applied.
 *
 * - The informers are kept running by an {@link InformerSupervisor} (restarts, backoff, stale
 *   watches); its problems make `/readyz` fail.
 * - Ready only once every resource has been listed in full; until then nothing is published.
 * - Secrets are selected by the label `metalsynth.io/network-data=true`, so the webhook never
 *   downloads BMC credentials or other Secrets (docs/decisions/0011-webhook-admission-scope.md).
 *   With `secretNamespaces` (`--secrets-namespace`), only those namespaces' Secrets are listed, one
 *   informer each, so that RBAC can grant Secrets there alone (docs/decisions/0037-least-privilege-install.md).
 * - A change recomputes only the hosts it touches (a BMH, its HardwareData, the Secret it names),
 *   each joined by a {@link HostJoin}; the index is then rebuilt from the kept hosts.
 * - With `allocations`, Git's Allocations (`metalsynth.io/v1alpha1`, one per cluster) are watched too
 *   (in the namespaces `allocationTrust` declares, one informer each, or in every namespace) and
 *   reassembled into the lock the reviews use, each parsed once per change (decision 0041). What is
 *   wrong with the set is confined to the clusters and hosts it touches (decision 0056).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { NETWORK_DATA_LABEL } from "../synth/inventory/network-data.ts";
import { issueText } from "../synth/issue.ts";
import { isRecord } from "../synth/inventory/raw.ts";
import { KINDS } from "../synth/schema/kinds.ts";
import { readResources, resourceKey } from "../synth/site/resources.ts";
import type { AllocationTrust } from "./allocation-trust.ts";
import {
  AllocationLedger,
  type AllocationLock,
  type AllocationReader,
  type LockDamage,
} from "./allocations.ts";
import { HostJoin } from "./host-join.ts";
import { InformerSupervisor, type SupervisedResource } from "./informer-supervisor.ts";
import type { Logger } from "./log.ts";
import { objectDocument } from "./site-review.ts";
import type { Feed, Readiness, WebhookState } from "./state.ts";

export { NETWORK_DATA_LABEL };

/** Options of {@link ClusterFeed.start}. */
export interface ClusterFeedOptions {
  /** How to reach the API server (in-cluster, or a kubeconfig). */
  readonly kubeConfig: KubeConfig;
  readonly state: WebhookState;
  readonly log: Logger;
  /**
   * Wall clock in milliseconds.
   * @default Date.now
   */
  readonly clock?: () => number;
  /**
   * Seconds after which the API server ends each watch (and the informer starts the next one).
   * @default 60
   */
  readonly watchTimeoutSeconds?: number;
  /**
   * Milliseconds to gather changes before the inventory is rebuilt.
   * @default 100
   */
  readonly rebuildDelayMs?: number;
  /**
   * First delay in milliseconds before a failed list or watch is retried; doubled per failure, at
   * most 30 s.
   * @default 1000
   */
  readonly retryDelayMs?: number;
  /**
   * The namespaces whose networkData Secrets are read (each needs only a namespaced Role); a BMH
   * naming a Secret elsewhere gets none. Empty or absent: every namespace (needs a ClusterRole).
   */
  readonly secretNamespaces?: readonly string[];
  /**
   * Reads Allocation objects into lock entries: given, the feed watches Allocations in every
   * namespace and reviews with the lock they make. Absent: no lock, as before Allocations existed.
   */
  readonly allocations?: AllocationReader;
  /**
   * Which Allocations are the site's (`--allocation-namespace`, `--allocation-manager`): only
   * those namespaces are watched. Absent: every Allocation is trusted.
   */
  readonly allocationTrust?: AllocationTrust;
  /**
   * Label selector (kubectl syntax, `-l`) of the BareMetalHosts watched, as `inventory pull
   * --selector` narrows the snapshot; absent: every host.
   */
  readonly hostSelector?: string;
}

/** What each resource is for. */
type Use = "hosts" | "hardware" | "secrets" | "resources" | "allocations";

/** One watched resource. */
interface Resource extends SupervisedResource {
  /** Plural (with the namespace for a namespaced collection), for `/readyz` and logs. */
  readonly name: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** The one namespace a namespaced collection holds; absent for a cluster-wide one. */
  readonly namespace?: string;
  readonly use: Use;
}

const SECRETS_SELECTOR = `${NETWORK_DATA_LABEL}=true`;

function customResource(
  kubeConfig: KubeConfig,
  group: string,
  version: string,
  plural: string,
  kind: string,
  use: Use,
  labelSelector?: string,
): Resource {
  return {
    name: plural,
    apiVersion: `${group}/${version}`,
    kind,
    path: `/apis/${group}/${version}/${plural}`,
    ...(labelSelector === undefined ? {} : { labelSelector }),
    use,
    list: () =>
      kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({
        group,
        version,
        plural,
        ...(labelSelector === undefined ? {} : { labelSelector }),
      }),
  };
}

/** The custom resources of `namespace` alone. */
function namespacedCustomResource(
  kubeConfig: KubeConfig,
  group: string,
  version: string,
  plural: string,
  kind: string,
  use: Use,
  namespace: string,
): Resource {
  return {
    name: `${plural} in ${namespace}`,
    apiVersion: `${group}/${version}`,
    kind,
    path: `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/${plural}`,
    namespace,
    use,
    list: () =>
      kubeConfig
        .makeApiClient(CustomObjectsApi)
        .listNamespacedCustomObject({ group, version, namespace, plural }),
  };
}

/** The networkData Secrets of every namespace. */
function allSecrets(kubeConfig: KubeConfig): Resource {
  return {
    name: "secrets",
    apiVersion: "v1",
    kind: "Secret",
    path: "/api/v1/secrets",
    labelSelector: SECRETS_SELECTOR,
    use: "secrets",
    list: () =>
      kubeConfig.makeApiClient(CoreV1Api).listSecretForAllNamespaces({ labelSelector: SECRETS_SELECTOR }),
  };
}

/** The networkData Secrets of `namespace` alone. */
function namespacedSecrets(kubeConfig: KubeConfig, namespace: string): Resource {
  return {
    ...allSecrets(kubeConfig),
    name: `secrets in ${namespace}`,
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`,
    namespace,
    list: () =>
      kubeConfig
        .makeApiClient(CoreV1Api)
        .listNamespacedSecret({ namespace, labelSelector: SECRETS_SELECTOR }),
  };
}

/**
 * What the feed watches: `secretNamespaces` (when any) narrow the Secrets to those namespaces,
 * `hostSelector` the BareMetalHosts to those it selects; `allocations` adds Git's Allocations (one
 * per cluster, rendered by synth, applied by the GitOps agents).
 */
function resourcesToWatch(
  kubeConfig: KubeConfig,
  secretNamespaces: readonly string[] = [],
  hostSelector?: string,
  allocations?: readonly string[],
): Resource[] {
  const custom = customResource.bind(undefined, kubeConfig);
  return [
    ...(allocations === undefined ? [] : allocationResources(kubeConfig, allocations)),
    custom("metal3.io", "v1alpha1", "baremetalhosts", "BareMetalHost", "hosts", hostSelector),
    custom("metal3.io", "v1alpha1", "hardwaredata", "HardwareData", "hardware"),
    ...(secretNamespaces.length === 0
      ? [allSecrets(kubeConfig)]
      : [...new Set(secretNamespaces)].map((namespace) => namespacedSecrets(kubeConfig, namespace))),
    ...Object.values(KINDS).map((definition) =>
      custom(definition.group, definition.version, definition.plural, definition.kind, "resources"),
    ),
  ];
}

/**
 * The Allocations to watch: those of `namespaces`, one collection each (the site's trust,
 * `allocation-trust.ts`: no other namespace's is even read), or, with none, every namespace's. The
 * status reporter watches the same.
 */
export function allocationResources(
  kubeConfig: KubeConfig,
  namespaces: readonly string[],
): (Resource & { readonly use: "allocations" })[] {
  const allocations = ["metalsynth.io", "v1alpha1", "allocations", "Allocation", "allocations"] as const;
  if (namespaces.length === 0) return [{ ...customResource(kubeConfig, ...allocations), use: "allocations" }];
  return [...new Set(namespaces)].map((namespace) => ({
    ...namespacedCustomResource(kubeConfig, ...allocations, namespace),
    use: "allocations",
  }));
}

/** Damage findings logged per change of the allocations. */
const LOGGED_DAMAGE = 5;

/** Whether `resource` feeds the inventory (its watches' contact says the inventory is current). */
function isInventory(resource: Resource): boolean {
  return resource.use === "hosts" || resource.use === "hardware" || resource.use === "secrets";
}

/** Where objects from the API server come from, in issue positions. */
const FROM_CLUSTER = "cluster";

/** A feed of knowledge from the API server. */
export class ClusterFeed implements Feed {
  readonly #options: ClusterFeedOptions;
  readonly #clock: () => number;
  readonly #resources: readonly Resource[];
  readonly #informers: InformerSupervisor<Resource>;
  readonly #hosts: HostJoin;
  readonly #dirtyHosts = new Set<string>();
  /** Allocations by `namespace/name`, each parsed once per change; absent without a reader. */
  readonly #allocations: AllocationLedger | undefined;
  readonly #dirtyAllocations = new Set<string>();
  /** CRs the informers delivered since the last publication → when, to let go of held admissions. */
  readonly #delivered = new Map<string, number>();
  #resourcesDirty = true;
  #published = false;
  #rebuild: NodeJS.Timeout | undefined;
  #closed = false;
  #objects = 0;

  private constructor(options: ClusterFeedOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#allocations =
      options.allocations && new AllocationLedger(options.allocations, options.allocationTrust);
    this.#resources = resourcesToWatch(
      options.kubeConfig,
      options.secretNamespaces,
      options.hostSelector,
      options.allocations === undefined ? undefined : (options.allocationTrust?.namespaces ?? []),
    );
    this.#informers = new InformerSupervisor({
      // makeInformer's ListWatch, with the field selector it does not pass on, keeping objects trimmed.
      makeInformer: (path, list, labelSelector, fieldSelector) => {
        const trim = (object: KubernetesObject) => trimmed(object, path.includes("/allocations"));
        const trimmedList = async () => {
          const listed = await list();
          return { ...listed, items: listed.items.map(trim) };
        };
        const watch = new TrimmingWatch(options.kubeConfig, trim);
        return new ListWatch(path, watch, trimmedList, false, labelSelector, fieldSelector);
      },
      events: {
        contact: (resource) => this.#contact(resource),
        changed: (resource, object) => this.#changed(resource, object),
        relisting: (resource) => this.#markAll(resource),
        started: () => this.#schedule(),
        listed: () => this.#publishNow(),
      },
      log: options.log,
      clock: this.#clock,
      ...(options.watchTimeoutSeconds === undefined
        ? {}
        : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
      ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
    });
    const cached = (use: Use, namespace: string, name: string) => {
      // The informer of the object's namespace (or of every namespace); none outside those read.
      const resource = this.#resources.find(
        (candidate) =>
          candidate.use === use && (candidate.namespace === undefined || candidate.namespace === namespace),
      );
      const object = resource && this.#informers.cache(resource)?.get(name, namespace);
      return resource && object && typed(object, resource);
    };
    this.#hosts = new HostJoin(
      {
        bareMetalHost: (namespace, name) => cached("hosts", namespace, name),
        hardwareData: (namespace, name) => cached("hardware", namespace, name),
        networkDataSecret: (namespace, name) => cached("secrets", namespace, name),
      },
      { file: FROM_CLUSTER, line: 1, column: 1 },
    );
  }

  /**
   * Registers the feed with the state and starts every informer. Resolves once each has tried its
   * first list (failures are retried in the background and shown by `/readyz`).
   */
  static async start(options: ClusterFeedOptions): Promise<ClusterFeed> {
    const feed = new ClusterFeed(options);
    options.state.addFeed(feed);
    await feed.#informers.start(feed.#resources);
    return feed;
  }

  status(): Readiness {
    const problems = this.#informers.problems();
    if (problems.length > 0) return { ready: false, detail: `cluster: ${problems.join("; ")}` };
    if (!this.#published) return { ready: false, detail: "cluster: building the inventory" };
    const allocations = this.#allocations && `, ${this.#allocations.size} allocations`;
    // Ready: a refusal that says why the allocations are damaged tells more than an API server
    // that finds no endpoint, and the damage refuses only what it touches (decision 0056).
    const damaged = damageText(this.#allocations?.result().damage);
    return {
      ready: true,
      detail: `cluster: ${this.#hosts.size} hosts, ${this.#objects} known objects${allocations ?? ""}${damaged}, watching`,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#rebuild);
    await this.#informers.close();
  }

  /** A sign of life: once published, the inventory is as current as its least recent resource. */
  #contact(resource: Resource): void {
    if (!isInventory(resource) || !this.#published) return;
    const contacts = this.#resources
      .filter(isInventory)
      .map((candidate) => this.#informers.contactAt(candidate) ?? 0);
    this.#options.state.confirmCurrent(Math.min(...contacts));
  }

  #changed(resource: Resource, object: KubernetesObject): void {
    const namespace = object.metadata?.namespace ?? "";
    const id = `${namespace}/${object.metadata?.name ?? ""}`;
    switch (resource.use) {
      case "hosts":
      case "hardware":
        this.#dirtyHosts.add(id);
        break;
      case "secrets":
        for (const user of this.#hosts.namingSecret(id)) this.#dirtyHosts.add(user);
        break;
      case "resources":
        this.#resourcesDirty = true;
        this.#delivered.set(
          resourceKey(resource.kind, namespace, object.metadata?.name ?? ""),
          this.#clock(),
        );
        break;
      case "allocations":
        this.#dirtyAllocations.add(id);
        break;
    }
    this.#schedule();
  }

  /**
   * Everything `resource` contributed is to be computed again: a fresh informer reports what it
   * lists as added, but says nothing of what it no longer has.
   */
  #markAll(resource: Resource): void {
    if (resource.use === "resources") this.#resourcesDirty = true;
    else if (resource.use === "allocations")
      for (const id of this.#allocations?.ids() ?? []) this.#dirtyAllocations.add(id);
    else for (const id of this.#hosts.ids()) this.#dirtyHosts.add(id);
  }

  #schedule(): void {
    if (this.#rebuild !== undefined || this.#closed) return;
    this.#rebuild = setTimeout(() => {
      this.#rebuild = undefined;
      this.#publish();
    }, this.#options.rebuildDelayMs ?? 100);
  }

  /**
   * Publishes at once what a list delivered: the collection counted as not current until now, and
   * nothing reviews in between (decision 0056).
   */
  #publishNow(): void {
    if (this.#closed) return;
    clearTimeout(this.#rebuild);
    this.#rebuild = undefined;
    this.#publish();
  }

  /** Publishes the changes gathered so far, once every resource has been listed. */
  #publish(): void {
    // A resource still listing would look empty: keep serving what was published before.
    if (!this.#informers.listed()) return;
    let inventoryChanged = !this.#published;
    // Most BMH events are status refreshes (power state, timestamps) that change no fact of a host.
    for (const id of this.#dirtyHosts) if (this.#rejoin(id)) inventoryChanged = true;
    this.#dirtyHosts.clear();
    let clusterResources;
    let clusterInvalid;
    if (this.#resourcesDirty) {
      const documents = this.#resources
        .filter((resource) => resource.use === "resources")
        .flatMap((resource) =>
          (this.#informers.cache(resource)?.list() ?? []).map((object) =>
            objectDocument(typed(object, resource), FROM_CLUSTER),
          ),
        );
      ({ resources: clusterResources, invalid: clusterInvalid } = readResources(documents));
      this.#objects = clusterResources.length;
      this.#resourcesDirty = false;
    }
    const allocations = this.#readAllocations();
    this.#options.state.update({
      ...(allocations && { lock: allocations.lock, damage: allocations.damage }),
      ...(inventoryChanged && { inventory: this.#hosts.inventory() }),
      ...(clusterResources && { clusterResources, clusterInvalid }),
      ...(this.#delivered.size > 0 && { delivered: new Map(this.#delivered) }),
    });
    this.#delivered.clear();
    if (!this.#published)
      this.#options.log.info("cluster listed", { hosts: this.#hosts.size, objects: this.#objects });
    this.#published = true;
  }

  /** Joins the host of BMH `id` again, logging the loader's findings; whether it changed. */
  #rejoin(id: string): boolean {
    const { changed, issues } = this.#hosts.rejoin(id);
    for (const found of issues) {
      this.#options.log.warn("inventory finding", { host: id, path: found.path, message: found.message });
    }
    return changed;
  }

  /** Parses the allocations changed since the last publication; the lock they make, if any did. */
  #readAllocations(): AllocationLock | undefined {
    const ledger = this.#allocations;
    const watched = this.#resources.filter((candidate) => candidate.use === "allocations");
    if (ledger === undefined || watched.length === 0) return undefined;
    if (this.#published && this.#dirtyAllocations.size === 0) return undefined;
    for (const id of this.#dirtyAllocations) {
      const slash = id.indexOf("/");
      const [namespace, name] = [id.slice(0, slash), id.slice(slash + 1)];
      const resource = watched.find(
        (candidate) => candidate.namespace === undefined || candidate.namespace === namespace,
      );
      const object = resource && this.#informers.cache(resource)?.get(name, namespace);
      if (resource === undefined || object === undefined) ledger.delete(id);
      else ledger.set(id, typed(object, resource));
    }
    this.#dirtyAllocations.clear();
    const result = ledger.result();
    for (const found of result.issues.slice(0, LOGGED_DAMAGE)) {
      const damaged =
        found.object !== undefined && result.damage.allocations.has(found.object.slice("Allocation/".length));
      if (damaged) this.#options.log.error("allocation damaged", { finding: issueText(found) });
      else this.#options.log.warn("allocation contested", { finding: issueText(found) });
    }
    return result;
  }
}

/** ` (damaged: …)` for `/readyz`, naming what refusals are confined to; empty when nothing is. */
function damageText(damage: LockDamage | undefined): string {
  if (damage === undefined || damage.hosts.size + damage.allocations.size === 0) return "";
  const ids = [...damage.allocations.keys()];
  const named = ids.slice(0, 3).join(", ") + (ids.length > 3 ? ` and ${ids.length - 3} more` : "");
  const allocations =
    ids.length === 0
      ? ""
      : `damaged: Allocation ${named}, whose clusters' CRs are refused until it is restored from Git; `;
  const transit = damage.inTransit > 0 ? `, ${damage.inTransit} in transit between two Allocations` : "";
  return ` (${allocations}${damage.hosts.size} hosts contested${transit}, given to no new node)`;
}

/** kubectl's copy of what it last applied: a second copy of the object, which nothing here reads. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * What the informers keep of an object (decision 0056): not its managed fields nor kubectl's
 * last-applied copy, which together are often as large as the rest and which no rule reads. An
 * Allocation keeps, of its managed fields, which managers wrote its spec: the site's trust reads
 * that (`allocation-trust.ts`).
 */
export function trimmed(object: KubernetesObject, keepSpecManagers = false): KubernetesObject {
  const metadata = object.metadata;
  if (metadata === undefined) return object;
  const { managedFields, annotations, ...rest } = metadata;
  const kept =
    keepSpecManagers && managedFields
      ? managedFields.flatMap((entry) =>
          entry.fieldsV1 !== undefined && typeof entry.fieldsV1 === "object" && "f:spec" in entry.fieldsV1
            ? [{ manager: entry.manager, operation: entry.operation, fieldsV1: { "f:spec": {} } }]
            : [],
        )
      : undefined;
  const otherAnnotations = Object.fromEntries(
    Object.entries(annotations ?? {}).filter(([key]) => key !== LAST_APPLIED),
  );
  return {
    ...object,
    metadata: {
      ...rest,
      ...(annotations !== undefined &&
        Object.keys(otherAnnotations).length > 0 && { annotations: otherAnnotations }),
      ...(kept !== undefined && kept.length > 0 && { managedFields: kept }),
    },
  };
}

/** client-node's watch, its objects {@link trimmed} before the informer keeps them. */
class TrimmingWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly trim: (object: KubernetesObject) => KubernetesObject,
  ) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: KubernetesObject, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    return super.watch(
      path,
      queryParams,
      (phase, object: unknown, watchObj) =>
        callback(
          phase,
          isRecord(object) && isRecord(object.metadata)
            ? this.trim(object as KubernetesObject)
            : (object as KubernetesObject),
          watchObj,
        ),
      done,
    );
  }
}

/**
 * An object from the API server with its `kind` and `apiVersion`: the items of a typed list (a
 * `SecretList`) come without them, and synth's readers go by them.
 */
function typed(object: KubernetesObject, resource: Resource): Record<string, unknown> {
  return { ...object, apiVersion: resource.apiVersion, kind: resource.kind };
}
