/**
 * A small HTTP server that speaks the Kubernetes list/watch wire format for a few collections, so the
 * webhook's informers can be tested without a real API server (none is available here):
 *
 * - `GET <collection>` lists: `{kind: <Kind>List, metadata: {resourceVersion}, items}`, honouring
 *   equality `labelSelector`s; items of core collections come without kind/apiVersion, as the real
 *   server sends them;
 * - `GET <collection>?watch=true&resourceVersion=N` streams newline-delimited watch events after N,
 *   ends the stream after `timeoutSeconds`, and answers a resourceVersion older than the compacted
 *   history with an `ERROR` event carrying a 410 Status, as etcd compaction makes the real one do;
 * - a collection's namespaced form (`/apis/<group>/<version>/namespaces/<ns>/<plural>`), lists in
 *   pages (`limit`/`continue`), and `GET …/namespaces/<ns>/<plural>/<name>` (404 when absent).
 *
 * Tests script failures: dropped connections, hanging watches, expired history, failing lists,
 * paths refused with a status code.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { KINDS } from "../../synth/schema/kinds.ts";

/** A stored object. */
export type KubeObject = Record<string, unknown>;

/** The metadata the server reads; objects without a name are a mistake in the test. */
function metadataOf(object: KubeObject): {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
} {
  const metadata = object.metadata;
  if (
    typeof metadata !== "object" ||
    metadata === null ||
    typeof Reflect.get(metadata, "name") !== "string"
  ) {
    throw new Error(`fake API server: object without metadata.name: ${JSON.stringify(object)}`);
  }
  return metadata as { name: string; namespace?: string; labels?: Record<string, string> };
}

interface Collection {
  readonly kind: string;
  readonly apiVersion: string;
  readonly core: boolean;
  readonly objects: Map<string, KubeObject>;
}

interface Event {
  readonly resourceVersion: number;
  readonly path: string;
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: KubeObject;
}

interface Watcher {
  readonly path: string;
  readonly selector: Record<string, string>;
  readonly response: ServerResponse;
}

/** The fake API server. */
export class FakeApiServer {
  readonly #server: Server;
  readonly #collections = new Map<string, Collection>();
  readonly #history: Event[] = [];
  readonly #watchers = new Set<Watcher>();
  readonly #sockets = new Set<Socket>();
  #resourceVersion = 1000;
  /** Events at or below this resourceVersion are compacted away. */
  #compactedTo = 0;
  /** Watches are accepted but never answered or ended (a connection gone dead). */
  hangWatches = false;
  /** Paths whose next list requests fail with HTTP 500, as many times as the count says. */
  readonly failLists = new Map<string, number>();
  /** Paths (without query) answered with this status code and a Status body, every time. */
  readonly refuse = new Map<string, number>();
  /** Every request, as `METHOD path?query`. */
  readonly requests: string[] = [];

  constructor() {
    this.#server = createServer((request, response) => this.#handle(request, response));
    this.#server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
  }

  /** Serves a collection at `path` (`/apis/metal3.io/v1alpha1/baremetalhosts`). */
  serve(path: string, apiVersion: string, kind: string): this {
    this.#collections.set(path, { kind, apiVersion, core: !apiVersion.includes("/"), objects: new Map() });
    return this;
  }

  /** Serves a collection for every CR kind metalsynth reviews, where the cluster feed lists them. */
  serveCustomResources(): this {
    for (const { group, version, plural, kind } of Object.values(KINDS))
      this.serve(`/apis/${group}/${version}/${plural}`, `${group}/${version}`, kind);
    return this;
  }

  /** Starts listening on 127.0.0.1; resolves to the base URL. */
  async start(): Promise<string> {
    this.#server.listen(0, "127.0.0.1");
    await once(this.#server, "listening");
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** A KubeConfig pointing at this server. */
  kubeConfig(): KubeConfig {
    const config = new KubeConfig();
    const { port } = this.#server.address() as AddressInfo;
    config.loadFromOptions({
      clusters: [{ name: "fake", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: "test", token: "test-token" }],
      contexts: [{ name: "fake", cluster: "fake", user: "test" }],
      currentContext: "fake",
    });
    return config;
  }

  /** Creates or replaces an object, telling watchers. */
  put(path: string, object: KubeObject): void {
    const collection = this.#collection(path);
    const key = keyOf(object);
    const type = collection.objects.has(key) ? "MODIFIED" : "ADDED";
    this.#record(path, type, object);
  }

  /** Deletes an object, telling watchers. */
  remove(path: string, name: string, namespace: string): void {
    const object = this.#collection(path).objects.get(`${namespace}/${name}`);
    if (object) this.#record(path, "DELETED", object);
  }

  /**
   * Deletes an object and forgets the event, as if it happened while no watch was open and the
   * history has since been compacted: only a new list can tell.
   */
  removeUnseen(path: string, name: string, namespace: string): void {
    this.#collection(path).objects.delete(`${namespace}/${name}`);
    this.#resourceVersion += 1;
    this.#compactedTo = this.#resourceVersion;
  }

  /** Compacts the history and tells open watches their resourceVersion expired (410 Gone). */
  expireWatches(): void {
    this.#compactedTo = this.#resourceVersion;
    for (const watcher of this.#watchers) {
      writeEvent(watcher.response, { type: "ERROR", object: goneStatus() });
      watcher.response.end();
    }
    this.#watchers.clear();
  }

  /** Cuts every open watch connection without a proper end (a network failure). */
  dropWatches(): void {
    for (const watcher of this.#watchers) watcher.response.socket?.destroy();
    this.#watchers.clear();
  }

  /**
   * The stored objects of the collection at `path`, in the order they were put. The objects are the
   * server's own: changing one changes what it answers, without an event.
   */
  objects(path: string): KubeObject[] {
    return [...this.#collection(path).objects.values()];
  }

  /** Number of list (not watch) requests made for `path`. */
  lists(path: string): number {
    return this.requests.filter((line) => line.startsWith(`GET ${path}`) && !line.includes("watch=true"))
      .length;
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#server.close();
    await once(this.#server, "close");
  }

  #collection(path: string): Collection {
    const collection = this.#collections.get(path);
    if (!collection) throw new Error(`fake API server: no collection ${path}`);
    return collection;
  }

  #record(path: string, type: Event["type"], object: KubeObject): void {
    const collection = this.#collection(path);
    this.#resourceVersion += 1;
    const stored = {
      ...object,
      metadata: { ...metadataOf(object), resourceVersion: String(this.#resourceVersion) },
    };
    if (type === "DELETED") collection.objects.delete(keyOf(object));
    else collection.objects.set(keyOf(object), stored);
    const event: Event = { resourceVersion: this.#resourceVersion, path, type, object: stored };
    this.#history.push(event);
    for (const watcher of this.#watchers) {
      if (watcher.path === path && matches(stored, watcher.selector)) {
        writeEvent(watcher.response, { type, object: this.#wire(collection, stored) });
      }
    }
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? "/", "http://fake");
    this.requests.push(`${request.method} ${url.pathname}${url.search}`);
    const refused = this.refuse.get(url.pathname);
    if (refused !== undefined) {
      sendStatus(response, refused, `refused by the test (${refused})`);
      return;
    }
    const route = this.#route(url.pathname);
    if (request.method !== "GET" || !route) {
      sendStatus(response, 404, "the server could not find the requested resource");
      return;
    }
    const { collection, namespace, name } = route;
    if (name !== undefined) {
      const found = collection.objects.get(`${namespace ?? ""}/${name}`);
      if (found) sendJson(response, 200, this.#wire(collection, found));
      else sendStatus(response, 404, `${route.plural} "${name}" not found`);
      return;
    }
    const selector = parseSelector(url.searchParams.get("labelSelector"));
    if (url.searchParams.get("watch") !== "true") {
      const failures = this.failLists.get(url.pathname) ?? 0;
      if (failures > 0) {
        this.failLists.set(url.pathname, failures - 1);
        sendStatus(response, 500, "etcd is sad");
        return;
      }
      const items = [...collection.objects.values()].filter(
        (object) =>
          (namespace === undefined || metadataOf(object).namespace === namespace) &&
          matches(object, selector),
      );
      // The continue token is the offset of the next page.
      const from = Number(url.searchParams.get("continue") || "0");
      const limit = Number(url.searchParams.get("limit") || String(items.length));
      const next = from + limit < items.length ? String(from + limit) : undefined;
      sendJson(response, 200, {
        apiVersion: collection.apiVersion,
        kind: `${collection.kind}List`,
        metadata: {
          resourceVersion: String(this.#resourceVersion),
          ...(next !== undefined && { continue: next }),
        },
        items: items.slice(from, from + limit).map((object) => this.#wire(collection, object, true)),
      });
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.flushHeaders();
    if (this.hangWatches) return;
    const from = Number(url.searchParams.get("resourceVersion") ?? "0");
    if (from < this.#compactedTo) {
      writeEvent(response, { type: "ERROR", object: goneStatus() });
      response.end();
      return;
    }
    for (const event of this.#history) {
      if (event.path === url.pathname && event.resourceVersion > from && matches(event.object, selector)) {
        writeEvent(response, { type: event.type, object: this.#wire(collection, event.object) });
      }
    }
    const watcher: Watcher = { path: url.pathname, selector, response };
    this.#watchers.add(watcher);
    const timeout = Number(url.searchParams.get("timeoutSeconds") ?? "0");
    const timer =
      timeout > 0
        ? setTimeout(() => {
            this.#watchers.delete(watcher);
            response.end();
          }, timeout * 1000)
        : undefined;
    response.on("close", () => {
      clearTimeout(timer);
      this.#watchers.delete(watcher);
    });
  }

  /**
   * The collection a request path names: `<base>/<plural>` as served, or its namespaced form
   * `<base>/namespaces/<ns>/<plural>[/<name>]`.
   */
  #route(
    pathname: string,
  ): { collection: Collection; plural: string; namespace?: string; name?: string } | undefined {
    const served = this.#collections.get(pathname);
    if (served) return { collection: served, plural: pathname.slice(pathname.lastIndexOf("/") + 1) };
    const match = /^(\/apis\/[^/]+\/[^/]+|\/api\/v1)\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(
      pathname,
    );
    const [, base, namespace, plural, name] = match ?? [];
    const collection = base === undefined ? undefined : this.#collections.get(`${base}/${plural}`);
    if (!collection || plural === undefined) return undefined;
    return { collection, plural, namespace, ...(name !== undefined && { name }) };
  }

  /** An object as the server sends it: list items of core collections lack kind and apiVersion. */
  #wire(collection: Collection, object: KubeObject, inList = false): KubeObject {
    if (inList && collection.core) return object;
    return { apiVersion: collection.apiVersion, kind: collection.kind, ...object };
  }
}

function keyOf(object: KubeObject): string {
  const metadata = metadataOf(object);
  return `${metadata.namespace ?? ""}/${metadata.name}`;
}

function parseSelector(text: string | null): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(text.split(",").map((term) => term.split("=") as [string, string]));
}

function matches(object: KubeObject, selector: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => metadataOf(object).labels?.[key] === value);
}

function goneStatus(): Record<string, unknown> {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "too old resource version",
    reason: "Expired",
    code: 410,
  };
}

function writeEvent(response: ServerResponse, event: Record<string, unknown>): void {
  response.write(`${JSON.stringify(event)}\n`);
}

function sendStatus(response: ServerResponse, code: number, message: string): void {
  sendJson(response, code, { kind: "Status", apiVersion: "v1", status: "Failure", message, code });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}
