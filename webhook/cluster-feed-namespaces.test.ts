/**
 * `--secrets-namespace`: the feed lists and watches networkData Secrets in the given namespaces only,
 * one informer each, never cluster-wide (where RBAC now refuses it), against the fake API server of
 * test/webhook/cluster-feed.test.ts.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../test/harness.ts";
import { FakeApiServer, type KubeObject } from "../test/support/fake-apiserver.ts";
import { ClusterFeed, NETWORK_DATA_LABEL } from "./cluster-feed.ts";
import { jsonLogger } from "./log.ts";
import { WebhookState } from "./state.ts";

const BMHS = "/apis/metal3.io/v1alpha1/baremetalhosts";
const HARDWARE = "/apis/metal3.io/v1alpha1/hardwaredata";
const ALL_SECRETS = "/api/v1/secrets";
const secretsIn = (namespace: string) => `/api/v1/namespaces/${namespace}/secrets`;

async function documents(file: string): Promise<KubeObject[]> {
  const text = await readFile(path.join(REPO, "examples", "site", "inventory", file), "utf8");
  return parseAllDocuments(text)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((value): value is KubeObject => value !== null)
    .flatMap((value) => (Array.isArray(value.items) ? (value.items as KubeObject[]) : [value]));
}

/** Waits until `condition` holds, up to 10 s. */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("ClusterFeed with secretNamespaces", () => {
  const apiServer = new FakeApiServer()
    .serve(BMHS, "metal3.io/v1alpha1", "BareMetalHost")
    .serve(HARDWARE, "metal3.io/v1alpha1", "HardwareData")
    .serve(secretsIn("metal3"), "v1", "Secret")
    .serve(secretsIn("site-b"), "v1", "Secret")
    .serveCustomResources();
  const state = new WebhookState();
  let feed: ClusterFeed;
  const host = (id: string) => state.reviewer()?.snapshot.inventory.byId(id);

  beforeAll(async () => {
    await apiServer.start();
    // What RBAC answers the webhook's ServiceAccount for every namespace's Secrets now.
    apiServer.refuse.set(ALL_SECRETS, 403);
    for (const bmh of await documents("rack-r01.yaml")) apiServer.put(BMHS, bmh);
    for (const secret of await documents("networkdata-secrets.yaml")) {
      const metadata = secret.metadata as Record<string, unknown>;
      apiServer.put(secretsIn("metal3"), {
        ...secret,
        metadata: { ...metadata, namespace: "metal3", labels: { [NETWORK_DATA_LABEL]: "true" } },
      });
    }
    feed = await ClusterFeed.start({
      kubeConfig: apiServer.kubeConfig(),
      state,
      log: jsonLogger(() => {}),
      watchTimeoutSeconds: 1,
      retryDelayMs: 50,
      rebuildDelayMs: 10,
      secretNamespaces: ["metal3", "site-b", "metal3"],
    });
  });
  afterAll(async () => {
    await feed?.close();
    await apiServer.stop();
  });

  it("gets ready reading each namespace's Secrets, never every namespace's", async () => {
    await eventually(() => feed.status().ready, "readiness");
    expect(host("metal3/r01-node-01")?.networks["oam-ipv4"]).toMatch(/^10\.41\.0\.\d+$/);
    const paths = apiServer.requests.map((line) => line.split(" ")[1]?.split("?")[0]);
    expect(paths).not.toContain(ALL_SECRETS);
    for (const namespace of ["metal3", "site-b"]) {
      const lines = apiServer.requests.filter((line) => line.startsWith(`GET ${secretsIn(namespace)}?`));
      expect(lines.length, namespace).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line).toContain(`labelSelector=${encodeURIComponent(`${NETWORK_DATA_LABEL}=true`)}`);
      }
    }
    // One informer per namespace, a namespace given twice watched once.
    expect(feed.status().detail).toMatch(/^cluster: \d+ hosts/);
    const firstLists = apiServer.lists(secretsIn("metal3"));
    expect(firstLists).toBe(1);
  });
});
