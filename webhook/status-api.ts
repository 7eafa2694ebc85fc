/**
 * Where the status reporter's writes go (decision 0059): `.status` of a CR through the status
 * subresource by server-side apply with the reporter's own field manager, and Events, aggregated as
 * client-go's event recorder aggregates them (one Event per object, type, reason and message; a
 * repeat counts up on it instead of making another). The API server is behind {@link StatusSink},
 * so tests and the benchmark record writes without one.
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { KINDS } from "../synth/schema/kinds.ts";
import type { CrStatus } from "../synth/schema/status.ts";
import { STATUS_FIELD_MANAGER, type Transition } from "../synth/status/compute.ts";
import type { CrView } from "../synth/status/objects.ts";

/** A core/v1 Event as the reporter writes it. */
export interface StatusEvent {
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly namespace: string;
    readonly name: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
  };
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly source: { readonly component: string };
  readonly reportingComponent: string;
  readonly reportingInstance: string;
}

/** The API calls the reporter makes; each rejects with a {@link SinkError} when the server refuses. */
export interface StatusSink {
  /** Applies `status` to `cr`; resolves to the resourceVersion the object has after it. */
  applyStatus(cr: CrView, status: CrStatus): Promise<string | undefined>;
  createEvent(event: StatusEvent): Promise<void>;
  /** Sets an Event's count and last timestamp; resolves false when the Event is gone (expired). */
  countEvent(namespace: string, name: string, count: number, lastTimestamp: string): Promise<boolean>;
}

/** A refusal by the API server, with its HTTP status. */
export class SinkError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** The component name Events carry (`kubectl describe` shows it as "From"). */
export const EVENT_SOURCE = "metalsynth-status";

/** {@link StatusSink} on the API server. */
export class ApiStatusSink implements StatusSink {
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
  }

  async applyStatus(cr: CrView, status: CrStatus): Promise<string | undefined> {
    const definition = KINDS[cr.kind];
    // The uid makes the apply a precondition: a CR deleted and made again under the same name gets
    // a 409, not the status computed for its predecessor.
    const body = {
      apiVersion: `${definition.group}/${definition.version}`,
      kind: cr.kind,
      metadata: { name: cr.name, namespace: cr.namespace, ...(cr.uid === undefined ? {} : { uid: cr.uid }) },
      status,
    };
    const applied: unknown = await refusal(() =>
      this.#custom.patchNamespacedCustomObjectStatus(
        {
          group: definition.group,
          version: definition.version,
          namespace: cr.namespace,
          plural: definition.plural,
          name: cr.name,
          body,
          fieldManager: STATUS_FIELD_MANAGER,
          force: true,
        },
        setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply),
      ),
    );
    const metadata =
      typeof applied === "object" && applied !== null ? Reflect.get(applied, "metadata") : undefined;
    const version =
      typeof metadata === "object" && metadata !== null
        ? Reflect.get(metadata, "resourceVersion")
        : undefined;
    return typeof version === "string" ? version : undefined;
  }

  async createEvent(event: StatusEvent): Promise<void> {
    await refusal(() =>
      this.#core.createNamespacedEvent({
        namespace: event.metadata.namespace,
        body: {
          apiVersion: "v1",
          kind: "Event",
          ...event,
          firstTimestamp: new Date(event.firstTimestamp),
          lastTimestamp: new Date(event.lastTimestamp),
        },
      }),
    );
  }

  async countEvent(namespace: string, name: string, count: number, lastTimestamp: string): Promise<boolean> {
    try {
      await refusal(() =>
        this.#core.patchNamespacedEvent(
          { name, namespace, body: { count, lastTimestamp } },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        ),
      );
      return true;
    } catch (error) {
      if (error instanceof SinkError && error.code === 404) return false;
      throw error;
    }
  }
}

/** Runs `call`, turning the client's ApiException into a one-line {@link SinkError}. */
async function refusal<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = typeof error.body === "string" ? safeJson(error.body) : error.body;
    const message = typeof body === "object" && body !== null ? Reflect.get(body, "message") : undefined;
    throw new SinkError(
      `${error.code} ${typeof message === "string" ? message : error.message.split("\n")[0]}`,
      error.code,
    );
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Events remembered for aggregation, as client-go's event cache keeps them (an LRU of 4096). */
const REMEMBERED_EVENTS = 4096;
/** Longest Event message written (events.k8s.io's bound). */
const MAX_EVENT_MESSAGE = 1024;

/**
 * Records Events for status transitions. An Event is one per object, type, reason and message; the
 * same transition again (a Job failing once more with the same message) counts up on it, as
 * `kubectl describe` then shows ("x3 over 10m"). An Event the API server let expire is made anew.
 */
export class EventRecorder {
  readonly #sink: StatusSink;
  readonly #instance: string;
  readonly #clock: () => number;
  readonly #known = new Map<string, { name: string; namespace: string; count: number }>();
  #sequence = 0;

  constructor(sink: StatusSink, instance: string, clock: () => number = Date.now) {
    this.#sink = sink;
    this.#instance = instance;
    this.#clock = clock;
  }

  /** Tells `transition` of `cr` (whose resourceVersion is now `resourceVersion`); resolves to the Event's count. */
  async record(cr: CrView, transition: Transition, resourceVersion?: string): Promise<number> {
    const definition = KINDS[cr.kind];
    const message =
      transition.message.length > MAX_EVENT_MESSAGE
        ? `${transition.message.slice(0, MAX_EVENT_MESSAGE - 1)}…`
        : transition.message;
    const key = [cr.uid ?? cr.key, transition.eventType, transition.reason, message].join("\u0000");
    const now = new Date(this.#clock()).toISOString().replace(/\.\d{3}Z$/, "Z");
    const known = this.#known.get(key);
    if (known !== undefined) {
      // Most recently used last: the map's order is the LRU order.
      this.#known.delete(key);
      const count = known.count + 1;
      if (await this.#sink.countEvent(known.namespace, known.name, count, now)) {
        this.#known.set(key, { ...known, count });
        return count;
      }
    }
    // client-go's name: the object's, a dot and the time in hexadecimal nanoseconds (made unique here).
    const name = `${cr.name}.${(BigInt(this.#clock()) * 1_000_000n + BigInt(this.#sequence++ % 1_000_000)).toString(16)}`;
    await this.#sink.createEvent({
      metadata: { name, namespace: cr.namespace },
      involvedObject: {
        apiVersion: `${definition.group}/${definition.version}`,
        kind: cr.kind,
        namespace: cr.namespace,
        name: cr.name,
        ...(cr.uid === undefined ? {} : { uid: cr.uid }),
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
      },
      type: transition.eventType,
      reason: transition.reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: EVENT_SOURCE },
      reportingComponent: `metalsynth.io/status`,
      reportingInstance: this.#instance,
    });
    this.#known.set(key, { name, namespace: cr.namespace, count: 1 });
    if (this.#known.size > REMEMBERED_EVENTS) {
      const oldest = this.#known.keys().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
    return 1;
  }
}
