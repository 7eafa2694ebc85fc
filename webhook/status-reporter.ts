/**
 * The status reporter (docs/contract.md §5, decision 0059): `metalsynth status --write` in the
 * chart's own Deployment, and, reading only, `metalsynth status`. It keeps informers (the cluster
 * feed's supervisor, joins and ledger) on what a status is made of — BareMetalHosts, HardwareData,
 * networkData Secrets, the four CR kinds, Allocations, the Jobs metalsynth rendered, and the Flux
 * Kustomizations and Argo CD Applications where those kinds are served — and after each change runs
 * a round: the site is evaluated as the webhook evaluates it (`SiteSnapshot`, carried over so a change
 * costs what it reaches), every CR's status is computed by synth/status/, and a status is written
 * only when it differs from the one the CR has, with an Event per transition.
 *
 * - Nothing is computed while any collection is still listing (a half-listed cluster would read as
 *   hosts vanished and Allocations missing, and every status would churn).
 * - A written status is remembered until the informer delivers it, so a round in between neither
 *   writes it again nor tells its transitions twice.
 * - Rounds are gathered: changes within `roundDelayMs` make one round, and a round computes again
 *   only the statuses its changes can reach (every status every `resyncMs`).
 */
import {
  CustomObjectsApi,
  BatchV1Api,
  CoreV1Api,
  makeInformer,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { NETWORK_DATA_LABEL } from "../synth/inventory/network-data.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import type { Issue } from "../synth/issue.ts";
import type { Lock } from "../synth/model/lock.ts";
import type { AnyResource, InvalidResource } from "../synth/model/resource.ts";
import { lockFromAllocations } from "../synth/rules/allocation.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import { KINDS } from "../synth/schema/kinds.ts";
import type { CrStatus } from "../synth/schema/status.ts";
import { readResources } from "../synth/site/resources.ts";
import { SiteSnapshot } from "../synth/snapshot.ts";
import { sameData } from "../synth/same-data.ts";
import { StatusIndex, crStatus, type StatusOutcome } from "../synth/status/compute.ts";
import {
  CLUSTER_LABEL,
  MANAGED_BY_LABEL,
  agentRefOf,
  readApplication,
  readCr,
  readJob,
  readKustomization,
  type AgentView,
  type CrView,
  type JobView,
} from "../synth/status/objects.ts";
import type { AllocationTrust } from "./allocation-trust.ts";
import { AllocationLedger } from "./allocations.ts";
import { allocationResources } from "./cluster-feed.ts";
import { HostJoin } from "./host-join.ts";
import {
  InformerSupervisor,
  type InformerEvents,
  type InformerFactory,
  type SupervisedResource,
} from "./informer-supervisor.ts";
import type { Logger } from "./log.ts";
import { objectDocument } from "./site-review.ts";
import type { Readiness } from "./state.ts";
import { EventRecorder, SinkError, type StatusSink } from "./status-api.ts";
import { StatusMetrics, type ReadyReading } from "./status-metrics.ts";

/** Options of {@link StatusReporter.start}. */
export interface StatusReporterOptions {
  readonly kubeConfig: KubeConfig;
  readonly log: Logger;
  /** Where statuses and Events are written; absent: nothing is written (`metalsynth status`). */
  readonly sink?: StatusSink;
  /** The reporter's name in its Events (`reportingInstance`): the pod's name. @default "metalsynth-status" */
  readonly instance?: string;
  /** The namespaces whose CRs are reported; empty or absent: every namespace. */
  readonly namespaces?: readonly string[];
  /** As the webhook's `--secrets-namespace`: the only namespaces whose networkData Secrets are read. */
  readonly secretNamespaces?: readonly string[];
  /** As the webhook's `--selector`: the BareMetalHosts watched. */
  readonly hostSelector?: string;
  /**
   * As the webhook's (`--allocation-namespace`, `--allocation-manager`, decision 0056): only the
   * Allocations of these namespaces are read, and one whose spec another manager wrote is damaged,
   * so a status judges by the Allocations the webhook trusts. Absent: every Allocation is trusted.
   */
  readonly allocationTrust?: AllocationTrust;
  /**
   * Wall clock in milliseconds.
   * @default Date.now
   */
  readonly clock?: () => number;
  /** @default 60 */
  readonly watchTimeoutSeconds?: number;
  /** @default 1000 */
  readonly retryDelayMs?: number;
  /**
   * Milliseconds to gather changes into one round: a status is a second late at most, and a hub's
   * steady trickle of changes (agents' reconciles, hosts' status refreshes) makes one round a second.
   * @default 1000
   */
  readonly roundDelayMs?: number;
  /**
   * Milliseconds between looks for the Flux and Argo CD kinds when the API server does not serve
   * them (installed later, they are watched from then on).
   * @default 300000
   */
  readonly probeIntervalMs?: number;
  /** Makes the informers (tests replace it). @default client-node's makeInformer */
  readonly makeInformer?: InformerFactory;
  /** Status writes at a time. @default 4 */
  readonly concurrency?: number;
  /**
   * Milliseconds after which a round computes every CR's status again, not only those a change
   * reached (a safety net, as controllers resync).
   * @default 300000
   */
  readonly resyncMs?: number;
}

/** What a collection is for. */
type Use = "hosts" | "hardware" | "secrets" | "resources" | "allocations" | "jobs" | "agents";

interface Resource extends SupervisedResource {
  readonly name: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly use: Use;
}

/** One CR's status as the last round found it. */
export interface ReportedStatus {
  readonly cr: CrView;
  readonly outcome: StatusOutcome;
}

/** A CR read for the evaluation: its spec's text (what a change is judged by) and what reading gave. */
interface ReadCr {
  readonly text: string;
  readonly resource?: AnyResource;
  readonly invalid?: InvalidResource;
  readonly issues: readonly Issue[];
}

/** The Flux and Argo CD kinds, watched where the API server serves them. */
const AGENT_KINDS = [
  { group: "kustomize.toolkit.fluxcd.io", version: "v1", plural: "kustomizations", kind: "Kustomization" },
  { group: "argoproj.io", version: "v1alpha1", plural: "applications", kind: "Application" },
] as const;

const FROM_CLUSTER = "cluster";

/** The status reporter (see the module comment). */
export class StatusReporter {
  readonly metrics: StatusMetrics;
  readonly #options: StatusReporterOptions;
  readonly #clock: () => number;
  readonly #supervisors: InformerSupervisor<Resource>[] = [];
  readonly #resources: Resource[] = [];
  readonly #hosts: HostJoin;
  readonly #ledger: AllocationLedger;
  readonly #recorder: EventRecorder | undefined;
  readonly #dirtyHosts = new Set<string>();
  readonly #dirtyCrs = new Set<string>();
  readonly #dirtyAllocations = new Set<string>();
  readonly #dirtyJobs = new Set<string>();
  readonly #dirtyAgents = new Set<string>();
  readonly #crs = new Map<string, ReadCr>();
  /** Each CR as the last round read it, by key, kept while its resourceVersion stays. */
  readonly #views = new Map<string, CrView>();
  readonly #jobs = new Map<string, JobView>();
  readonly #agents = new Map<string, AgentView>();
  /** Statuses written that the informers have not delivered yet, by CR key. */
  readonly #written = new Map<string, { resourceVersion: string | undefined; status: CrStatus }>();
  readonly #inFlight = new Set<string>();
  readonly #missingAgents = new Set<(typeof AGENT_KINDS)[number]>();
  /** What changed since the last round, for the CRs it reaches (see {@link #reached}). */
  readonly #touched = {
    crs: new Set<string>(),
    clusters: new Set<string>(),
    agents: new Set<string>(),
    hosts: new Set<string>(),
  };
  /** Every CR's status is computed in the next round (the first, a fresh list, a new lock, a resync). */
  #everything = true;
  #lastEverything = 0;
  /** The last round's statuses by CR key, kept for the CRs no change reached. */
  #outcomes = new Map<string, ReportedStatus>();
  #evaluated: SiteSnapshot | undefined;
  #inventory: Inventory | undefined;
  #lock: Lock = EMPTY_LOCK;
  #lockIssues: readonly Issue[] = [];
  #snapshot: SiteSnapshot | undefined;
  #lockChanged = true;
  #resourcesChanged = true;
  #inventoryChanged = true;
  #reported: readonly ReportedStatus[] = [];
  #rounds = 0;
  #round: NodeJS.Timeout | undefined;
  #probe: NodeJS.Timeout | undefined;
  #roundWaiters: (() => void)[] = [];
  #closed = false;
  #writing: Promise<void> = Promise.resolve();

  private constructor(options: StatusReporterOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#ledger = new AllocationLedger(lockFromAllocations, options.allocationTrust);
    this.#recorder =
      options.sink && new EventRecorder(options.sink, options.instance ?? "metalsynth-status", this.#clock);
    this.metrics = new StatusMetrics(() => this.#readings());
    this.#hosts = new HostJoin(
      {
        bareMetalHost: (namespace, name) => this.#cached("hosts", namespace, name),
        hardwareData: (namespace, name) => this.#cached("hardware", namespace, name),
        networkDataSecret: (namespace, name) => this.#cached("secrets", namespace, name),
      },
      { file: FROM_CLUSTER, line: 1, column: 1 },
    );
  }

  /**
   * Starts the informers (the Flux and Argo CD kinds only where served) and resolves once each has
   * tried its first list; the first round follows once every collection is listed.
   */
  static async start(options: StatusReporterOptions): Promise<StatusReporter> {
    const reporter = new StatusReporter(options);
    const resources = baseResources(options);
    for (const agent of AGENT_KINDS) {
      if (await reporter.#served(agent)) resources.push(agentResource(options.kubeConfig, agent));
      else reporter.#missingAgents.add(agent);
    }
    await reporter.#supervise(resources);
    reporter.#armProbe();
    return reporter;
  }

  /** Whether every collection is listed and current, and what is wrong if not. */
  readiness(): Readiness {
    const problems = this.#supervisors.flatMap((supervisor) => supervisor.problems());
    if (problems.length > 0) return { ready: false, detail: `status: ${problems.join("; ")}` };
    if (this.#rounds === 0) return { ready: false, detail: "status: no round yet" };
    const missing = [...this.#missingAgents].map((agent) => agent.kind);
    return {
      ready: true,
      detail: `status: ${this.#reported.length} objects, ${this.#inventory?.size ?? 0} hosts, ${this.#jobs.size} Jobs${missing.length > 0 ? `; not served: ${missing.join(", ")}` : ""}`,
    };
  }

  /** The statuses the last round found, in key order. */
  statuses(): readonly ReportedStatus[] {
    return this.#reported;
  }

  /** Rounds run so far. */
  get rounds(): number {
    return this.#rounds;
  }

  /** Resolves after the next round, and after the writes it started. */
  nextRound(): Promise<void> {
    return new Promise((resolve) => this.#roundWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#round);
    clearTimeout(this.#probe);
    await Promise.all(this.#supervisors.map((supervisor) => supervisor.close()));
    await this.#writing;
  }

  /** Whether the API server serves `agent`'s kind (a list of one succeeds). */
  async #served(agent: (typeof AGENT_KINDS)[number]): Promise<boolean> {
    try {
      await this.#options.kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({
        group: agent.group,
        version: agent.version,
        plural: agent.plural,
        limit: 1,
      });
      return true;
    } catch (error) {
      this.#options.log.info("GitOps kind not watched", { kind: agent.kind, reason: describe(error) });
      return false;
    }
  }

  /** Looks again, now and then, for the GitOps kinds that were not served. */
  #armProbe(): void {
    if (this.#missingAgents.size === 0 || this.#closed) return;
    this.#probe = setTimeout(() => {
      void (async () => {
        const found = [];
        for (const agent of this.#missingAgents)
          if (await this.#served(agent)) {
            this.#missingAgents.delete(agent);
            found.push(agentResource(this.#options.kubeConfig, agent));
          }
        if (found.length > 0 && !this.#closed) {
          this.#options.log.info("GitOps kinds now watched", {
            kinds: found.map((resource) => resource.kind),
          });
          await this.#supervise(found);
        }
        this.#armProbe();
      })();
    }, this.#options.probeIntervalMs ?? 300_000);
  }

  async #supervise(resources: readonly Resource[]): Promise<void> {
    this.#resources.push(...resources);
    // A fresh list (`listed`) brings its round forward like any change.
    const events: InformerEvents<Resource> & { listed(resource: Resource): void } = {
      contact: () => {},
      changed: (resource, object) => this.#changed(resource, object),
      relisting: (resource) => this.#markAll(resource),
      started: () => this.#schedule(),
      listed: () => this.#schedule(),
    };
    const supervisor = new InformerSupervisor<Resource>({
      makeInformer:
        this.#options.makeInformer ??
        ((path, list, labelSelector) => makeInformer(this.#options.kubeConfig, path, list, labelSelector)),
      events,
      log: this.#options.log,
      clock: this.#clock,
      ...(this.#options.watchTimeoutSeconds === undefined
        ? {}
        : { watchTimeoutSeconds: this.#options.watchTimeoutSeconds }),
      ...(this.#options.retryDelayMs === undefined ? {} : { retryDelayMs: this.#options.retryDelayMs }),
    });
    this.#supervisors.push(supervisor);
    await supervisor.start(resources);
    this.#schedule();
  }

  #cacheOf(resource: Resource) {
    for (const supervisor of this.#supervisors) {
      const cache = supervisor.cache(resource);
      if (cache !== undefined) return cache;
    }
    return undefined;
  }

  /** Object `namespace/name` of the collection for `use` that holds its namespace (or every one). */
  #cached(use: Use, namespace: string, name: string) {
    const resource = this.#resources.find(
      (candidate) =>
        candidate.use === use && (candidate.namespace === undefined || candidate.namespace === namespace),
    );
    const object = resource && this.#cacheOf(resource)?.get(name, namespace);
    return resource && object && typed(object, resource);
  }

  #changed(resource: Resource, object: KubernetesObject): void {
    const namespace = object.metadata?.namespace ?? "";
    const name = object.metadata?.name ?? "";
    const id = `${namespace}/${name}`;
    switch (resource.use) {
      case "hosts":
      case "hardware":
        this.#dirtyHosts.add(id);
        break;
      case "secrets":
        for (const user of this.#hosts.namingSecret(id)) this.#dirtyHosts.add(user);
        break;
      case "resources":
        this.#dirtyCrs.add(`${resource.kind}/${id}`);
        this.#touched.crs.add(`${resource.kind}/${id}`);
        break;
      case "allocations":
        this.#dirtyAllocations.add(id);
        this.#touched.clusters.add(id);
        break;
      case "jobs": {
        this.#dirtyJobs.add(id);
        const cluster = object.metadata?.labels?.[CLUSTER_LABEL];
        if (cluster !== undefined) this.#touched.clusters.add(`${namespace}/${cluster}`);
        break;
      }
      case "agents":
        this.#dirtyAgents.add(`${resource.kind}/${id}`);
        this.#touched.agents.add(`${resource.kind}/${id}`);
        break;
    }
    this.#schedule();
  }

  /** A fresh informer reports what it lists, not what it lost: everything it fed is read again. */
  #markAll(resource: Resource): void {
    this.#everything = true;
    const again = (keys: Iterable<string>, into: Set<string>, prefix = "") => {
      for (const key of keys) if (key.startsWith(prefix)) into.add(key);
    };
    switch (resource.use) {
      case "resources":
        again(this.#crs.keys(), this.#dirtyCrs, `${resource.kind}/`);
        break;
      case "allocations":
        again(this.#ledger.ids(), this.#dirtyAllocations);
        break;
      case "jobs":
        again(this.#jobs.keys(), this.#dirtyJobs);
        break;
      case "agents":
        again(this.#agents.keys(), this.#dirtyAgents, `${resource.kind}/`);
        break;
      default:
        again(this.#hosts.ids(), this.#dirtyHosts);
    }
  }

  #schedule(delay = this.#options.roundDelayMs ?? 1000): void {
    if (this.#round !== undefined || this.#closed) return;
    this.#round = setTimeout(() => {
      this.#round = undefined;
      this.#runRound();
    }, delay);
  }

  #listed(): boolean {
    return this.#supervisors.length > 0 && this.#supervisors.every((supervisor) => supervisor.listed());
  }

  #runRound(): void {
    if (this.#closed) return;
    // A collection still listing would look empty: every host vanished, every Allocation missing.
    if (!this.#listed()) {
      this.#schedule(1000);
      return;
    }
    const started = performance.now();
    this.#readHosts();
    this.#readCrs();
    this.#readAllocations();
    this.#readJobsAndAgents();
    const snapshot = this.#evaluate();
    if (snapshot === undefined) return;
    const index = new StatusIndex({
      issues: [...snapshot.issues, ...[...this.#crs.values()].flatMap((read) => read.issues)],
      lockIssues: this.#lockIssues,
      plan: snapshot.plan,
      inventory: snapshot.inventory,
      lock: this.#lock,
      allocations: new Set(this.#ledger.ids()),
      jobs: [...this.#jobs.values()],
      agents: [...this.#agents.values()],
    });
    const now = new Date(this.#clock()).toISOString().replace(/\.\d{3}Z$/, "Z");
    const namespaces = new Set(this.#options.namespaces ?? []);
    const reached = this.#reached(snapshot, index);
    const reported: ReportedStatus[] = [];
    const writes: ReportedStatus[] = [];
    for (const resource of this.#resources.filter((candidate) => candidate.use === "resources")) {
      for (const object of this.#cacheOf(resource)?.list() ?? []) {
        const read = this.#view(object, resource);
        if (read === undefined || (namespaces.size > 0 && !namespaces.has(read.namespace))) continue;
        const known = this.#outcomes.get(read.key);
        if (known !== undefined && known.cr === read && !reached(read)) {
          reported.push(known);
          continue;
        }
        const cr = this.#asWritten(read);
        const outcome = crStatus(cr, index, now);
        // Kept as read (not as written): a CR whose write the informer has not delivered is reached again.
        reported.push({ cr: read, outcome });
        if (this.#options.sink && outcome.changed && !this.#inFlight.has(cr.key))
          writes.push({ cr, outcome });
      }
    }
    this.#outcomes = new Map(reported.map((entry) => [entry.cr.key, entry]));
    this.#reported = reported.sort((a, b) => (a.cr.key < b.cr.key ? -1 : a.cr.key > b.cr.key ? 1 : 0));
    this.#rounds += 1;
    this.metrics.rounds.observe((performance.now() - started) / 1000);
    const waiters = this.#roundWaiters;
    this.#roundWaiters = [];
    // A CR gone from the cluster needs no memory of what was written to it, or of how it read.
    const present = new Set(reported.map(({ cr }) => cr.key));
    for (const key of this.#written.keys()) if (!present.has(key)) this.#written.delete(key);
    for (const key of this.#views.keys()) if (!present.has(key)) this.#views.delete(key);
    const written = this.#write(writes);
    this.#writing = Promise.all([this.#writing, written]).then(() => {});
    void written.then(() => {
      for (const resolve of waiters) resolve();
    });
  }

  /**
   * Which CRs the changes since the last round can reach, so that only their statuses are computed
   * again: a CR that changed, the CRs of a cluster whose CRs, Allocation or Jobs changed or that holds
   * a host whose facts changed, those an agent object that changed applied, and those whose findings
   * the evaluation changed. Every CR, in the first round, after a fresh list, a new lock, and every
   * `resyncMs`. A CR whose write is not delivered yet, or that was in flight, is always reached.
   */
  #reached(snapshot: SiteSnapshot, index: StatusIndex): (cr: CrView) => boolean {
    const touched = this.#touched;
    const everything =
      this.#everything || this.#clock() - this.#lastEverything >= (this.#options.resyncMs ?? 300_000);
    const crs = new Set(touched.crs);
    const clusters = new Set(touched.clusters);
    // By `Kind/namespace/name`, and by `Kind/name` for an Argo CD tracking id without the namespace.
    const agents = new Set(touched.agents);
    for (const key of touched.agents) {
      const [kind, , name] = key.split("/");
      agents.add(`${kind}/${name}`);
    }
    if (!everything) {
      for (const entry of this.#lock.entries) if (touched.hosts.has(entry.host)) clusters.add(entry.cluster);
      // A CR's findings can change with another's (the checks across CRs) or with the hosts.
      if (this.#evaluated !== undefined && this.#evaluated !== snapshot)
        for (const key of changedFindings(this.#evaluated.issues, snapshot.issues)) {
          crs.add(key);
          if (key.startsWith("Allocation/")) clusters.add(key.slice("Allocation/".length));
        }
    }
    this.#evaluated = snapshot;
    if (everything) this.#lastEverything = this.#clock();
    this.#everything = false;
    for (const set of Object.values(touched)) set.clear();
    return (cr) => {
      if (everything || crs.has(cr.key) || this.#written.has(cr.key) || this.#inFlight.has(cr.key))
        return true;
      const plan = index.clusterOf(cr.key);
      const name = plan?.name ?? (cr.kind === "SIPCluster" ? cr.name : cr.labels.cluster);
      if (name !== undefined && clusters.has(`${cr.namespace}/${name}`)) return true;
      const ref = agentRefOf(cr);
      return (
        ref !== undefined &&
        agents.has(
          ref.namespace === undefined
            ? `${ref.kind}/${ref.name}`
            : `${ref.kind}/${ref.namespace}/${ref.name}`,
        )
      );
    };
  }

  /** Joins again the hosts whose BMH, HardwareData or networkData Secret changed. */
  #readHosts(): void {
    for (const id of this.#dirtyHosts) {
      const { changed, issues } = this.#hosts.rejoin(id);
      if (changed) {
        this.#inventoryChanged = true;
        this.#touched.hosts.add(id);
      }
      for (const found of issues)
        this.#options.log.warn("inventory finding", { host: id, path: found.path, message: found.message });
    }
    this.#dirtyHosts.clear();
    if (this.#inventoryChanged) this.#inventory = this.#hosts.inventory();
  }

  /**
   * Reads again the CRs that changed. A CR is read as its spec and its metadata's names, labels and
   * annotations: a status write (the reporter's own) or a new resourceVersion changes nothing the
   * rules read, so it evaluates nothing again.
   */
  #readCrs(): void {
    for (const key of this.#dirtyCrs) {
      const [kind = "", namespace = "", ...rest] = key.split("/");
      const name = rest.join("/");
      const resource = this.#resources.find(
        (candidate) => candidate.use === "resources" && candidate.kind === kind,
      );
      const object = resource && this.#cacheOf(resource)?.get(name, namespace);
      if (resource === undefined || object === undefined) {
        if (this.#crs.delete(key)) this.#resourcesChanged = true;
        continue;
      }
      const { metadata, spec } = typed(object, resource) as {
        metadata?: Record<string, unknown>;
        spec?: unknown;
      };
      const reviewed = {
        apiVersion: resource.apiVersion,
        kind: resource.kind,
        metadata: {
          name,
          namespace,
          ...(metadata?.labels === undefined ? {} : { labels: metadata.labels }),
          ...(metadata?.annotations === undefined ? {} : { annotations: metadata.annotations }),
        },
        spec,
      };
      const text = JSON.stringify(reviewed);
      if (this.#crs.get(key)?.text === text) continue;
      const { resources, invalid, issues } = readResources([objectDocument(reviewed, FROM_CLUSTER)]);
      this.#crs.set(key, {
        text,
        ...(resources[0] && { resource: resources[0] }),
        ...(invalid[0] && { invalid: invalid[0] }),
        issues,
      });
      this.#resourcesChanged = true;
    }
    this.#dirtyCrs.clear();
  }

  #readAllocations(): void {
    if (this.#dirtyAllocations.size === 0) return;
    for (const id of this.#dirtyAllocations) {
      const slash = id.indexOf("/");
      const object = this.#cached("allocations", id.slice(0, slash), id.slice(slash + 1));
      if (object === undefined) this.#ledger.delete(id);
      else this.#ledger.set(id, object);
    }
    this.#dirtyAllocations.clear();
    const { lock, issues } = this.#ledger.result();
    if (!sameData(lock.entries, this.#lock.entries)) this.#lockChanged = this.#everything = true;
    if (!sameData(issues, this.#lockIssues)) this.#everything = true;
    this.#lock = lock;
    this.#lockIssues = issues;
  }

  #readJobsAndAgents(): void {
    const jobs = this.#resources.find((candidate) => candidate.use === "jobs");
    for (const id of this.#dirtyJobs) {
      const slash = id.indexOf("/");
      const object = jobs && this.#cacheOf(jobs)?.get(id.slice(slash + 1), id.slice(0, slash));
      const job = object && jobs && readJob(typed(object, jobs));
      if (job === undefined) this.#jobs.delete(id);
      else this.#jobs.set(id, job);
    }
    this.#dirtyJobs.clear();
    for (const key of this.#dirtyAgents) {
      const [kind = "", namespace = "", name = ""] = key.split("/");
      const resource = this.#resources.find(
        (candidate) => candidate.use === "agents" && candidate.kind === kind,
      );
      const object = resource && this.#cacheOf(resource)?.get(name, namespace);
      const value = object && resource && typed(object, resource);
      const agent =
        value === undefined
          ? undefined
          : kind === "Kustomization"
            ? readKustomization(value)
            : readApplication(value);
      if (agent === undefined) this.#agents.delete(key);
      else this.#agents.set(key, agent);
    }
    this.#dirtyAgents.clear();
  }

  /** The site evaluated as the webhook evaluates it, carried over from the last round. */
  #evaluate(): SiteSnapshot | undefined {
    const inventory = this.#inventory;
    if (inventory === undefined) return undefined;
    const reads = [...this.#crs.values()];
    const resources = () =>
      reads
        .flatMap((read) => (read.resource ? [read.resource] : []))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const invalid = () => reads.flatMap((read) => (read.invalid ? [read.invalid] : []));
    if (this.#snapshot === undefined || this.#lockChanged) {
      this.#snapshot = SiteSnapshot.of({
        resources: resources(),
        inventory,
        lock: this.#lock,
        invalid: invalid(),
      });
    } else {
      if (this.#inventoryChanged) this.#snapshot = this.#snapshot.withInventory(inventory);
      if (this.#resourcesChanged) this.#snapshot = this.#snapshot.withResources(resources(), invalid());
    }
    this.#lockChanged = this.#inventoryChanged = this.#resourcesChanged = false;
    return this.#snapshot;
  }

  /** A CR as {@link readCr} reads it, read again only when its resourceVersion changed. */
  #view(object: KubernetesObject, resource: Resource): CrView | undefined {
    const key = `${resource.kind}/${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;
    const known = this.#views.get(key);
    const version = object.metadata?.resourceVersion;
    if (known !== undefined && version !== undefined && known.resourceVersion === version) return known;
    const read = readCr(typed(object, resource));
    if (read === undefined) this.#views.delete(key);
    else this.#views.set(key, read);
    return read;
  }

  /**
   * `cr` with the status the reporter last wrote for it, until the informer delivers that write:
   * until then the cache holds the status before it.
   */
  #asWritten(cr: CrView): CrView {
    const written = this.#written.get(cr.key);
    if (written === undefined) return cr;
    const delivered =
      sameData(cr.status, written.status) ||
      (written.resourceVersion !== undefined && cr.resourceVersion === written.resourceVersion);
    if (delivered) {
      this.#written.delete(cr.key);
      return cr;
    }
    return { ...cr, status: written.status, conditions: written.status.conditions ?? [] };
  }

  /** Writes the statuses that changed (a few at a time), then their Events. */
  async #write(changes: readonly ReportedStatus[]): Promise<void> {
    const sink = this.#options.sink;
    if (sink === undefined || changes.length === 0) return;
    const queue = [...changes];
    let failed = false;
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const { cr, outcome } = next;
        this.#inFlight.add(cr.key);
        try {
          const resourceVersion = await sink.applyStatus(cr, outcome.status);
          this.#written.set(cr.key, { resourceVersion, status: outcome.status });
          this.metrics.writes.inc({ kind: cr.kind, result: "written" });
          for (const transition of outcome.transitions) {
            try {
              await this.#recorder?.record(cr, transition, resourceVersion);
              this.metrics.events.inc({ type: transition.eventType });
            } catch (error) {
              this.#options.log.warn("event not recorded", { object: cr.key, reason: describe(error) });
            }
          }
        } catch (error) {
          this.metrics.writes.inc({ kind: cr.kind, result: "failed" });
          // Gone (deleted, or made again under its name): the informer tells what there is now.
          const gone = error instanceof SinkError && (error.code === 404 || error.code === 409);
          if (!gone) {
            failed = true;
            // Computed again, and written, in the retry round.
            this.#touched.crs.add(cr.key);
          }
          this.#options.log[gone ? "info" : "warn"]("status not written", {
            object: cr.key,
            reason: describe(error),
          });
        } finally {
          this.#inFlight.delete(cr.key);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#options.concurrency ?? 4, queue.length) }, worker));
    // What failed is computed and written again in a later round.
    this.#schedule(failed ? (this.#options.retryDelayMs ?? 1000) : undefined);
  }

  /** Every CR's readiness, for the ready gauge. */
  *#readings(): Iterable<ReadyReading> {
    for (const { cr, outcome } of this.#reported)
      yield { namespace: cr.namespace, cluster: outcome.cluster, kind: cr.kind, ready: outcome.ready };
  }
}

/** The collections every reporter watches (the GitOps kinds are added where served). */
function baseResources(options: StatusReporterOptions): Resource[] {
  const { kubeConfig } = options;
  const custom = (
    group: string,
    version: string,
    plural: string,
    kind: string,
    use: Use,
    labelSelector?: string,
  ): Resource => ({
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
  });
  const secretsSelector = `${NETWORK_DATA_LABEL}=true`;
  const secretNamespaces = [...new Set(options.secretNamespaces ?? [])];
  const secrets: Resource[] =
    secretNamespaces.length === 0
      ? [
          {
            name: "secrets",
            apiVersion: "v1",
            kind: "Secret",
            path: "/api/v1/secrets",
            labelSelector: secretsSelector,
            use: "secrets",
            list: () =>
              kubeConfig
                .makeApiClient(CoreV1Api)
                .listSecretForAllNamespaces({ labelSelector: secretsSelector }),
          },
        ]
      : secretNamespaces.map((namespace) => ({
          name: `secrets in ${namespace}`,
          apiVersion: "v1",
          kind: "Secret",
          path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`,
          labelSelector: secretsSelector,
          namespace,
          use: "secrets" as const,
          list: () =>
            kubeConfig
              .makeApiClient(CoreV1Api)
              .listNamespacedSecret({ namespace, labelSelector: secretsSelector }),
        }));
  // Only the Jobs metalsynth rendered: a hub's other Jobs are none of the reporter's business.
  const jobsSelector = `${MANAGED_BY_LABEL}=metalsynth`;
  return [
    ...allocationResources(kubeConfig, options.allocationTrust?.namespaces ?? []),
    custom("metal3.io", "v1alpha1", "baremetalhosts", "BareMetalHost", "hosts", options.hostSelector),
    custom("metal3.io", "v1alpha1", "hardwaredata", "HardwareData", "hardware"),
    ...secrets,
    ...Object.values(KINDS).map((definition) =>
      custom(definition.group, definition.version, definition.plural, definition.kind, "resources"),
    ),
    {
      name: "jobs",
      apiVersion: "batch/v1",
      kind: "Job",
      path: "/apis/batch/v1/jobs",
      labelSelector: jobsSelector,
      use: "jobs",
      list: () =>
        kubeConfig.makeApiClient(BatchV1Api).listJobForAllNamespaces({ labelSelector: jobsSelector }),
    },
  ];
}

function agentResource(kubeConfig: KubeConfig, agent: (typeof AGENT_KINDS)[number]): Resource {
  return {
    name: agent.plural,
    apiVersion: `${agent.group}/${agent.version}`,
    kind: agent.kind,
    path: `/apis/${agent.group}/${agent.version}/${agent.plural}`,
    use: "agents",
    list: () =>
      kubeConfig
        .makeApiClient(CustomObjectsApi)
        .listClusterCustomObject({ group: agent.group, version: agent.version, plural: agent.plural }),
  };
}

/** The objects (`Kind/namespace/name`) whose findings differ between two evaluations. */
function changedFindings(before: readonly Issue[], after: readonly Issue[]): Set<string> {
  const byObject = (issues: readonly Issue[]) => {
    const found = new Map<string, Issue[]>();
    for (const issue of issues) {
      if (issue.object === undefined) continue;
      const list = found.get(issue.object) ?? [];
      list.push(issue);
      found.set(issue.object, list);
    }
    return found;
  };
  const old = byObject(before);
  const now = byObject(after);
  const changed = new Set<string>();
  for (const key of new Set([...old.keys(), ...now.keys()]))
    if (!sameData(old.get(key), now.get(key))) changed.add(key);
  return changed;
}

/** An object with its kind and apiVersion: the items of a typed list come without them. */
function typed(object: KubernetesObject, resource: Resource): Record<string, unknown> {
  return { ...object, apiVersion: resource.apiVersion, kind: resource.kind };
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
}
