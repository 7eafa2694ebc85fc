/**
 * Admissions in flight, shared by the replicas through the API server (decision 0056). Each replica
 * holds what it admitted until its informer delivers it (decision 0041); two replicas would each
 * admit one of two conflicting CREATEs sent together, since neither hears of the other's in time.
 * So an admitted CREATE or UPDATE that is no dry run is first recorded in one ConfigMap in the
 * webhook's namespace (`metalsynth-webhook-admissions`), written with optimistic concurrency:
 *
 * - the write names the ConfigMap's resourceVersion the review saw, so of two replicas writing at
 *   once the API server takes one; the other hears 409 Conflict, reads the ConfigMap, holds what the
 *   other recorded, and reviews its request again against it (`admissions.ts`);
 * - every replica watches the ConfigMap and holds each entry it has not seen, as if it had admitted
 *   it: the hold ends when its informer delivers that object (stored, changed or deleted: the CR
 *   left), or after `HOLD_MS`;
 * - an entry is the object as admitted (spec, labels, annotations: what reviews read), its uid and
 *   when; each write drops entries older than {@link RECORD_TTL_MS}, and a sweep does when nothing
 *   is written, so the ConfigMap holds seconds of admissions. A dry run writes nothing (the
 *   webhook configuration says `sideEffects: NoneOnDryRun`), nor does an UPDATE that changes nothing
 *   a review reads (a GitOps agent's reconcile).
 *
 * The ConfigMap is the one place every replica shares and the API server serialises writes to; it
 * is written only by the webhook's ServiceAccount (a Role on that name alone).
 */
import { hostname } from "node:os";
import {
  ApiException,
  CoreV1Api,
  ListWatch,
  Watch,
  type KubeConfig,
  type V1ConfigMap,
} from "@kubernetes/client-node";
import { field, isRecord, stringField } from "../synth/inventory/raw.ts";
import type { AdmissionRecord } from "./admissions.ts";
import { InformerSupervisor, type InformerFactory, type SupervisedResource } from "./informer-supervisor.ts";
import type { Logger } from "./log.ts";
import type { Feed, Readiness, WebhookState } from "./state.ts";

/** The ConfigMap, in the webhook's namespace. */
export const ADMISSIONS_CONFIGMAP = "metalsynth-webhook-admissions";

/**
 * How long an entry stays in the ConfigMap (milliseconds). An informer delivers an admitted object
 * within a second; a replica that started meanwhile, or whose watch was listing again, reads the
 * entries still there. Readers hold an entry for at most `HOLD_MS` from when they read it.
 */
export const RECORD_TTL_MS = 10_000;

/** One admission as the ConfigMap records it (a value of its `data`, as JSON). */
interface Entry {
  /** The object as admitted: what a review reads of it. */
  readonly object: unknown;
  /** Its `metadata.uid` (set by the API server before admission). */
  readonly uid?: string;
  /** When it was admitted (the writer's clock, ms). */
  readonly admittedAt: number;
  /** The pod (host name) that admitted it. */
  readonly replica: string;
}

/** Options of {@link AdmissionLedger.start}. */
export interface AdmissionLedgerOptions {
  readonly kubeConfig: KubeConfig;
  /** The webhook's namespace, where the ConfigMap is. */
  readonly namespace: string;
  readonly state: WebhookState;
  readonly log: Logger;
  /**
   * Wall clock in milliseconds.
   * @default Date.now
   */
  readonly clock?: () => number;
  /** @default the host name: the pod's */
  readonly replica?: string;
  /** @default client-node's informer */
  readonly makeInformer?: InformerFactory;
  /** @default 60 */
  readonly watchTimeoutSeconds?: number;
}

/** The admissions record (see the module comment): a feed of holds, and where to record. */
export class AdmissionLedger implements Feed, AdmissionRecord {
  readonly #options: AdmissionLedgerOptions;
  readonly #api: CoreV1Api;
  readonly #clock: () => number;
  readonly #replica: string;
  readonly #informers: InformerSupervisor<SupervisedResource>;
  readonly #resource: SupervisedResource;
  /** The ConfigMap as last read or written; undefined while it does not exist. */
  #configMap:
    { readonly resourceVersion?: string; readonly data: Readonly<Record<string, string>> } | undefined;
  /** `data` key → `uid@admittedAt` of each entry already held here. */
  readonly #seen = new Map<string, string>();
  #sweep: NodeJS.Timeout | undefined;
  #recorded = 0;

  private constructor(options: AdmissionLedgerOptions) {
    this.#options = options;
    this.#api = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#clock = options.clock ?? Date.now;
    this.#replica = options.replica ?? hostname();
    const { namespace } = options;
    const fieldSelector = `metadata.name=${ADMISSIONS_CONFIGMAP}`;
    this.#resource = {
      name: `configmap ${namespace}/${ADMISSIONS_CONFIGMAP}`,
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
      fieldSelector,
      list: () => this.#api.listNamespacedConfigMap({ namespace, fieldSelector }),
    };
    this.#informers = new InformerSupervisor({
      makeInformer:
        options.makeInformer ??
        ((path, list, labelSelector, selector) =>
          new ListWatch(path, new Watch(options.kubeConfig), list, false, labelSelector, selector)),
      events: {
        contact: () => {},
        // Whatever the event, the informer's cache holds the ConfigMap as it is now, or nothing.
        changed: (resource) => {
          const now = this.#informers.cache(resource)?.get(ADMISSIONS_CONFIGMAP, namespace);
          if (now === undefined) this.#configMap = undefined;
          else this.#absorb(now);
        },
        relisting: () => {},
        started: () => {},
        listed: () => {},
      },
      log: options.log,
      clock: this.#clock,
      ...(options.watchTimeoutSeconds === undefined
        ? {}
        : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
    });
  }

  /**
   * Makes the record and registers it with the state, as a feed: ready, so requests are reviewed
   * and recorded, only once the ConfigMap is listed. {@link watch} starts it.
   */
  static create(options: AdmissionLedgerOptions): AdmissionLedger {
    const ledger = new AdmissionLedger(options);
    options.state.addFeed(ledger);
    return ledger;
  }

  /** Lists and watches the ConfigMap; resolves once the first list was tried. */
  async watch(): Promise<void> {
    this.#sweep = setInterval(() => void this.#collect(), RECORD_TTL_MS);
    this.#sweep.unref();
    await this.#informers.start([this.#resource]);
  }

  status(): Readiness {
    const problems = this.#informers.problems();
    if (problems.length > 0) return { ready: false, detail: `admissions record: ${problems.join("; ")}` };
    const live = this.#entries().length;
    return {
      ready: true,
      detail: `admissions record: ${live} in flight, ${this.#recorded} recorded by this replica`,
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await this.#informers.close();
  }

  async record(object: unknown, holds: number): Promise<"recorded" | "changed"> {
    const { state } = this.#options;
    if (holds !== state.holdCount()) return "changed";
    const key = entryKey(object);
    if (key === undefined) throw new Error("the admitted object has no kind, namespace or name");
    const entry: Entry = {
      object: reviewed(object),
      ...(uidOf(object) !== undefined && { uid: uidOf(object) }),
      admittedAt: this.#clock(),
      replica: this.#replica,
    };
    const data = Object.fromEntries(this.#entries().map(([name, text]) => [name, text] as const));
    data[key] = JSON.stringify(entry);
    let written: V1ConfigMap;
    try {
      written = await this.#write(data);
    } catch (error) {
      if (!(error instanceof ApiException) || (error.code !== 409 && error.code !== 404)) throw error;
      // Another replica wrote first (or made the ConfigMap): hold what it recorded; review again.
      await this.#refresh();
      return "changed";
    }
    // Written after the review that admitted it saw every hold: ours, held first, then the rest.
    this.#seen.set(key, seenMark(entry));
    state.hold(object);
    this.#recorded += 1;
    this.#absorb(written);
    return "recorded";
  }

  /** Writes `data` over the ConfigMap as last seen (creating it when it is not there). */
  async #write(data: Record<string, string>): Promise<V1ConfigMap> {
    const { namespace } = this.#options;
    const current = this.#configMap;
    const metadata = {
      name: ADMISSIONS_CONFIGMAP,
      namespace,
      labels: { "app.kubernetes.io/managed-by": "metalsynth" },
      ...(current?.resourceVersion !== undefined && { resourceVersion: current.resourceVersion }),
    };
    const body: V1ConfigMap = { apiVersion: "v1", kind: "ConfigMap", metadata, data };
    return current === undefined
      ? await this.#api.createNamespacedConfigMap({ namespace, body })
      : await this.#api.replaceNamespacedConfigMap({ name: ADMISSIONS_CONFIGMAP, namespace, body });
  }

  /** Reads the ConfigMap afresh (after a conflict). */
  async #refresh(): Promise<void> {
    try {
      this.#absorb(
        await this.#api.readNamespacedConfigMap({
          name: ADMISSIONS_CONFIGMAP,
          namespace: this.#options.namespace,
        }),
      );
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) this.#configMap = undefined;
      else throw error;
    }
  }

  /** The ConfigMap as read or written now: holds every live entry not held yet. */
  #absorb(object: unknown): void {
    const data = field(object, "data");
    const resourceVersion = stringField(field(object, "metadata"), "resourceVersion");
    this.#configMap = {
      ...(resourceVersion !== undefined && { resourceVersion }),
      data: isRecord(data)
        ? Object.fromEntries(
            Object.entries(data).filter((pair): pair is [string, string] => typeof pair[1] === "string"),
          )
        : {},
    };
    for (const [name, text] of this.#entries()) {
      const entry = parseEntry(text);
      if (entry === undefined || this.#seen.get(name) === seenMark(entry)) continue;
      this.#seen.set(name, seenMark(entry));
      this.#options.state.hold(entry.object);
    }
  }

  /** The ConfigMap's entries admitted within {@link RECORD_TTL_MS}, as `[key, JSON]`. */
  #entries(): [string, string][] {
    const data = this.#configMap?.data ?? {};
    const now = this.#clock();
    return Object.entries(data).filter(([, text]) => {
      const entry = parseEntry(text);
      return entry !== undefined && now - entry.admittedAt < RECORD_TTL_MS;
    });
  }

  /** Drops expired entries from the ConfigMap when nothing else writes it (a lost race is fine). */
  async #collect(): Promise<void> {
    const data = this.#configMap?.data;
    if (data === undefined) return;
    const live = this.#entries();
    for (const name of this.#seen.keys()) if (!(name in data)) this.#seen.delete(name);
    if (live.length === Object.keys(data).length) return;
    try {
      this.#absorb(await this.#write(Object.fromEntries(live)));
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 409))
        this.#options.log.warn("admissions record not collected", { problem: String(error) });
    }
  }
}

/** `Kind.namespace.name`: a ConfigMap key (letters, digits, `-`, `_`, `.`) per object. */
function entryKey(object: unknown): string | undefined {
  const kind = stringField(object, "kind");
  const metadata = field(object, "metadata");
  const namespace = stringField(metadata, "namespace");
  const name = stringField(metadata, "name");
  if (!kind || !namespace || !name) return undefined;
  return `${kind}.${namespace}.${name}`;
}

function uidOf(object: unknown): string | undefined {
  return stringField(field(object, "metadata"), "uid");
}

/** What reviews read of an object: its kind, name, namespace, labels, annotations and spec. */
function reviewed(object: unknown): unknown {
  if (!isRecord(object)) return object;
  const metadata = field(object, "metadata");
  const keep = ["name", "namespace", "labels", "annotations", "uid", "generation"];
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: isRecord(metadata)
      ? Object.fromEntries(Object.entries(metadata).filter(([key]) => keep.includes(key)))
      : metadata,
    spec: object.spec,
  };
}

function parseEntry(text: string): Entry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const admittedAt = field(value, "admittedAt");
  if (!isRecord(value) || typeof admittedAt !== "number") return undefined;
  const uid = stringField(value, "uid");
  return {
    object: value.object,
    ...(uid !== undefined && { uid }),
    admittedAt,
    replica: stringField(value, "replica") ?? "",
  };
}

function seenMark(entry: Entry): string {
  return `${entry.uid ?? ""}@${entry.admittedAt}`;
}
