/**
 * The BPA cluster's installer Jobs run by a real kubelet (issue #37, decision 0060), applied unchanged
 * by each GitOps agent, with the stand-in installer image (Debian's ansible-core, ssh) against test
 * hosts at the addresses hosts.ini gives the master and the worker:
 *
 * - the KUD installer Job reaches every host of the rendered hosts.ini as root with the key of the
 *   site's SSH key Secret as mounted, and its second container stores the new cluster's admin.conf
 *   (fetched from the first master) in the Secret the Software Job waits for; the Software Job then
 *   installs the Software CR's master packages, at the pinned version, from the hosts' package source
 *   onto the master and nothing onto the worker;
 * - a key the hosts do not accept fails the KUD Job naming every host, and the Software Job never
 *   runs; an unreachable host fails it naming that host and no other; a master that cannot be reached
 *   when the Software Job runs again fails it naming the master's address;
 * - `metalsynth status` reads those outcomes back as the kubelet left them (issue #38): the
 *   Provisioning's `KudInstalled` and the Software's `SoftwareInstalled` name the Job, true when it
 *   completed, false with the way to its logs when it failed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { REPO } from "../../harness.ts";
import { ensureNamespaces, exec, installCrds, kubectlFor, must, type KubeObject } from "../support/kube.ts";
import {
  MASTER_PACKAGES,
  applySecret,
  build,
  objectsOf,
  renderNodeSite,
  type NodeSite,
} from "./support/site.ts";
import { startTestHosts, type TestHosts } from "./support/test-hosts.ts";
import {
  AGENTS,
  applyAs,
  deleteNamespace,
  fluxInventory,
  jobOutcome,
  provideImages,
  type Agent,
} from "./support/workloads.ts";

const info = inject("e2eNode");
const kubectl = kubectlFor(info.kubeconfig);

describe("the BPA cluster's installer Jobs on a real node", () => {
  let site: NodeSite;
  let scratch: string;
  let hosts: TestHosts | undefined;
  let manifests: string;
  let objects: KubeObject[];
  let namespace: string;
  const job = (prefix: string) =>
    objects.find((object) => object.kind === "Job" && object.metadata.name.startsWith(prefix))!.metadata.name;

  beforeAll(async () => {
    site = await renderNodeSite();
    scratch = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-node-bpa-"));
    namespace = site.values.bpaNamespace;
    await installCrds(kubectl);
    manifests = await build(kubectl, site.bpaDirectory);
    objects = objectsOf(manifests);
    provideImages(info, objects);
  });
  afterEach(async () => {
    await hosts?.stop();
    hosts = undefined;
  });
  afterAll(async () => {
    await deleteNamespace(kubectl, namespace);
    await rm(site.dir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  /** Fresh test hosts, an empty namespace, and the site's SSH key Secret holding `key`. */
  async function prepare(key: string): Promise<TestHosts> {
    hosts = await startTestHosts(
      info,
      [site.values.master, site.values.worker].map((host) => ({ name: host.name, address: host.ip })),
      [site.nodeKey.publicKey],
    );
    await deleteNamespace(kubectl, namespace);
    await ensureNamespaces(kubectl, [namespace]);
    await applySecret(kubectl, namespace, site.values.sshKeySecret, { id_rsa: key });
    return hosts;
  }

  async function sync(agent: Agent) {
    const app = {
      name: `${namespace}-${site.values.cluster}`,
      namespace,
      syncOptions: ["ApplyOutOfSyncOnly=true"],
      fluxInventory: fluxInventory(scratch, agent),
    };
    return { app, ...(await applyAs(agent, info, app, manifests)) };
  }

  /** A condition of each CR in the namespace, by kind, as `metalsynth status -o json` reports it. */
  async function reported(
    type: string,
  ): Promise<Map<string, { status: string; reason: string; message: string }>> {
    const run = await exec(
      process.execPath,
      [path.join(REPO, "bin", "metalsynth.js"), "status", "-n", namespace, "-o", "json"],
      { env: { ...process.env, KUBECONFIG: info.kubeconfig } },
    );
    expect(run.stderr).not.toMatch(/forbidden/i);
    const list = JSON.parse(run.stdout) as {
      items: {
        kind: string;
        status: { conditions: { type: string; status: string; reason: string; message: string }[] };
      }[];
    };
    return new Map(
      list.items.flatMap((item) => {
        const condition = item.status.conditions.find((candidate) => candidate.type === type);
        return condition ? [[item.kind, condition] as const] : [];
      }),
    );
  }

  /** The packages of `names` dpkg says are installed on a host, with their versions. */
  async function installed(host: string, names: readonly string[]): Promise<Record<string, string>> {
    const query = await hosts!
      .get(host)
      .exec([
        "dpkg-query",
        "--show",
        "--showformat",
        "${Package} ${Version} ${db:Status-Status}\\n",
        ...names,
      ]);
    return Object.fromEntries(
      query.stdout
        .split("\n")
        .filter((line) => line.endsWith(" installed"))
        .map((line) => line.split(" ").slice(0, 2) as [string, string]),
    );
  }

  describe.each(AGENTS)("applied by %s", (agent) => {
    it("KUD reaches every host with the mounted key and stores admin.conf; Software then installs the master packages", async () => {
      const started = await prepare(site.nodeKey.privateKey);
      const { argo } = await sync(agent);
      if (argo) expect(argo.phase, argo.message).toBe("Succeeded");
      const kud = await jobOutcome(kubectl, namespace, job("kud-"));
      expect(kud.condition, kud.logs).toBe("Complete");
      for (const node of [site.values.masterLabel, site.values.workerLabel]) {
        expect(kud.logs).toMatch(new RegExp(`${node} \\| SUCCESS => `));
      }
      // What the installer fetched from the master, stored by the Job's kubectl container.
      const stored = await must(kubectl, [
        "get",
        "secret",
        `${site.values.cluster}-kubeconfig`,
        "-n",
        namespace,
        "-o",
        "jsonpath={.data.value}",
      ]);
      const adminConf = await started
        .get(site.values.master.name)
        .exec(["cat", "/etc/kubernetes/admin.conf"]);
      expect(Buffer.from(stored, "base64").toString()).toBe(adminConf.stdout);

      const software = await jobOutcome(kubectl, namespace, job("software-"));
      expect(software.condition, software.logs).toBe("Complete");
      const names = MASTER_PACKAGES.map((item) => item.name);
      expect(await installed(site.values.master.name, names)).toEqual({
        "metalsynth-probe": "1.0",
        "metalsynth-probe-extra": "2.1-1",
      });
      expect(await installed(site.values.worker.name, names)).toEqual({});

      expect((await reported("KudInstalled")).get("Provisioning")).toMatchObject({
        status: "True",
        reason: "JobSucceeded",
        message: expect.stringContaining(`Job ${namespace}/${job("kud-")} succeeded`),
      });
      expect((await reported("SoftwareInstalled")).get("Software")).toMatchObject({
        status: "True",
        reason: "JobSucceeded",
        message: expect.stringContaining(`Job ${namespace}/${job("software-")} succeeded`),
      });
    });

    it("the Software Job run again while the master is unreachable fails, naming its address", async () => {
      const started = await prepare(site.nodeKey.privateKey);
      const { app, argo } = await sync(agent);
      if (argo) expect(argo.phase, argo.message).toBe("Succeeded");
      expect((await jobOutcome(kubectl, namespace, job("software-"))).condition).toBe("Complete");
      // An operator deletes the Job to run it again; the agent puts it back and the kubelet runs it.
      await started.get(site.values.master.name).stop();
      await must(kubectl, ["delete", "job", job("software-"), "-n", namespace, "--wait=true"]);
      const again = await applyAs(agent, info, app, manifests);
      const software = await jobOutcome(kubectl, namespace, job("software-"));
      expect(software.condition).toBe("Failed");
      expect(software.logs).toContain(`${site.values.master.ip}: installing master packages failed`);
      // Argo CD's operation ends Succeeded once the last wave is applied: a Job of that wave that
      // fails afterwards shows in the Application's health (Degraded), not in the sync.
      if (again.argo) expect(again.argo.phase).toBe("Succeeded");
    });

    it("a key the hosts refuse fails the KUD Job naming every host; the Software Job never runs", async () => {
      await prepare(site.strangerKey.privateKey);
      const { argo } = await sync(agent);
      const kud = await jobOutcome(kubectl, namespace, job("kud-"));
      expect(kud.condition).toBe("Failed");
      for (const [node, host] of [
        [site.values.masterLabel, site.values.master],
        [site.values.workerLabel, site.values.worker],
      ] as const) {
        expect(kud.logs).toContain(`${node} | UNREACHABLE!: Failed to connect to the host via ssh`);
        expect(kud.logs).toContain(`root@${host.ip}: Permission denied (publickey)`);
      }
      expect(kud.logs).toContain(
        `cannot reach ${site.values.masterLabel} ${site.values.workerLabel} (see above)`,
      );
      expect((await reported("KudInstalled")).get("Provisioning")).toMatchObject({
        status: "False",
        reason: "JobFailed",
        message: expect.stringContaining(`its logs: kubectl logs -n ${namespace} job/${job("kud-")}`),
      });
      expect((await reported("SoftwareInstalled")).get("Software")).toMatchObject({ status: "False" });
      const pods = await must(kubectl, [
        "get",
        "pods",
        "-n",
        namespace,
        "-l",
        `batch.kubernetes.io/job-name=${job("software-")}`,
        "-o",
        "jsonpath={.items[*].status.phase}",
      ]);
      if (argo) {
        // The KUD Job's wave failed: the Software Job's wave was never applied.
        expect(argo.phase).toBe("Failed");
        expect((await kubectl(["get", "job", job("software-"), "-n", namespace])).code).not.toBe(0);
      } else {
        // Its pod waits for the Secret only a completed KUD Job makes.
        expect(pods).toBe("Pending");
      }
    });

    it("an unreachable host fails the KUD Job naming it, and no other", async () => {
      const started = await prepare(site.nodeKey.privateKey);
      await started.get(site.values.worker.name).stop();
      await sync(agent);
      const kud = await jobOutcome(kubectl, namespace, job("kud-"));
      expect(kud.condition).toBe("Failed");
      expect(kud.logs).toContain(
        `${site.values.workerLabel} | UNREACHABLE!: Failed to connect to the host via ssh: ssh: connect to host ${site.values.worker.ip} port 22`,
      );
      expect(kud.logs).toMatch(new RegExp(`${site.values.masterLabel} \\| SUCCESS => `));
      expect(kud.logs).toContain(`cannot reach ${site.values.workerLabel} (see above)`);
    });
  });
});
