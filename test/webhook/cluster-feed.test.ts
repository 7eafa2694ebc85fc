/**
 * `--from-cluster`: the webhook's informers against a fake API server that speaks the list/watch
 * wire format (no real API server is available here), served over TLS like in production.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockFromAllocations } from "../../synth/rules/allocation.ts";
import { KINDS } from "../../synth/schema/kinds.ts";
import { ClusterFeed, NETWORK_DATA_LABEL } from "../../webhook/cluster-feed.ts";
import { jsonLogger } from "../../webhook/log.ts";
import { startWebhook, type RunningWebhook } from "../../webhook/main.ts";
import { HOLD_MS, WebhookState } from "../../webhook/state.ts";
import { allocation } from "../builders/allocations.ts";
import { makeBmh } from "../builders/inventory.ts";
import { REPO } from "../harness.ts";
import { postJson, send, type Target } from "./client.ts";
import { FakeApiServer, type KubeObject } from "../support/fake-apiserver.ts";
import { FAST_WATCH, eventually } from "./harness.ts";
import { admissionReview, provisioning, software, type Cr } from "../builders/reviews.ts";
import { createTestCa, issueServerCertificate } from "./tls-fixture.ts";

const BMHS = "/apis/metal3.io/v1alpha1/baremetalhosts";
const HARDWARE = "/apis/metal3.io/v1alpha1/hardwaredata";
const SECRETS = "/api/v1/secrets";
const crPath = (kind: keyof typeof KINDS) =>
  `/apis/${KINDS[kind].group}/${KINDS[kind].version}/${KINDS[kind].plural}`;

/** Every object of the YAML/JSON files under examples/site/`part`, lists unwrapped. */
async function exampleObjects(...files: string[]): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const file of files) {
    const text = await readFile(path.join(REPO, "examples", "site", file), "utf8");
    for (const document of parseAllDocuments(text)) {
      const value: unknown = document.toJS();
      const items: unknown =
        typeof value === "object" && value !== null ? Reflect.get(value, "items") : undefined;
      objects.push(...((Array.isArray(items) ? items : [value]) as KubeObject[]));
    }
  }
  return objects;
}

describe("the webhook fed by informers (--from-cluster)", () => {
  const apiServer = new FakeApiServer()
    .serve(BMHS, "metal3.io/v1alpha1", "BareMetalHost")
    .serve(HARDWARE, "metal3.io/v1alpha1", "HardwareData")
    .serve(SECRETS, "v1", "Secret")
    .serveCustomResources();
  const lines: string[] = [];
  const state = new WebhookState(Date.now, true);
  let webhook: RunningWebhook;
  let target: Target;

  const readyz = () => send(target, "GET", "/readyz");
  const whenReady = () =>
    eventually(async () => {
      const reply = await readyz();
      return reply.status === 200 ? reply : undefined;
    }, "readiness");
  const host = (id: string) => state.reviewer()?.snapshot.inventory.byId(id);

  beforeAll(async () => {
    await apiServer.start();
    for (const object of await exampleObjects(
      "inventory/rack-r01.yaml",
      "inventory/rack-r02.yaml",
      "inventory/rack-r03.json",
    )) {
      apiServer.put(BMHS, object);
    }
    for (const object of await exampleObjects("inventory/hardwaredata.yaml")) apiServer.put(HARDWARE, object);
    for (const secret of await exampleObjects("inventory/networkdata-secrets.yaml")) {
      const metadata = secret.metadata as Record<string, unknown>;
      const labels = {
        ...(metadata.labels as Record<string, string> | undefined),
        [NETWORK_DATA_LABEL]: "true",
      };
      apiServer.put(SECRETS, { ...secret, metadata: { ...metadata, namespace: "metal3", labels } });
    }
    // A Secret the webhook must never download.
    apiServer.put(SECRETS, {
      metadata: { name: "r01-node-01-bmc-secret", namespace: "metal3" },
      stringData: { username: "root", password: "calvin" },
    });
    for (const cr of await exampleObjects(
      "specs/cluster-east/provisioning.yaml",
      "specs/tenant-a/sipcluster.yaml",
    )) {
      apiServer.put(crPath(cr.kind === "SIPCluster" ? "SIPCluster" : "Provisioning"), cr);
    }
    // The first lists of BareMetalHosts fail: the webhook must not be ready before they succeed.
    apiServer.failLists.set(BMHS, 2);

    const ca = await createTestCa();
    const certificate = await issueServerCertificate(ca, "server");
    const log = jsonLogger((line) => lines.push(line));
    webhook = await startWebhook({
      host: "127.0.0.1",
      port: 0,
      tls: certificate,
      state,
      log,
      drainDelayMs: 0,
      tlsWatch: FAST_WATCH,
    });
    target = { port: webhook.port, ca: ca.cert };
    expect((await readyz()).status).toBe(503);
    await ClusterFeed.start({
      kubeConfig: apiServer.kubeConfig(),
      state,
      log,
      watchTimeoutSeconds: 1,
      retryDelayMs: 50,
      rebuildDelayMs: 10,
    });
  });
  afterAll(async () => {
    await webhook.shutdown();
    await apiServer.stop();
  });

  it("becomes ready only after every resource is listed, and reviews against the cluster's CRs", async () => {
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({
        msg: "watch failed",
        resource: "baremetalhosts",
        problem: "500 etcd is sad",
      }),
    );
    const ready = await whenReady();
    expect(ready.text).toBe("cluster: 24 hosts, 2 known objects, watching\n");

    const cr = provisioning({
      name: "cluster-zulu",
      masters: [["master-1", { "mac-address": "3c:fd:fe:13:f8:b8" }]],
    });
    const { json } = await postJson(target, "/validate/provisioning", admissionReview(cr));
    expect((json as { response: { status: { message: string } } }).response.status.message).toBe(
      "spec.masters[0].master-1.mac-address: host metal3/r01-node-04 (3c:fd:fe:13:f8:b8) is already requested by mac-address for cluster edge-a/cluster-east in Provisioning edge-a/cluster-east; a host belongs to at most one cluster",
    );
  });

  it("never reports a CR known from the cluster as conflicting with its own UPDATE", async () => {
    await whenReady();
    const [east] = (await exampleObjects("specs/cluster-east/provisioning.yaml")) as Cr[];
    if (east === undefined) throw new Error("no cluster-east in the example site");
    const { json } = await postJson(
      target,
      "/validate/provisioning",
      admissionReview(east, { operation: "UPDATE", oldObject: east, uid: "u-east" }),
    );
    expect(json).toMatchObject({ response: { uid: "u-east", allowed: true } });
  });

  it("denies the second of two conflicting CREATEs before the informer delivers the first, and holds it only until then", async () => {
    await whenReady();
    const withMaster = (name: string, mac: string) =>
      provisioning({ name, masters: [["master-1", { "mac-address": mac }]] });
    const decide = async (cr: Cr, options: { uid: string; dryRun?: boolean }) =>
      (
        (await postJson(target, "/validate/provisioning", admissionReview(cr, options))).json as {
          response: { allowed: boolean };
        }
      ).response.allowed;
    const wanted = "3c:fd:fe:ca:f9:a0";
    const first = withMaster("cluster-first", wanted);
    const second = withMaster("cluster-second", wanted);
    // A dry run stores nothing, so it holds nothing either.
    expect(await decide(first, { uid: "u-dry", dryRun: true })).toBe(true);
    expect(await decide(second, { uid: "u-dry-2", dryRun: true })).toBe(true);
    expect(await decide(first, { uid: "u-first" })).toBe(true);
    expect(await decide(second, { uid: "u-second", dryRun: true })).toBe(false);
    // What the API server stores is what counts once the informer delivers it: here another host
    // (as if a later UPDATE changed it), so the wanted one is free again well before the hold expires.
    apiServer.put(crPath("Provisioning"), withMaster("cluster-first", "e4:43:4b:9b:9b:10"));
    await eventually(
      () => decide(second, { uid: "u-second-again", dryRun: true }),
      "the delivered object to replace the held one",
      HOLD_MS / 2,
    );
    apiServer.remove(crPath("Provisioning"), "cluster-first", "edge-a");
  });

  it("does not tell a Software its Provisioning is missing when the cluster's Provisioning fails its schema", async () => {
    await whenReady();
    const typo = provisioning({
      name: "cluster-north",
      masters: [["master-1", { "mac-adress": "3c:fd:fe:ca:f9:a0" }]],
    });
    apiServer.put(crPath("Provisioning"), typo);
    await eventually(
      () => state.reviewer()?.snapshot.invalid.some((known) => known.name === "cluster-north"),
      "the invalid Provisioning to be listed",
    );
    const { json } = await postJson(
      target,
      "/validate/software",
      admissionReview(software({ cluster: "cluster-north" }), { uid: "u-sw" }),
    );
    expect(json).toMatchObject({ response: { uid: "u-sw", allowed: true } });
    apiServer.remove(crPath("Provisioning"), "cluster-north", "edge-a");
    await eventually(
      () => state.reviewer()?.snapshot.invalid.length === 0,
      "the invalid Provisioning to be gone",
    );
  });

  it("reads hardware from HardwareData and addresses from labelled networkData Secrets only", async () => {
    await whenReady();
    expect(host("metal3/r01-node-08")?.cpus).toBe(32); // from HardwareData
    expect(host("metal3/r01-node-01")?.networks["oam-ipv4"]).toMatch(/^10\.41\.0\.\d+$/);
    const secretRequests = apiServer.requests.filter((line) => line.startsWith(`GET ${SECRETS}`));
    expect(secretRequests.length).toBeGreaterThan(0);
    for (const line of secretRequests) {
      expect(line).toContain(`labelSelector=${encodeURIComponent(`${NETWORK_DATA_LABEL}=true`)}`);
    }
  });

  it("follows watch events: hosts added, changed and deleted", async () => {
    apiServer.put(BMHS, makeBmh({ name: "r04-node-01", cpus: 8 }));
    await eventually(() => host("metal3/r04-node-01")?.cpus === 8, "the added host");
    apiServer.put(BMHS, makeBmh({ name: "r04-node-01", cpus: 128 }));
    await eventually(() => host("metal3/r04-node-01")?.cpus === 128, "the changed host");
    apiServer.remove(BMHS, "r04-node-01", "metal3");
    await eventually(
      () => state.reviewer() !== undefined && host("metal3/r04-node-01") === undefined,
      "the deletion",
    );
  });

  it("sets aside a host with a bad address in the reviews' inventory (issue #21, decision 0031)", async () => {
    const nics = [{ name: "enp1s0", mac: "52:54:00:06:00:01", ip: "10.0.0.1 extra" }];
    apiServer.put(BMHS, makeBmh({ name: "r06-node-01", bootMac: "52:54:00:06:00:01", nics }));
    const aside = () => state.reviewer()?.snapshot.inventory.setAsideByMac("52:54:00:06:00:01");
    await eventually(() => aside() !== undefined, "the set-aside host");
    expect(aside()).toMatchObject({ id: "metal3/r06-node-01", rule: "address-invalid" });
    expect(host("metal3/r06-node-01")).toBeUndefined();
    apiServer.remove(BMHS, "r06-node-01", "metal3");
    await eventually(() => state.reviewer() !== undefined && aside() === undefined, "the deletion");
  });

  it("keeps what it knows of a host over a BMH event that changes none of its facts", async () => {
    const [bmh] = await exampleObjects("inventory/rack-r01.yaml");
    if (bmh === undefined) throw new Error("no BMH in rack-r01.yaml");
    const before = host("metal3/r01-node-01");
    expect(before).toBeDefined();
    // A status refresh: only fields metalsynth does not read.
    const status = {
      ...(bmh.status as Record<string, unknown>),
      errorCount: 0,
      lastUpdated: "2026-11-24T05:00:00Z",
    };
    apiServer.put(BMHS, { ...bmh, status });
    // Events of one resource arrive in order: once the host added after it is in, the refresh was seen.
    apiServer.put(BMHS, makeBmh({ name: "r05-node-01", cpus: 8 }));
    await eventually(() => host("metal3/r05-node-01") !== undefined, "the host added after the refresh");
    expect(host("metal3/r01-node-01")).toBe(before);
    apiServer.remove(BMHS, "r05-node-01", "metal3");
  });

  it("watches again after a watch connection drops", async () => {
    apiServer.dropWatches();
    apiServer.put(BMHS, makeBmh({ name: "r04-node-02" }));
    await eventually(() => host("metal3/r04-node-02"), "the host added after the drop");
    await whenReady();
  });

  it("lists again after 410 Gone, catching changes the watch never saw", async () => {
    const listsBefore = apiServer.lists(BMHS);
    apiServer.removeUnseen(BMHS, "r04-node-02", "metal3");
    apiServer.expireWatches();
    await eventually(
      () => state.reviewer() !== undefined && host("metal3/r04-node-02") === undefined,
      "the re-list",
    );
    expect(apiServer.lists(BMHS)).toBeGreaterThan(listsBefore);
    expect((await readyz()).status).toBe(200);
  });

  it("reports a stale watch as not ready, and recovers with fresh informers", async () => {
    apiServer.hangWatches = true;
    apiServer.dropWatches();
    const stale = await eventually(async () => {
      const reply = await readyz();
      return reply.text.includes("stale watch") ? reply : undefined;
    }, "a stale watch to be reported");
    expect(stale.status).toBe(503);
    expect(stale.text).toMatch(
      /^cluster: (.*; )?[a-z]+: nothing from the API server for \d+s \(stale watch\)/,
    );
    apiServer.hangWatches = false;
    await whenReady();
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ msg: "watch stale; listing again" }),
    );
    expect(host("metal3/r01-node-01")).toBeDefined();
  });
});

describe("the webhook fed by informers with Git's Allocations (decision 0041)", () => {
  const ALLOCATIONS = "/apis/metalsynth.io/v1alpha1/allocations";
  const apiServer = new FakeApiServer()
    .serve(BMHS, "metal3.io/v1alpha1", "BareMetalHost")
    .serve(HARDWARE, "metal3.io/v1alpha1", "HardwareData")
    .serve(SECRETS, "v1", "Secret")
    .serve(ALLOCATIONS, "metalsynth.io/v1alpha1", "Allocation")
    .serveCustomResources();
  const state = new WebhookState(Date.now, true);
  let feed: ClusterFeed;
  /** A cluster whose master is chosen by resources; Git's lock gave it r01-node-07. */
  const byResources = provisioning({ name: "cluster-res", masters: [["master-1", { cpu: 1 }]] });
  const held = allocation("edge-a", "cluster-res", "bpa", [
    { host: "metal3/r01-node-07", role: "master", node: "master-1" },
  ]);
  /** Names r01-node-07 by its MAC. */
  const wantsHeld = provisioning({
    name: "cluster-new",
    masters: [["master-1", { "mac-address": "e4:43:4b:6c:73:80" }]],
  });
  /** Names r01-node-08, which nothing holds. */
  const fine = provisioning({
    name: "cluster-fine",
    masters: [["master-1", { "mac-address": "e4:43:4b:b2:53:bc" }]],
  });
  const errors = (cr: Cr) =>
    state
      .reviewer()
      ?.review(cr)
      .filter((found) => found.severity === "error")
      .map((found) => found.rule);

  beforeAll(async () => {
    await apiServer.start();
    for (const object of await exampleObjects(
      "inventory/rack-r01.yaml",
      "inventory/rack-r02.yaml",
      "inventory/rack-r03.json",
    ))
      apiServer.put(BMHS, object);
    for (const object of await exampleObjects("inventory/hardwaredata.yaml")) apiServer.put(HARDWARE, object);
    for (const secret of await exampleObjects("inventory/networkdata-secrets.yaml")) {
      const metadata = secret.metadata as Record<string, unknown>;
      const labels = { [NETWORK_DATA_LABEL]: "true" };
      apiServer.put(SECRETS, { ...secret, metadata: { ...metadata, namespace: "metal3", labels } });
    }
    apiServer.put(crPath("Provisioning"), byResources);
    apiServer.put(ALLOCATIONS, held);
    feed = await ClusterFeed.start({
      kubeConfig: apiServer.kubeConfig(),
      state,
      log: jsonLogger(() => {}),
      allocations: lockFromAllocations,
      watchTimeoutSeconds: 1,
      retryDelayMs: 50,
      rebuildDelayMs: 10,
    });
    await eventually(() => feed.status().ready, "the feed to be ready");
  });
  afterAll(async () => {
    await feed.close();
    await apiServer.stop();
  });

  it("reviews with the lock the Allocations make: a host Git gave to a cluster chosen by resources is refused", () => {
    expect(feed.status().detail).toMatch(/, 1 allocations, watching$/);
    expect(errors(wantsHeld)).toEqual(["host-claimed"]);
    expect(errors(fine)).toEqual([]);
  });

  it("confines a damaged Allocation to its cluster and hosts, saying why, and recovers when it is restored", async () => {
    const damaged = { ...held, spec: { ...held.spec, hosts: [{ ...held.spec.hosts[0], role: "boss" }] } };
    apiServer.put(ALLOCATIONS, damaged);
    /** Another CR of the damaged cluster. */
    const sameCluster = provisioning({
      name: "cluster-res",
      masters: [["master-1", { cpu: 2 }]],
    });
    await eventually(() => errors(sameCluster)?.includes("lock-invalid"), "the damaged Allocation");
    expect(state.reviewer()?.review(sameCluster)[0]?.text).toMatch(
      /^the Allocation of cluster edge-a\/cluster-res is damaged: .*"boss" is not a BPA role/,
    );
    // The host it names is given to no one else, and the refusal says which Allocation.
    expect(errors(wantsHeld)).toEqual(["host-unavailable"]);
    expect(JSON.stringify(state.reviewer()?.review(wantsHeld))).toContain(
      "named by Allocation edge-a/cluster-res, which is damaged",
    );
    // Other clusters, other hosts: reviewed as ever.
    expect(errors(fine)).toEqual([]);
    expect(feed.status()).toMatchObject({
      ready: true,
      detail: expect.stringMatching(/damaged: Allocation edge-a\/cluster-res, .*1 hosts contested/),
    });
    apiServer.put(ALLOCATIONS, held);
    await eventually(() => errors(sameCluster)?.length === 0, "the restored Allocation");
    expect(errors(wantsHeld)).toEqual(["host-claimed"]);
  });

  it("forgets the entries of an Allocation deleted from the cluster", async () => {
    apiServer.remove(ALLOCATIONS, "cluster-res", "edge-a");
    await eventually(() => errors(wantsHeld)?.length === 0, "the deletion");
    expect(feed.status().detail).toMatch(/, 0 allocations, watching$/);
  });
});
