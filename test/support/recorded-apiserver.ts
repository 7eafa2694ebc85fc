/**
 * Replays list responses recorded from a real API server (test/fixtures/inventory-pull/, recorded by
 * test/e2e/inventory-pull.test.ts) from a {@link FakeApiServer}, so the Kubernetes client code of
 * `inventory pull` runs for real in the unit tests: cluster-wide and namespaced lists with equality
 * `labelSelector`s and paging, and objects by name.
 */
import { FakeApiServer } from "./fake-apiserver.ts";

/** A recorded list response, as the API server sent it. */
interface RecordedList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly items: Record<string, unknown>[];
}

/**
 * A server holding the recorded objects.
 * @param recorded API path of a namespaced list → the list response recorded there
 */
export function replayRecorded(recorded: Readonly<Record<string, unknown>>): FakeApiServer {
  const server = new FakeApiServer();
  const served = new Set<string>();
  for (const [apiPath, value] of Object.entries(recorded)) {
    const match = /^(\/apis\/[^/]+\/[^/]+|\/api\/v1)\/namespaces\/[^/]+\/([^/]+)$/.exec(apiPath);
    if (!match?.[1] || !match[2]) throw new Error(`recorded path ${apiPath} is not a namespaced list`);
    const list = structuredClone(value) as RecordedList;
    const path = `${match[1]}/${match[2]}`;
    if (!served.has(path)) server.serve(path, list.apiVersion, list.kind.replace(/List$/, ""));
    served.add(path);
    for (const item of list.items) server.put(path, item);
  }
  return server;
}
