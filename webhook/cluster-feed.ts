/**
 * `--from-cluster`: the webhook's knowledge from the API server, kept current with
 * `@kubernetes/client-node` informers (list, then watch) for BareMetalHosts, HardwareData, networkData
 * Secrets and the four CR kinds, so cross-CR conflicts are judged against what is really applied.
 *
 * - Ready only once every resource has been listed in full; until then nothing is published.
 * - Each watch asks the API server to end it after `watchTimeoutSeconds`, and the informer then
 *   watches again: a watch silent for twice that long is stuck, makes `/readyz` fail, and is
 *   replaced by a fresh informer (a full list).
 * - A failed list or watch makes `/readyz` fail and is retried with backoff; a 410 Gone (history
 *   compacted) makes the informer list again by itself.
 * - Secrets are selected by the label `metalsynth.io/network-data=true`, so the webhook never
 *   downloads BMC credentials or other Secrets (docs/decisions/0011-webhook-admission-scope.md).
 *   With `secretNamespaces` (`--secrets-namespace`), only those namespaces' Secrets are listed, one
 *   informer each, so that RBAC can grant Secrets there alone (docs/decisions/0037-least-privilege-install.md).
 * - A change recomputes only the hosts it touches (a BMH, its HardwareData, the Secret it names),
 *   each with synth's loader; the index is then rebuilt from the kept hosts.
 * - With `allocations`, Git's Allocations (`metalsynth.io/v1alpha1`, one per cluster) are watched too
 *   and reassembled into the lock the reviews use, each parsed once per change; a damaged set makes
 *   every review a refusal, as `metalsynth validate` refuses a damaged lock (decision 0041).
 */
import {
  ADD,
  AbortError,
  ApiException,
  CONNECT,
  CoreV1Api,
  CustomObjectsApi,
  DELETE,
  ERROR,
  UPDATE,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from "@kubernetes/client-node";
import { sameHost, type Host, type SetAsideHost } from "../synth/inventory/host.ts";
import { Inventory } from "../synth/inventory/inventory.ts";
import { buildInventory, type InventoryObject } from "../synth/inventory/load.ts";
import { NETWORK_DATA_LABEL } from "../synth/inventory/network-data.ts";
import { field, isRecord, stringField } from "../synth/inventory/raw.ts";
import { issueText } from "../synth/issue.ts";
import { KINDS } from "../synth/schema/kinds.ts";
import { readResources, resourceKey } from "../synth/site/resources.ts";
import { AllocationLedger, type AllocationLock, type AllocationReader } from "./allocations.ts";
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
   * Label selector (kubectl syntax, `-l`) of the BareMetalHosts watched, as `inventory pull
   * --selector` narrows the snapshot; absent: every host.
   */
  readonly hostSelector?: string;
}

/** What each resource is for. */
type Use = "hosts" | "hardware" | "secrets" | "resources" | "allocations";

/** One watched resource. */
interface Resource {
  /** Plural, for `/readyz` and logs. */
  readonly name: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** The collection's path, cluster-wide. */
  readonly path: string;
  readonly labelSelector?: string;
  /** The one namespace a namespaced collection holds; absent for a cluster-wide one. */
  readonly namespace?: string;
  readonly use: Use;
  list(kubeConfig: KubeConfig): Promise<KubernetesListObject<KubernetesObject>>;
}

/** The state of one resource's informer. */
interface Watch {
  readonly resource: Resource;
  informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
  /** The current informer has listed the collection at least once. */
  listed: boolean;
  /** When the API server last gave a sign of life for this resource. */
  contactAt: number;
  /** Why the last list or watch failed; cleared when a retry succeeds. */
  problem?: string;
  failures: number;
  retry?: NodeJS.Timeout;
}

const SECRETS_SELECTOR = `${NETWORK_DATA_LABEL}=true`;

function customResource(
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
    list: (kubeConfig) =>
      kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({
        group,
        version,
        plural,
        ...(labelSelector === undefined ? {} : { labelSelector }),
      }),
  };
}

/** The networkData Secrets of every namespace. */
const ALL_SECRETS: Resource = {
  name: "secrets",
  apiVersion: "v1",
  kind: "Secret",
  path: "/api/v1/secrets",
  labelSelector: SECRETS_SELECTOR,
  use: "secrets",
  list: (kubeConfig) =>
    kubeConfig.makeApiClient(CoreV1Api).listSecretForAllNamespaces({ labelSelector: SECRETS_SELECTOR }),
};

/** The networkData Secrets of `namespace` alone. */
function namespacedSecrets(namespace: string): Resource {
  return {
    ...ALL_SECRETS,
    name: `secrets in ${namespace}`,
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`,
    namespace,
    list: (kubeConfig) =>
      kubeConfig
        .makeApiClient(CoreV1Api)
        .listNamespacedSecret({ namespace, labelSelector: SECRETS_SELECTOR }),
  };
}

/** Git's lock entries, one object per cluster (rendered by synth, applied by the GitOps agents). */
const ALLOCATIONS = customResource("metalsynth.io", "v1alpha1", "allocations", "Allocation", "allocations");

/**
 * What the feed watches: `secretNamespaces` (when any) narrow the Secrets to those namespaces,
 * `hostSelector` the BareMetalHosts to those it selects; `allocations` adds Git's Allocations.
 */
function resourcesToWatch(
  secretNamespaces: readonly string[] = [],
  hostSelector?: string,
  allocations = false,
): Resource[] {
  return [
    ...(allocations ? [ALLOCATIONS] : []),
    customResource("metal3.io", "v1alpha1", "baremetalhosts", "BareMetalHost", "hosts", hostSelector),
    customResource("metal3.io", "v1alpha1", "hardwaredata", "HardwareData", "hardware"),
    ...(secretNamespaces.length === 0
      ? [ALL_SECRETS]
      : [...new Set(secretNamespaces)].map(namespacedSecrets)),
    ...Object.values(KINDS).map((definition) =>
      customResource(definition.group, definition.version, definition.plural, definition.kind, "resources"),
    ),
  ];
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
  readonly #staleAfterMs: number;
  readonly #watches: Watch[] = [];
  /** BMH id → its host, as last computed. */
  readonly #hosts = new Map<string, Host>();
  /** BMHs the loader set aside (decision 0031), so a CR naming one hears why. */
  readonly #setAside = new Map<string, SetAsideHost>();
  /** `namespace/name` of a networkData Secret → ids of the BMHs that name it. */
  readonly #secretUsers = new Map<string, Set<string>>();
  /** BMH id → the Secret it names, to keep {@link #secretUsers} exact when that changes. */
  readonly #secretOf = new Map<string, string>();
  readonly #dirtyHosts = new Set<string>();
  /** Allocations by `namespace/name`, each parsed once per change; absent without a reader. */
  readonly #allocations: AllocationLedger | undefined;
  readonly #dirtyAllocations = new Set<string>();
  /** CRs the informers delivered since the last publication → when, to let go of held admissions. */
  readonly #delivered = new Map<string, number>();
  #resourcesDirty = true;
  #published = false;
  #rebuild: NodeJS.Timeout | undefined;
  #staleCheck: NodeJS.Timeout | undefined;
  #closed = false;
  #objects = 0;

  private constructor(options: ClusterFeedOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#staleAfterMs = 2 * 1000 * (options.watchTimeoutSeconds ?? 60);
    this.#allocations = options.allocations && new AllocationLedger(options.allocations);
  }

  /**
   * Registers the feed with the state and starts every informer. Resolves once each has tried its
   * first list (failures are retried in the background and shown by `/readyz`).
   */
  static async start(options: ClusterFeedOptions): Promise<ClusterFeed> {
    const feed = new ClusterFeed(options);
    options.state.addFeed(feed);
    // Armed before the first lists, so that a shutdown while they run (close()) also disarms it.
    feed.#staleCheck = setInterval(() => feed.#replaceStale(), Math.max(250, feed.#staleAfterMs / 4));
    const resources = resourcesToWatch(
      options.secretNamespaces,
      options.hostSelector,
      options.allocations !== undefined,
    );
    await Promise.all(resources.map((resource) => feed.#open(resource)));
    return feed;
  }

  status(): Readiness {
    const now = this.#clock();
    const problems = this.#watches.flatMap((watch) => {
      const { name } = watch.resource;
      if (!watch.listed)
        return [`${name}: ${watch.problem ? `list failed: ${watch.problem}` : "not listed yet"}`];
      if (watch.problem) return [`${name}: watch failed, retrying: ${watch.problem}`];
      const silent = now - watch.contactAt;
      if (silent > this.#staleAfterMs) {
        return [`${name}: nothing from the API server for ${Math.round(silent / 1000)}s (stale watch)`];
      }
      return [];
    });
    if (problems.length > 0) return { ready: false, detail: `cluster: ${problems.join("; ")}` };
    if (!this.#published) return { ready: false, detail: "cluster: building the inventory" };
    const allocations = this.#allocations && `, ${this.#allocations.size} allocations`;
    const damage = this.#allocations?.result().issues.length ?? 0;
    // Ready: a refusal that says why the allocations are damaged tells more than an API server
    // that finds no endpoint.
    const damaged = damage > 0 ? ` (damaged: ${damage} findings; every request is refused)` : "";
    return {
      ready: true,
      detail: `cluster: ${this.#hosts.size} hosts, ${this.#objects} known objects${allocations ?? ""}${damaged}, watching`,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#rebuild);
    clearInterval(this.#staleCheck);
    for (const watch of this.#watches) {
      clearTimeout(watch.retry);
      await watch.informer.stop();
    }
  }

  /** Starts a fresh informer for `resource` (replacing any earlier one) and waits for its first try. */
  async #open(resource: Resource): Promise<void> {
    const { kubeConfig } = this.#options;
    const list = async () => {
      const listed = await resource.list(kubeConfig);
      // client-node goes on to watch after a list even when stop() came meanwhile (a shutdown, or a
      // stale informer replaced): failing the list ends it there. Its error is ignored below.
      if (!current()) throw new Error(`informer for ${resource.name} stopped while listing`);
      watch.listed = true;
      return listed;
    };
    // The watch path carries the server-side timeout that makes a healthy watch end and restart
    // regularly: those restarts are the heartbeat stale-watch detection relies on.
    const path = `${resource.path}?timeoutSeconds=${this.#options.watchTimeoutSeconds ?? 60}&allowWatchBookmarks=true`;
    const informer = makeInformer(kubeConfig, path, list, resource.labelSelector);
    const existing = this.#watches.find((candidate) => candidate.resource === resource);
    const watch: Watch = existing ?? {
      resource,
      informer,
      listed: false,
      contactAt: this.#clock(),
      failures: 0,
    };
    if (existing) {
      void existing.informer.stop();
      existing.informer = informer;
      existing.listed = false;
      // The fresh informer lists everything again; what it no longer has must go.
      this.#markAll(resource);
    } else {
      this.#watches.push(watch);
    }
    const current = () => watch.informer === informer && !this.#closed;
    const changed = (object: KubernetesObject) => {
      if (current()) this.#changed(watch, object);
    };
    informer.on(ADD, changed);
    informer.on(UPDATE, changed);
    informer.on(DELETE, changed);
    informer.on(CONNECT, () => {
      if (current()) this.#contact(watch);
    });
    informer.on(ERROR, (error: unknown) => {
      // Stopping an informer aborts its watch, which it reports as an error.
      if (current() && !(error instanceof AbortError)) this.#failed(watch, error);
    });
    await this.#startInformer(watch, informer);
  }

  /** Starts (or restarts) `informer`; a start that reports no error clears the watch's problem. */
  async #startInformer(
    watch: Watch,
    informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>,
  ): Promise<void> {
    const failuresBefore = watch.failures;
    await informer.start();
    if (watch.informer === informer && watch.failures === failuresBefore && watch.listed) {
      if (watch.problem !== undefined)
        this.#options.log.info("watch recovered", { resource: watch.resource.name });
      watch.problem = undefined;
      watch.failures = 0;
      this.#contact(watch);
      this.#schedule();
    }
  }

  #failed(watch: Watch, error: unknown): void {
    watch.failures += 1;
    watch.problem = describeError(error);
    // A dropped watch is routine (an API server restart, a load balancer's idle timeout): the first
    // retry is immediate, so readiness only blinks; repeated failures back off.
    const delay =
      watch.failures === 1
        ? 0
        : Math.min((this.#options.retryDelayMs ?? 1000) * 2 ** (watch.failures - 2), 30_000);
    this.#options.log.warn("watch failed", {
      resource: watch.resource.name,
      problem: watch.problem,
      retryMs: delay,
    });
    clearTimeout(watch.retry);
    const informer = watch.informer;
    // The informer stops itself after any error but a 410; starting it again resumes the watch from
    // the last resourceVersion, or lists again when it has none.
    watch.retry = setTimeout(() => void this.#startInformer(watch, informer), delay);
  }

  #contact(watch: Watch): void {
    watch.contactAt = this.#clock();
    if (isInventory(watch.resource) && this.#published) {
      const inventoryWatches = this.#watches.filter((candidate) => isInventory(candidate.resource));
      this.#options.state.confirmCurrent(
        Math.min(...inventoryWatches.map((candidate) => candidate.contactAt)),
      );
    }
  }

  /** Replaces informers whose watch has been silent too long (see the module comment). */
  #replaceStale(): void {
    const now = this.#clock();
    for (const watch of this.#watches) {
      if (!watch.listed || watch.problem !== undefined || now - watch.contactAt <= this.#staleAfterMs)
        continue;
      this.#options.log.warn("watch stale; listing again", {
        resource: watch.resource.name,
        silentMs: now - watch.contactAt,
      });
      void this.#open(watch.resource);
    }
  }

  #changed(watch: Watch, object: KubernetesObject): void {
    this.#contact(watch);
    const namespace = object.metadata?.namespace ?? "";
    const id = `${namespace}/${object.metadata?.name ?? ""}`;
    switch (watch.resource.use) {
      case "hosts":
      case "hardware":
        this.#dirtyHosts.add(id);
        break;
      case "secrets":
        for (const user of this.#secretUsers.get(id) ?? []) this.#dirtyHosts.add(user);
        break;
      case "resources":
        this.#resourcesDirty = true;
        this.#delivered.set(
          resourceKey(watch.resource.kind, namespace, object.metadata?.name ?? ""),
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
    else for (const id of this.#hosts.keys()) this.#dirtyHosts.add(id);
  }

  #schedule(): void {
    if (this.#rebuild !== undefined || this.#closed) return;
    this.#rebuild = setTimeout(() => {
      this.#rebuild = undefined;
      this.#publish();
    }, this.#options.rebuildDelayMs ?? 100);
  }

  /** Publishes the changes gathered so far, once every resource has been listed. */
  #publish(): void {
    // A resource still listing would look empty: keep serving what was published before.
    if (!this.#watches.every((watch) => watch.listed)) return;
    let inventoryChanged = !this.#published;
    // Most BMH events are status refreshes (power state, timestamps) that change no fact of a host.
    for (const id of this.#dirtyHosts) if (this.#recompute(id)) inventoryChanged = true;
    this.#dirtyHosts.clear();
    let clusterResources;
    let clusterInvalid;
    if (this.#resourcesDirty) {
      const documents = this.#watches
        .filter((watch) => watch.resource.use === "resources")
        .flatMap((watch) =>
          watch.informer.list().map((object) => objectDocument(typed(object, watch.resource), FROM_CLUSTER)),
        );
      ({ resources: clusterResources, invalid: clusterInvalid } = readResources(documents));
      this.#objects = clusterResources.length;
      this.#resourcesDirty = false;
    }
    const allocations = this.#readAllocations();
    this.#options.state.update({
      ...(allocations && { lock: allocations.lock, lockIssues: allocations.issues }),
      ...(inventoryChanged && { inventory: new Inventory(this.#hosts.values(), this.#setAside.values()) }),
      ...(clusterResources && { clusterResources, clusterInvalid }),
      ...(this.#delivered.size > 0 && { delivered: new Map(this.#delivered) }),
    });
    this.#delivered.clear();
    if (!this.#published)
      this.#options.log.info("cluster listed", { hosts: this.#hosts.size, objects: this.#objects });
    this.#published = true;
  }

  /** Parses the allocations changed since the last publication; the lock they make, if any did. */
  #readAllocations(): AllocationLock | undefined {
    const ledger = this.#allocations;
    const watch = this.#watches.find((candidate) => candidate.resource.use === "allocations");
    if (ledger === undefined || watch === undefined) return undefined;
    if (this.#published && this.#dirtyAllocations.size === 0) return undefined;
    for (const id of this.#dirtyAllocations) {
      const slash = id.indexOf("/");
      const object = watch.informer.get(id.slice(slash + 1), id.slice(0, slash));
      if (object === undefined) ledger.delete(id);
      else ledger.set(id, typed(object, watch.resource));
    }
    this.#dirtyAllocations.clear();
    const result = ledger.result();
    for (const found of result.issues.slice(0, LOGGED_DAMAGE))
      this.#options.log.error("allocation damaged", { finding: issueText(found) });
    return result;
  }

  /**
   * Computes the host of BMH `id` from its BMH, HardwareData and networkData Secret; whether it
   * differs from the host known before.
   */
  #recompute(id: string): boolean {
    const before = this.#hosts.get(id);
    const slash = id.indexOf("/");
    const [namespace, name] = [id.slice(0, slash), id.slice(slash + 1)];
    const cache = (use: Use) => this.#watches.find((watch) => watch.resource.use === use);
    const hosts = cache("hosts");
    const bmh = hosts?.informer.get(name, namespace);
    this.#forgetSecret(id);
    const asideBefore = this.#setAside.get(id);
    if (hosts === undefined || bmh === undefined) {
      this.#hosts.delete(id);
      this.#setAside.delete(id);
      return before !== undefined || asideBefore !== undefined;
    }
    const objects: InventoryObject[] = [clusterObject(bmh, hosts.resource)];
    const hardware = cache("hardware");
    const hardwareData = hardware?.informer.get(name, namespace);
    if (hardware && hardwareData) objects.push(clusterObject(hardwareData, hardware.resource));
    const reference = networkDataReference(bmh, namespace);
    if (reference) {
      this.#secretOf.set(id, reference.id);
      const users = this.#secretUsers.get(reference.id) ?? new Set<string>();
      this.#secretUsers.set(reference.id, users.add(id));
      // The informer of the Secret's namespace (or of every namespace); none outside those read.
      const secrets = this.#watches.find(
        ({ resource }) =>
          resource.use === "secrets" &&
          (resource.namespace === undefined || resource.namespace === reference.namespace),
      );
      const secret = secrets?.informer.get(reference.name, reference.namespace);
      if (secrets && secret) objects.push(clusterObject(secret, secrets.resource));
    }
    const { inventory, issues } = buildInventory(objects);
    for (const found of issues) {
      this.#options.log.warn("inventory finding", { host: id, path: found.path, message: found.message });
    }
    const host = inventory.byId(id);
    if (host === undefined) this.#hosts.delete(id);
    else if (before === undefined || !sameHost(host, before)) this.#hosts.set(id, host);
    // One host is read at a time, so only its own bad facts set it aside here, not a MAC another has.
    const aside = inventory.setAside.find((candidate) => candidate.id === id);
    if (aside === undefined) this.#setAside.delete(id);
    else this.#setAside.set(id, aside);
    const asideChanged = JSON.stringify(aside) !== JSON.stringify(asideBefore);
    return asideChanged || (host === undefined ? before !== undefined : this.#hosts.get(id) !== before);
  }

  #forgetSecret(id: string): void {
    const secret = this.#secretOf.get(id);
    if (secret === undefined) return;
    this.#secretOf.delete(id);
    const users = this.#secretUsers.get(secret);
    users?.delete(id);
    if (users?.size === 0) this.#secretUsers.delete(secret);
  }
}

/**
 * An object from the API server with its `kind` and `apiVersion`: the items of a typed list (a
 * `SecretList`) come without them, and synth's readers go by them.
 */
function typed(object: KubernetesObject, resource: Resource): Record<string, unknown> {
  return { ...object, apiVersion: resource.apiVersion, kind: resource.kind };
}

function clusterObject(object: KubernetesObject, resource: Resource): InventoryObject {
  return { value: typed(object, resource), source: { file: FROM_CLUSTER, line: 1, column: 1 } };
}

/** The networkData Secret a BMH names (`spec.networkData`), in the BMH's namespace by default. */
function networkDataReference(
  bmh: KubernetesObject,
  namespace: string,
): { id: string; namespace: string; name: string } | undefined {
  const reference = field(field(bmh, "spec"), "networkData");
  const name = stringField(reference, "name");
  if (!isRecord(reference) || !name) return undefined;
  const secretNamespace = stringField(reference, "namespace") || namespace;
  return { id: `${secretNamespace}/${name}`, namespace: secretNamespace, name };
}

/**
 * A one-line reason: the HTTP status and the API server's Status message for a failed list (the
 * generated client's ApiException carries the response body), the status and text for a failed watch.
 */
function describeError(error: unknown): string {
  if (error instanceof ApiException) {
    const body: unknown = typeof error.body === "string" ? parseJson(error.body) : error.body;
    const message = stringField(body, "message");
    return `${error.code} ${message ?? error.message.split("\n")[0]}`;
  }
  if (error instanceof Error) {
    const status = Reflect.get(error, "statusCode");
    return status === undefined ? error.message : `${String(status)} ${error.message}`;
  }
  return String(error);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
