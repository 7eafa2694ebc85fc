/**
 * Replays list responses recorded from a real API server (test/fixtures/inventory-pull/, recorded by
 * test/e2e/inventory-pull.test.ts) over HTTP, so the Kubernetes client code of `inventory pull` runs
 * for real in the unit tests. From each recorded namespaced list it answers what the API server would:
 *
 * - `GET <collection>` cluster-wide (`/apis/<group>/<version>/<plural>`) or namespaced, with equality
 *   `labelSelector`s and `limit`/`continue` paging;
 * - `GET <collection>/<name>`: the object, with the `kind` and `apiVersion` list items of core
 *   collections leave out; a 404 Status for a name the recording lacks.
 *
 * Tests can change the recorded objects, refuse paths with a status code, and read every request.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";

/** A recorded object. */
export type RecordedObject = Record<string, unknown> & {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

/** A recorded list response, as the API server sent it. */
interface RecordedList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly items: RecordedObject[];
}

interface Collection {
  /** `/apis/metal3.io/v1alpha1` or `/api/v1`. */
  readonly base: string;
  readonly plural: string;
  readonly list: RecordedList;
}

/** The replaying server. */
export class RecordedApiServer {
  readonly #server: Server;
  readonly #collections: Collection[] = [];
  /** Every request, as `GET path?query`. */
  readonly requests: string[] = [];
  /** Paths (without query) answered with this status code and a Status body instead. */
  readonly refuse = new Map<string, number>();

  /** @param recorded API path of a namespaced list → the list response recorded there */
  constructor(recorded: Readonly<Record<string, unknown>>) {
    for (const [apiPath, list] of Object.entries(recorded)) {
      const match = /^(\/apis\/[^/]+\/[^/]+|\/api\/v1)\/namespaces\/[^/]+\/([^/]+)$/.exec(apiPath);
      if (!match?.[1] || !match[2]) throw new Error(`recorded path ${apiPath} is not a namespaced list`);
      this.#collections.push({
        base: match[1],
        plural: match[2],
        list: structuredClone(list) as RecordedList,
      });
    }
    this.#server = createServer((request, response) => this.#handle(request, response));
  }

  /** The recorded objects of `plural` (a live view: changes show in later answers). */
  objects(plural: string): RecordedObject[] {
    const collection = this.#collections.find((candidate) => candidate.plural === plural);
    if (!collection) throw new Error(`nothing recorded for ${plural}`);
    return collection.list.items;
  }

  /** Starts listening on 127.0.0.1. */
  async start(): Promise<void> {
    this.#server.listen(0, "127.0.0.1");
    await once(this.#server, "listening");
  }

  /** A KubeConfig pointing at this server. */
  kubeConfig(): KubeConfig {
    const config = new KubeConfig();
    const { port } = this.#server.address() as AddressInfo;
    config.loadFromOptions({
      clusters: [{ name: "recorded", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: "test", token: "test-token" }],
      contexts: [{ name: "recorded", cluster: "recorded", user: "test" }],
      currentContext: "recorded",
    });
    return config;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, "close");
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? "/", "http://recorded");
    this.requests.push(`${request.method} ${url.pathname}${url.search}`);
    const refused = this.refuse.get(url.pathname);
    if (refused !== undefined) return status(response, refused, `refused by the test (${refused})`);
    for (const collection of this.#collections) {
      const rest = url.pathname.startsWith(`${collection.base}/`)
        ? url.pathname.slice(collection.base.length + 1).split("/")
        : [];
      // <plural> | namespaces/<ns>/<plural> | namespaces/<ns>/<plural>/<name>
      const [first, namespace, plural, name, ...extra] = rest;
      if (request.method !== "GET" || extra.length > 0) continue;
      if (rest.length === 1 && first === collection.plural) return this.#list(response, collection, url);
      if (first !== "namespaces" || plural !== collection.plural || namespace === undefined) continue;
      if (name === undefined) return this.#list(response, collection, url, namespace);
      const found = collection.list.items.find(
        (item) => item.metadata.name === name && item.metadata.namespace === namespace,
      );
      if (!found) return status(response, 404, `${collection.plural} "${name}" not found`);
      const kind = collection.list.kind.replace(/List$/, "");
      return send(response, 200, { kind, apiVersion: collection.list.apiVersion, ...found });
    }
    status(response, 404, "the server could not find the requested resource");
  }

  #list(response: ServerResponse, collection: Collection, url: URL, namespace?: string): void {
    const selector = [...(url.searchParams.get("labelSelector") ?? "").split(",")]
      .filter((term) => term !== "")
      .map((term) => term.split("=") as [string, string]);
    const items = collection.list.items.filter(
      (item) =>
        (namespace === undefined || item.metadata.namespace === namespace) &&
        selector.every(([key, value]) => item.metadata.labels?.[key] === value),
    );
    const from = Number(url.searchParams.get("continue") || "0");
    const limit = Number(url.searchParams.get("limit") || String(items.length));
    const page = items.slice(from, from + limit);
    const next = from + limit < items.length ? String(from + limit) : undefined;
    send(response, 200, {
      apiVersion: collection.list.apiVersion,
      kind: collection.list.kind,
      metadata: { resourceVersion: "1", ...(next !== undefined && { continue: next }) },
      items: page,
    });
  }
}

function status(response: ServerResponse, code: number, message: string): void {
  send(response, code, { kind: "Status", apiVersion: "v1", status: "Failure", message, code });
}

function send(response: ServerResponse, code: number, body: unknown): void {
  response.writeHead(code, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}
