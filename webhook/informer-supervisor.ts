/**
 * Keeps one `@kubernetes/client-node` informer (list, then watch) running per collection, whatever
 * the collections are for:
 *
 * - A collection counts as listed once its current informer has listed it in full.
 * - Each watch asks the API server to end it after `watchTimeoutSeconds`, and the informer then
 *   watches again: a watch silent for twice that long is stuck, is reported as stale, and is
 *   replaced by a fresh informer (a full list).
 * - A failed list or watch is reported and retried, at once the first time, then with backoff; a
 *   410 Gone (history compacted) makes the informer list again by itself.
 * - Any list after the first (a 410 inside the watch, a retry that lost its place) is a problem
 *   from the moment it starts until the informer has applied it and the owner has heard
 *   {@link InformerEvents.listed}: until then the cache holds what the API server may no longer
 *   have (decision 0056).
 *
 * What the objects mean is the owner's business: it hears of changes, signs of life and fresh lists
 * through {@link InformerEvents}, and reads the informers' caches.
 */
import {
  ADD,
  AbortError,
  ApiException,
  CONNECT,
  DELETE,
  ERROR,
  UPDATE,
  type Informer,
  type KubernetesListObject,
  type KubernetesObject,
  type ListPromise,
  type ObjectCache,
} from "@kubernetes/client-node";
import { stringField } from "../synth/inventory/raw.ts";
import type { Logger } from "./log.ts";

/** One collection to keep an informer on. */
export interface SupervisedResource {
  /** For health reports and logs. */
  readonly name: string;
  /** The collection's path (`/apis/<group>/<version>/<plural>`, or a namespace's). */
  readonly path: string;
  readonly labelSelector?: string;
  /** A field selector for list and watch (`metadata.name=…` for one object). */
  readonly fieldSelector?: string;
  /** Lists the collection (with the same selectors). */
  list(): Promise<KubernetesListObject<KubernetesObject>>;
}

/** An informer and the cache it fills, as `makeInformer` of `@kubernetes/client-node` makes them. */
export type CachingInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

/** Makes an informer of the collection at `path` (with the watch's query) that lists with `list`. */
export type InformerFactory = (
  path: string,
  list: ListPromise<KubernetesObject>,
  labelSelector?: string,
  fieldSelector?: string,
) => CachingInformer;

/** What the supervisor tells its owner; only of current informers, and never after {@link InformerSupervisor.close}. */
export interface InformerEvents<R extends SupervisedResource> {
  /** The API server gave a sign of life for `resource` (a watch connected, an event, a list). */
  contact(resource: R): void;
  /** An object of `resource` was added, changed or deleted (after {@link contact}). */
  changed(resource: R, object: KubernetesObject): void;
  /**
   * A fresh informer replaced a stale one of `resource`: it will report what it lists as added,
   * but nothing of what it no longer has.
   */
  relisting(resource: R): void;
  /** The informer of `resource` started, or restarted after a failure, without an error. */
  started(resource: R): void;
  /**
   * The informer of `resource` has applied a list to its cache (its first, or a later one) and
   * reported what it changed through {@link changed}: the owner publishes now, since the
   * collection counts as listing until this returns.
   */
  listed(resource: R): void;
}

/** Options of {@link InformerSupervisor}. */
export interface InformerSupervisorOptions<R extends SupervisedResource> {
  readonly makeInformer: InformerFactory;
  readonly events: InformerEvents<R>;
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
   * First delay in milliseconds before a list or watch that failed again is retried; doubled per
   * failure, at most 30 s.
   * @default 1000
   */
  readonly retryDelayMs?: number;
}

/** The state of one collection's informer. */
interface Watch<R> {
  readonly resource: R;
  informer: CachingInformer;
  /** The current informer has listed the collection at least once. */
  listed: boolean;
  /**
   * The current informer lists the collection again (its watch lost its place: 410 Gone) and has
   * not delivered that list yet; why, for `/readyz`.
   */
  relisting?: string;
  /** When the API server last gave a sign of life for this collection. */
  contactAt: number;
  /** Why the last list or watch failed; cleared when a retry succeeds. */
  problem?: string;
  failures: number;
  retry?: NodeJS.Timeout;
}

/** Longest wait before a retry. */
const MAX_RETRY_DELAY_MS = 30_000;

/** Supervises the informers of a set of collections (see the module comment). */
export class InformerSupervisor<R extends SupervisedResource> {
  readonly #options: InformerSupervisorOptions<R>;
  readonly #clock: () => number;
  readonly #watchTimeoutSeconds: number;
  readonly #staleAfterMs: number;
  readonly #watches: Watch<R>[] = [];
  #staleCheck: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: InformerSupervisorOptions<R>) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#watchTimeoutSeconds = options.watchTimeoutSeconds ?? 60;
    this.#staleAfterMs = 2 * 1000 * this.#watchTimeoutSeconds;
  }

  /**
   * Starts an informer per resource. Resolves once each has tried its first list (failures are
   * retried in the background and reported by {@link problems}).
   */
  async start(resources: readonly R[]): Promise<void> {
    // Armed before the first lists, so that a close() while they run also disarms it.
    this.#staleCheck = setInterval(() => this.#replaceStale(), Math.max(250, this.#staleAfterMs / 4));
    await Promise.all(resources.map((resource) => this.#open(resource)));
  }

  /** Whether every collection has been listed by its current informer, and none is listing again. */
  listed(): boolean {
    return this.#watches.every((watch) => watch.listed && watch.relisting === undefined);
  }

  /** What is wrong, one line per collection: not listed yet, failing, or silent too long. */
  problems(): string[] {
    const now = this.#clock();
    return this.#watches.flatMap((watch) => {
      const { name } = watch.resource;
      if (!watch.listed)
        return [`${name}: ${watch.problem ? `list failed: ${watch.problem}` : "not listed yet"}`];
      if (watch.relisting !== undefined) return [`${name}: ${watch.relisting}`];
      if (watch.problem) return [`${name}: watch failed, retrying: ${watch.problem}`];
      const silent = now - watch.contactAt;
      if (silent > this.#staleAfterMs) {
        return [`${name}: nothing from the API server for ${Math.round(silent / 1000)}s (stale watch)`];
      }
      return [];
    });
  }

  /** The current informer's cache of `resource`; undefined before it is started. */
  cache(resource: R): ObjectCache<KubernetesObject> | undefined {
    return this.#watchOf(resource)?.informer;
  }

  /** When the API server last gave a sign of life for `resource`. */
  contactAt(resource: R): number | undefined {
    return this.#watchOf(resource)?.contactAt;
  }

  /** Stops every informer and retry; no event follows. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#staleCheck);
    for (const watch of this.#watches) {
      clearTimeout(watch.retry);
      await watch.informer.stop();
    }
  }

  #watchOf(resource: R): Watch<R> | undefined {
    return this.#watches.find((candidate) => candidate.resource === resource);
  }

  /** Starts a fresh informer for `resource` (replacing any earlier one) and waits for its first try. */
  async #open(resource: R): Promise<void> {
    const list = async () => {
      // A list after the first: the informer's watch lost its place (410 Gone, or a retry after
      // the history it resumed from was compacted). What the cache holds may be gone from the API
      // server, so the collection is not current from now until the list is delivered.
      if (current() && watch.listed) {
        watch.relisting ??= "listing again: its watch lost its place in the API server's history";
        this.#options.log.warn("listing again", { resource: resource.name });
      }
      let listed;
      try {
        listed = await resource.list();
      } catch (error) {
        // The informer reports the failure (an ERROR event), and retries with a list.
        if (current() && watch.relisting !== undefined)
          watch.relisting = `list failed: ${describeError(error)}`;
        throw error;
      }
      // client-node goes on to watch after a list even when stop() came meanwhile (a shutdown, or a
      // stale informer replaced): failing the list ends it there. Its error is ignored below.
      if (!current()) throw new Error(`informer for ${resource.name} stopped while listing`);
      watch.listed = true;
      // client-node applies the list to its cache, and reports each change, in the continuation of
      // this promise: after it, and after every microtask it queues, the list is delivered. The
      // owner publishes it in the same turn as the collection stops counting as listing, so no
      // request is reviewed in between.
      setImmediate(() => {
        if (!current()) return;
        const again = watch.relisting !== undefined;
        watch.relisting = undefined;
        this.#options.events.listed(resource);
        if (again) this.#options.log.info("listed again", { resource: resource.name });
      });
      return listed;
    };
    // The watch path carries the server-side timeout that makes a healthy watch end and restart
    // regularly: those restarts are the heartbeat stale-watch detection relies on.
    const path = `${resource.path}?timeoutSeconds=${this.#watchTimeoutSeconds}&allowWatchBookmarks=true`;
    const informer = this.#options.makeInformer(path, list, resource.labelSelector, resource.fieldSelector);
    const existing = this.#watchOf(resource);
    const watch: Watch<R> = existing ?? {
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
      existing.relisting = undefined;
      this.#options.events.relisting(resource);
    } else {
      this.#watches.push(watch);
    }
    const current = () => watch.informer === informer && !this.#closed;
    const changed = (object: KubernetesObject) => {
      if (!current()) return;
      this.#contact(watch);
      this.#options.events.changed(resource, object);
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
  async #startInformer(watch: Watch<R>, informer: CachingInformer): Promise<void> {
    const failuresBefore = watch.failures;
    await informer.start();
    if (watch.informer === informer && !this.#closed && watch.failures === failuresBefore && watch.listed) {
      if (watch.problem !== undefined)
        this.#options.log.info("watch recovered", { resource: watch.resource.name });
      watch.problem = undefined;
      watch.failures = 0;
      this.#contact(watch);
      this.#options.events.started(watch.resource);
    }
  }

  #failed(watch: Watch<R>, error: unknown): void {
    watch.failures += 1;
    watch.problem = describeError(error);
    // A dropped watch is routine (an API server restart, a load balancer's idle timeout): the first
    // retry is immediate, so readiness only blinks; repeated failures back off.
    const delay =
      watch.failures === 1
        ? 0
        : Math.min((this.#options.retryDelayMs ?? 1000) * 2 ** (watch.failures - 2), MAX_RETRY_DELAY_MS);
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

  #contact(watch: Watch<R>): void {
    watch.contactAt = this.#clock();
    this.#options.events.contact(watch.resource);
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
