/**
 * Issue #36 on a real API server (decision 0056): admission that holds under faults. A site of
 * 2,000 generated BareMetalHosts; the webhook `--from-cluster` as its ServiceAccount with the
 * Deployment's arguments, registered by the chart's webhook configuration, its API traffic through
 * a proxy the test controls (test/e2e/support/api-proxy.ts).
 *
 * - **Bounded reviews**: the API server refuses a CR over the CRDs' bounds (a Provisioning's workers,
 *   a tenant identity provider's clients) before any webhook; a CR within them whose review runs
 *   past the budget is refused, while other requests and the probes are answered meanwhile.
 * - **Ready means current**: the webhook's watch resumes after a partition and an API server
 *   restart at a place the API server no longer has (410 Gone); from the moment it lists again
 *   until the list is in, `/readyz` fails and no request is reviewed against what it held.
 * - **The webhook guards its own truth**: Allocations reviewed at the door, trusted only from the
 *   declared namespaces and managers; damage that got in anyway refuses only what it touches, and
 *   says so; a host two Allocations list in the order of a sync is no damage.
 * - **Replicas agree**: two webhook processes behind a balancer that alternates requests never both admit two
 *   conflicting CREATEs, sent together or 50 or 100 ms apart.
 * - **Sized honestly**: the webhook with the 2,000 hosts stays within the Deployment's request.
 *
 * No assertion here is about time: what one request waits for another is told by the order of the
 * answers, and timings are `npm run bench`'s.
 */
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ApiException,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { generateBmhs, type RawObject } from "../builders/inventory.ts";
import { createTestCa, issueServerCertificate, type TestCa } from "../webhook/tls-fixture.ts";
import { startApiProxy, type ApiProxy } from "./support/api-proxy.ts";
import { startBalancer, type Balancer } from "./support/balancer.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  eventually,
  installCrds,
  kubectlFor,
  must,
  type KubeObject,
  type Kubectl,
} from "./support/kube.ts";
import {
  deployObjects,
  installWebhookRbac,
  loadInventory,
  registerWebhook,
  startWebhook,
  WEBHOOK_USER,
  type RunningWebhook,
} from "./support/webhook.ts";

const HOSTS = 2000;
/** A list (no watch) of the BareMetalHosts, as the proxy forwards it. */
const HOST_LIST = /^GET \/apis\/metal3\.io\/v1alpha1\/baremetalhosts(\?(?!.*watch=)|$)/;
/** Where the CRs go; the site declares its Allocations there. */
const NAMESPACE = "edge-a";

/** A Provisioning with one master by MAC. */
function byMac(name: string, mac: string): RawObject {
  return {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: { name, namespace: NAMESPACE, labels: { cluster: name } },
    spec: { masters: [{ "master-1": { "mac-address": mac } }] },
  };
}

/** A Provisioning of `workers` workers by resources, worker `index` asking `ask(index)`. */
function manyWorkers(name: string, workers: number, ask: (index: number) => object): RawObject {
  return {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: { name, namespace: NAMESPACE, labels: { cluster: name } },
    spec: {
      masters: [{ "master-1": { cpu: 8 } }],
      workers: Array.from({ length: workers }, (_, index) => ({ [`worker-${index}`]: ask(index) })),
    },
  };
}

/** An Allocation of cluster `namespace/name`, as synth renders it. */
function allocation(namespace: string, name: string, hosts: { host: string; role: string; node: string }[]) {
  return {
    apiVersion: "metalsynth.io/v1alpha1",
    kind: "Allocation",
    metadata: { name, namespace, labels: { "app.kubernetes.io/managed-by": "metalsynth" } },
    spec: { kind: "bpa", hosts },
  };
}

/**
 * Compacts etcd's history up to now, as the API server does every five minutes and `etcdctl
 * compact` does at once (through etcd's JSON gateway: no etcdctl here).
 */
async function compactEtcd(plane: ControlPlane): Promise<void> {
  const call = async (endpoint: string, body: unknown): Promise<unknown> => {
    const response = await fetch(`${plane.etcdUrl}/v3/${endpoint}`, {
      method: "POST",
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`etcd ${endpoint}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const range = (await call("kv/range", { key: Buffer.from("/").toString("base64") })) as {
    header: { revision: string };
  };
  await call("kv/compaction", { revision: range.header.revision, physical: true });
}

/** What a create through the API server came to: admitted, or the message of its refusal. */
type Answer = { readonly admitted: true } | { readonly admitted: false; readonly message: string };

/** The admission log lines of `webhook` for objects named `name`. */
function admissions(webhook: RunningWebhook, name: string): Record<string, unknown>[] {
  return webhook
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === "admission" && line.name === name);
}

describe("admission under faults, on a real API server (issue #36)", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let client: KubernetesObjectApi;
  let ca: TestCa;
  let tls: { ca: TestCa; certFile: string; keyFile: string };
  let proxy: ApiProxy;
  let webhook: RunningWebhook;
  /** Boot MACs of installed hosts no SIP cluster owns, by BareMetalHost name. */
  const free = new Map<string, string>();
  const nextFree = (): [string, string] => {
    const [entry] = free;
    if (entry === undefined) throw new Error("no free host left");
    free.delete(entry[0]);
    return entry;
  };

  /** Creates `object` through the API server (a dry run when `dryRun`). */
  async function create(object: RawObject, dryRun = false): Promise<Answer> {
    try {
      await client.create(object as KubernetesObject, undefined, dryRun ? "All" : undefined);
      return { admitted: true };
    } catch (error) {
      if (!(error instanceof ApiException)) throw error;
      const body = typeof error.body === "string" ? (JSON.parse(error.body) as { message?: string }) : {};
      return { admitted: false, message: body.message ?? String(error.code) };
    }
  }

  beforeAll(async () => {
    plane = await startControlPlane(inject("e2eBinDir"), { users: [WEBHOOK_USER] });
    kubectl = kubectlFor(plane.kubeconfig);
    const config = new KubeConfig();
    config.loadFromFile(plane.kubeconfig);
    client = KubernetesObjectApi.makeApiClient(config);
    await installCrds(kubectl);
    await installWebhookRbac(kubectl);
    await ensureNamespaces(kubectl, ["metal3", NAMESPACE, "elsewhere"]);
    const inventory = [...generateBmhs(HOSTS, { seed: 36, namespace: "metal3" })] as KubeObject[];
    for (const object of inventory) {
      const status = object.status as { provisioning?: { state?: string }; hardware?: unknown } | undefined;
      const sip = Object.keys(object.metadata.labels ?? {}).some((label) =>
        label.startsWith("sip.airshipit.org"),
      );
      if (
        object.kind === "BareMetalHost" &&
        status?.hardware &&
        status.provisioning?.state === "provisioned" &&
        !sip
      )
        free.set(object.metadata.name, (object.spec as { bootMACAddress: string }).bootMACAddress);
    }
    await loadInventory(kubectl, inventory);
    ca = await createTestCa();
    tls = { ca, ...(await issueServerCertificate(ca, "webhook", ["127.0.0.1"])) };
    proxy = await startApiProxy(plane, plane.kubeconfigFor(WEBHOOK_USER), ca);
    // A budget well above a normal review, and far below the costly one's: 1,000 walks of the
    // 2,000 hosts, about 4 s on a quiet machine.
    webhook = await startWebhook(plane, ["--allocation-namespace", NAMESPACE, "--review-budget", "0.5"], {
      kubeconfig: proxy.kubeconfig,
      tls,
    });
    await registerWebhook(kubectl, webhook);
  }, 600_000);
  afterAll(async () => {
    await webhook?.stop();
    await proxy?.stop();
    await plane?.stop();
  });

  describe("bounded reviews", () => {
    it("the API server refuses a Provisioning of 20,000 workers by the CRD's bounds, before any webhook", async () => {
      const huge = manyWorkers("huge", 20_000, () => ({ cpu: 16, memory: "64Gi" }));
      expect(JSON.stringify(huge).length).toBeGreaterThan(800 * 1024);
      const answer = await create(huge);
      expect(answer).toEqual({
        admitted: false,
        message: expect.stringMatching(/spec\.workers: Too many: 20000: must have at most 1000 items/),
      });
      expect(admissions(webhook, "huge")).toEqual([]);
    });

    it("the API server refuses a SIPCluster whose identity provider has 65 clients by the CRD's bounds, before any webhook", async () => {
      const clients = Array.from({ length: 65 }, (_, index) => ({
        id: `client-${index}`,
        redirectURIs: ["http://localhost:8000"],
      }));
      const answer = await create({
        apiVersion: "airship.airshipit.org/v1",
        kind: "SIPCluster",
        metadata: { name: "many-clients", namespace: NAMESPACE },
        spec: { nodes: {}, services: { auth: [{ nodePort: 30556, clients }] } },
      });
      expect(answer).toEqual({
        admitted: false,
        message: expect.stringMatching(
          /spec\.services\.auth\[0\]\.clients: Too many: 65: must have at most 64 items/,
        ),
      });
      expect(admissions(webhook, "many-clients")).toEqual([]);
    });

    it("refuses a review that runs past its budget, answering other requests and the probes meanwhile", async () => {
      // Within the bounds, but no host fits any worker: each asks a disk of a different size that no
      // host has, so each is explained host by host (workers that ask alike are judged once), and a
      // host is refused only by the disk filter, after its CPUs and memory passed.
      let costlyDone = false;
      const costly = create(
        manyWorkers("costly", 1000, (index) => ({
          cpu: 1,
          memory: "1Gi",
          hardware: { disk: { minSizeGibibytes: 100_000 + index } },
        })),
      ).finally(() => (costlyDone = true));
      const meanwhile: string[] = [];
      for (let round = 0; !costlyDone && round < 200; round++) {
        const [healthz, readyz] = [await webhook.probe("/healthz"), await webhook.probe("/readyz")];
        const [name, mac] = [`meanwhile-${round}`, [...free.values()][round % free.size] ?? ""];
        const answer = await create(byMac(name, mac), true);
        if (!costlyDone) meanwhile.push(`${healthz} ${readyz} ${answer.admitted}`);
      }
      const answer = await costly;
      expect(answer).toEqual({
        admitted: false,
        message: expect.stringContaining(
          'admission webhook "provisioning.metalsynth.io" denied the request: metalsynth stopped reviewing this Provisioning after 0.5 s, its review budget',
        ),
      });
      // The webhook logs a decision as it answers: the line may reach this process after the answer.
      await eventually(
        async () => admissions(webhook, "costly").length > 0,
        10_000,
        "the costly request logged",
      );
      expect(admissions(webhook, "costly").at(-1)).toMatchObject({
        result: "denied",
        rules: ["review-budget"],
      });
      // While it ran, other requests were reviewed and the probes answered.
      expect(meanwhile.length).toBeGreaterThan(2);
      expect(new Set(meanwhile)).toEqual(new Set(["200 200 true"]));
      // Its worker was replaced; the webhook stays ready.
      await eventually(async () => (await webhook.probe("/readyz")) === 200, 60_000, "ready");
    });
  });

  describe("ready means current", () => {
    it("fails /readyz and reviews nothing from the moment a 410 makes it list again until the list is in", async () => {
      const [host, mac] = nextFree();
      const wanted = byMac("wants-deleted", mac);
      expect(await create(wanted, true)).toEqual({ admitted: true });

      // The webhook hears nothing; the host is deleted; the API server restarts, and its watch
      // cache starts after the deletion: the webhook's place in the history is gone.
      proxy.partition();
      await must(kubectl, ["delete", "baremetalhost", host, "-n", "metal3"]);
      await compactEtcd(plane);
      await plane.restartApiServer();
      proxy.holdLists("/baremetalhosts");
      const hostLists = () => proxy.requests.filter((line) => HOST_LIST.test(line)).length;
      const listedBefore = hostLists();
      proxy.heal();
      await eventually(
        async () => hostLists() > listedBefore,
        60_000,
        "the webhook to list the hosts again",
      ).catch((error: unknown) => {
        console.log(proxy.requests.slice(-30).join("\n"), webhook.output().split("\n").slice(-30).join("\n"));
        throw error;
      });
      // The API server said 410 Gone to the resumed watch: the list is the informer's own relist.
      expect(proxy.gone.some((url) => url.includes("/baremetalhosts"))).toBe(true);
      expect(await webhook.probe("/readyz")).toBe(503);
      // Requests meanwhile are not reviewed against the hosts it held, the deleted one among them.
      const during = await create({
        ...wanted,
        metadata: { ...(wanted.metadata as object), name: "during-relist" },
      });
      expect(during).toEqual({
        admitted: false,
        message: expect.stringMatching(
          /metalsynth is not current with what it watches \(.*baremetalhosts: listing again/,
        ),
      });
      expect(await webhook.probe("/readyz")).toBe(503);

      proxy.release();
      await eventually(async () => (await webhook.probe("/readyz")) === 200, 60_000, "ready again");
      const after = await create(wanted);
      expect(after).toEqual({
        admitted: false,
        message: expect.stringContaining(`${mac} matches no BareMetalHost`),
      });
      expect(webhook.output()).toMatch(/"msg":"listing again","resource":"baremetalhosts"/);
      expect(webhook.output()).toMatch(/"msg":"listed again","resource":"baremetalhosts"/);
    }, 300_000);
  });

  describe("the webhook guards its own truth", () => {
    /** SSA as Flux's kustomize-controller: a manager the site trusts by default. */
    const applyAsFlux = (object: unknown) =>
      kubectl(
        ["apply", "--server-side", "--field-manager=kustomize-controller", "--force-conflicts", "-f", "-"],
        stringify(object),
      );
    /** Three free hosts: `[name, boot MAC]`. */
    let first: [string, string] = ["", ""];
    let second: [string, string] = ["", ""];
    let third: [string, string] = ["", ""];
    beforeAll(async () => {
      first = nextFree();
      second = nextFree();
      third = nextFree();
      // Cluster site-a, as Git has it: its CR (a master by resources), and its Allocation (below)
      // giving it the first host.
      const bySize = { ...byMac("site-a", ""), spec: { masters: [{ "master-1": { cpu: 8 } }] } };
      expect(await create(bySize)).toEqual({ admitted: true });
    });
    const entry = (host: string, node = "master-1") => ({ host: `metal3/${host}`, role: "master", node });

    it("refuses an Allocation from an undeclared namespace, or whose spec a stranger wrote, or that is damaged", async () => {
      const outside = await applyAsFlux(allocation("elsewhere", "site-a", [entry(second[0])]));
      expect(outside.code).toBe(1);
      expect(outside.stderr).toContain(
        'admission webhook "allocation.metalsynth.io" denied the request: Allocation elsewhere/site-a is not the site\'s: it is in namespace "elsewhere", and the site\'s Allocations are in edge-a only',
      );

      const site = await applyAsFlux(allocation(NAMESPACE, "site-a", [entry(first[0])]));
      expect(site.code, site.stderr).toBe(0);
      const patched = await kubectl([
        "patch",
        "allocation",
        "site-a",
        "-n",
        NAMESPACE,
        "--type=json",
        "-p",
        JSON.stringify([{ op: "add", path: "/spec/hosts/-", value: entry(second[0], "master-2") }]),
      ]);
      expect(patched.code).toBe(1);
      expect(patched.stderr).toContain(
        'its spec was written by "kubectl-patch", not by the managers that apply Git',
      );

      // Damaged as a GitOps agent would apply it: refused with the finding the webhook logs.
      const typo = await applyAsFlux(
        allocation(NAMESPACE, "site-a", [{ ...entry(first[0]), role: "mastr" }]),
      );
      expect(typo.code).toBe(1);
      expect(typo.stderr).toMatch(
        /denied the request: error\[lock-invalid\] Allocation\/edge-a\/site-a\.spec\.hosts\[0\]\.role: .*mastr/,
      );
      // None of them got in: site-a holds the first host only.
      expect(await create(byMac("wants-first", first[1]), true)).toEqual({
        admitted: false,
        message: expect.stringContaining("edge-a/site-a"),
      });
      expect(await create(byMac("wants-second", second[1]), true)).toEqual({ admitted: true });
    });

    it("confines damage that got in anyway to the clusters and hosts it touches, naming it, and says so", async () => {
      // Written while the webhook configuration was away (an outage, a careless maintenance).
      await must(kubectl, ["delete", "validatingwebhookconfiguration", "metalsynth-webhook"]);
      await must(
        kubectl,
        ["create", "-f", "-"],
        stringify(allocation(NAMESPACE, "rogue", [entry(second[0])])),
      );
      await registerWebhook(kubectl, webhook);
      await eventually(
        async () => (await webhook.probeText("/readyz")).includes("damaged: Allocation edge-a/rogue"),
        30_000,
        "/readyz to say the truth is damaged",
      );
      // Ready all the same: with no endpoint every CR of the site would be refused.
      expect(await webhook.probe("/readyz")).toBe(200);
      const metrics = await webhook.probeText("/metrics");
      expect(metrics).toMatch(/^metalsynth_webhook_allocations_damaged 1$/m);
      expect(metrics).toMatch(/^metalsynth_webhook_hosts_contested 1$/m);

      // The damaged cluster's CRs are refused, naming the Allocation and why.
      expect(await create(byMac("rogue", third[1]), true)).toEqual({
        admitted: false,
        message: expect.stringMatching(
          /the Allocation of cluster edge-a\/rogue is damaged: Allocation edge-a\/rogue .*not trusted: its spec was written by "kubectl-create"/,
        ),
      });
      // The host it names is no one's, and the refusal names the Allocation.
      expect(await create(byMac("wants-second", second[1]), true)).toEqual({
        admitted: false,
        message: expect.stringContaining("named by Allocation edge-a/rogue, which is damaged"),
      });
      // Everything else goes on: other clusters, other hosts.
      expect(await create(byMac("elsewhere-ok", third[1]), true)).toEqual({ admitted: true });

      await must(kubectl, ["delete", "allocation", "rogue", "-n", NAMESPACE]);
      await eventually(
        async () => (await create(byMac("wants-second", second[1]), true)).admitted,
        30_000,
        "the host back once the damage is gone",
      );
      expect(await webhook.probeText("/readyz")).not.toContain("damaged");
    });

    it("holds a host two Allocations list while a change syncs, without calling it damage", async () => {
      // Pull request 1 moves site-a to the third host, pull request 2 gives the first to site-b,
      // and site-b's directory syncs first.
      const taken = await applyAsFlux(allocation(NAMESPACE, "site-b", [entry(first[0])]));
      expect(taken.code, taken.stderr).toBe(0);
      expect(taken.stderr).toContain(`metal3/${first[0]} is also allocated by Allocation edge-a/site-a`);
      await eventually(
        async () => (await webhook.probeText("/readyz")).includes("1 in transit between two Allocations"),
        30_000,
        "the host in transit",
      );
      expect(await webhook.probeText("/readyz")).not.toContain("damaged: Allocation");
      expect(await create(byMac("third-party", first[1]), true)).toEqual({
        admitted: false,
        message: expect.stringContaining("in transit until one of them no longer lists it"),
      });
      // Site-a's directory syncs (its Allocation moves it to the third host): the first is site-b's.
      const moved = await applyAsFlux(allocation(NAMESPACE, "site-a", [entry(third[0])]));
      expect(moved.code, moved.stderr).toBe(0);
      await eventually(
        async () => (await create(byMac("site-b", first[1]))).admitted,
        30_000,
        "site-b's CR to get its host",
      );
      expect(await create(byMac("third-party", first[1]), true)).toMatchObject({ admitted: false });
      expect(await webhook.probeText("/readyz")).not.toContain("contested");
    });
  });

  describe("replicas agree", () => {
    let other: RunningWebhook;
    let balancer: Balancer;
    beforeAll(async () => {
      other = await startWebhook(plane, ["--allocation-namespace", NAMESPACE], { tls });
      balancer = await startBalancer([webhook.port, other.port], { ...tls, caFile: tls.ca.certFile });
      await registerWebhook(kubectl, { ...webhook, port: balancer.port });
    }, 120_000);
    afterAll(async () => {
      await balancer?.stop();
      await other?.stop();
    });

    /**
     * Which replica answered the CREATE of `name`, by the admission line each replica logs. A
     * replica logs once its answer is sent, so the line can reach this process after kubectl has
     * exited: it is awaited, and a CREATE both or neither replica logged fails the test.
     */
    async function replicaThatAnswered(name: string): Promise<"A" | "B"> {
      const loggedBy = () =>
        [webhook, other].map((replica) => admissions(replica, name).some((line) => line.dryRun === false));
      await eventually(
        async () => loggedBy().filter(Boolean).length > 0,
        10_000,
        `a replica's admission line for ${name}`,
      );
      const [byA, byB] = loggedBy();
      if (byA === byB) throw new Error(`both replicas logged the CREATE of ${name}`);
      return byA ? "A" : "B";
    }

    it.each([0, 50, 100])(
      "never admits both of two CREATEs claiming one host, sent %i ms apart to two replicas",
      async (apart) => {
        const outcomes: { admitted: number; split: boolean; messages: string[] }[] = [];
        for (let pair = 0; pair < 5; pair++) {
          const [, mac] = nextFree();
          const names = [`race-${apart}-${pair}-a`, `race-${apart}-${pair}-b`];
          // Both in flight at once: the second is sent `apart` ms after the first, whether or not
          // the first has been answered.
          const answers = await Promise.all([
            create(byMac(names[0] ?? "", mac)),
            sleep(apart).then(() => create(byMac(names[1] ?? "", mac))),
          ]);
          const answeredBy = await Promise.all(names.map((name) => replicaThatAnswered(name)));
          outcomes.push({
            admitted: answers.filter((answer) => answer.admitted).length,
            split: answeredBy[0] !== answeredBy[1],
            messages: answers.flatMap((answer) => (answer.admitted ? [] : [answer.message])),
          });
          await must(kubectl, ["delete", "provisioning", "-n", NAMESPACE, ...names, "--ignore-not-found"]);
        }
        // One of each pair, whichever replica answered it, and the other refused for the host.
        expect(
          outcomes.map((outcome) => outcome.admitted),
          JSON.stringify(outcomes),
        ).toEqual([1, 1, 1, 1, 1]);
        for (const { messages } of outcomes)
          expect(messages[0]).toMatch(/host-claimed|already requested|claimed by/);
        // Each pair was answered by both replicas, one each (else this tells nothing).
        expect(
          outcomes.map((outcome) => outcome.split),
          JSON.stringify(outcomes),
        ).toEqual([true, true, true, true, true]);
      },
      120_000,
    );
  });

  describe("sized honestly", () => {
    it("the webhook with the site's hosts stays within the memory the Deployment requests", async () => {
      const deployment = (await deployObjects()).find(
        (object) => object.kind === "Deployment" && object.metadata.name === "metalsynth-webhook",
      );
      const request = (
        deployment?.spec as {
          template: { spec: { containers: { resources: { requests: { memory: string } } }[] } };
        }
      ).template.spec.containers[0]?.resources.requests.memory;
      const requestMiB = Number(/^(\d+)Mi$/.exec(request ?? "")?.[1]);
      const status = await readFile(`/proc/${webhook.pid}/status`, "utf8");
      const rssMiB = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024;
      expect(rssMiB).toBeGreaterThan(0);
      expect(rssMiB, `RSS ${rssMiB.toFixed(0)} MiB of ${request} requested`).toBeLessThan(requestMiB);
    });
  });
});
