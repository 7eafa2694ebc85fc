/**
 * `webhook --from-cluster -l SEL`: the feed lists and watches only the BareMetalHosts the selector
 * picks, against the fake API server of test/webhook/cluster-feed.test.ts.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../test/harness.ts";
import { FakeApiServer, type KubeObject } from "../test/support/fake-apiserver.ts";
import { ClusterFeed } from "./cluster-feed.ts";
import { jsonLogger } from "./log.ts";
import { WebhookState } from "./state.ts";

const BMHS = "/apis/metal3.io/v1alpha1/baremetalhosts";
const SELECTOR = "vino.airshipit.org/rack=r01";

async function hosts(file: string): Promise<KubeObject[]> {
  const text = await readFile(path.join(REPO, "examples", "site", "inventory", file), "utf8");
  return parseAllDocuments(text)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((value): value is KubeObject => value !== null)
    .flatMap((value) => (Array.isArray(value.items) ? (value.items as KubeObject[]) : [value]));
}

describe("ClusterFeed with hostSelector", () => {
  const apiServer = new FakeApiServer()
    .serve(BMHS, "metal3.io/v1alpha1", "BareMetalHost")
    .serve("/apis/metal3.io/v1alpha1/hardwaredata", "metal3.io/v1alpha1", "HardwareData")
    .serve("/api/v1/secrets", "v1", "Secret")
    .serveCustomResources();
  const state = new WebhookState();
  let feed: ClusterFeed;

  beforeAll(async () => {
    await apiServer.start();
    for (const bmh of [...(await hosts("rack-r01.yaml")), ...(await hosts("rack-r02.yaml"))])
      apiServer.put(BMHS, bmh);
    feed = await ClusterFeed.start({
      kubeConfig: apiServer.kubeConfig(),
      state,
      log: jsonLogger(() => {}),
      watchTimeoutSeconds: 1,
      retryDelayMs: 50,
      rebuildDelayMs: 10,
      hostSelector: SELECTOR,
    });
  });
  afterAll(async () => {
    await feed?.close();
    await apiServer.stop();
  });

  it("lists and watches only the hosts the selector picks", async () => {
    const deadline = Date.now() + 10_000;
    while (!feed.status().ready && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const inventory = state.reviewer()?.snapshot.inventory;
    expect(inventory?.byId("metal3/r01-node-01")).toBeDefined();
    expect(inventory?.byId("metal3/r02-node-01")).toBeUndefined();
    const lines = apiServer.requests.filter((line) => line.startsWith(`GET ${BMHS}?`));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toContain(`labelSelector=${encodeURIComponent(SELECTOR)}`);
  });
});
