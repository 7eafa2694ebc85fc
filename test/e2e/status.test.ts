/**
 * Issue #38 on a real API server: the status reporter (`metalsynth status --write`, as the chart runs
 * it) authenticated as its ServiceAccount with deploy/metalsynth.yaml's RBAC, while the example
 * site's clusters are applied the Flux way (cluster-east, fluxcd/pkg/ssa) and the Argo CD way
 * (tenant-a, Argo CD's sync engine). No kubelet runs: Job outcomes are written through the Job status
 * subresource as the Job controller writes them (1.34 checks the order: start time, then
 * FailureTarget or SuccessCriteriaMet beside Failed or Complete), and the agents' objects (stand-in
 * CRDs) get the status their controllers would write. Every condition is reached and left again; a
 * Job that fails, fails again and is fixed; a host that vanishes after Ready and comes back; a spec
 * change raising observedGeneration; `kubectl wait --for=condition=Ready` returning; and status
 * writes only when something changed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, stringify } from "yaml";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { freePort } from "../support/free-port.ts";
import { argoSync, fluxApply, kustomize } from "./support/agents.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  eventually,
  installCrds,
  kubectlFor,
  must,
  readObjects,
  type KubeObject,
  type Kubectl,
} from "./support/kube.ts";
import { installWebhookRbac, loadInventory } from "./support/webhook.ts";

/** The identity of the reporter's pod: its ServiceAccount in deploy/metalsynth.yaml. */
const STATUS_USER = "system:serviceaccount:metalsynth-system:metalsynth-status";
const EXAMPLE = path.join(REPO, "examples", "site");
const RENDERED = path.join(EXAMPLE, "rendered");
const EAST = path.join(RENDERED, "clusters", "edge-a", "cluster-east");
const TENANT = path.join(RENDERED, "clusters", "edge-sip", "tenant-a");
/** A worker host of cluster-east (worker-2): it vanishes from the inventory, then comes back. */
const VANISHING = "r02-node-05";
const WAIT_MS = 30_000;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}
interface Status {
  observedGeneration?: number;
  conditions?: Condition[];
  hostSummary?: string;
  hosts?: { host: string; role: string; node?: string; address?: string; present: boolean }[];
  gitops?: { kind: string; namespace?: string; name: string; revision?: string };
  jobs?: { name: string; phase: string; logs: string }[];
}

describe("the status reporter on a real API server (issue #38)", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let reporter: ChildProcess;
  let output = "";
  let metricsPort: number;
  let scratch: string;
  const inventoryFile = () => path.join(scratch, "flux-inventory.json");

  const objectOf = async (
    resource: string,
    namespace: string,
    name: string,
  ): Promise<KubeObject & { status?: Status }> =>
    JSON.parse(await must(kubectl, ["get", resource, name, "-n", namespace, "-o", "json"])) as KubeObject & {
      status?: Status;
    };
  const statusOf = async (resource: string, namespace: string, name: string): Promise<Status> =>
    (await objectOf(resource, namespace, name)).status ?? {};
  const conditionOf = (status: Status, type: string) =>
    status.conditions?.find((found) => found.type === type);
  /** Waits until `resource` has condition `type` with `status` and `reason`; resolves to its status. */
  const until = async (
    resource: string,
    namespace: string,
    name: string,
    type: string,
    status: string,
    reason: string,
  ): Promise<Status> => {
    let last: Status = {};
    await eventually(
      async () => {
        last = await statusOf(resource, namespace, name);
        const found = conditionOf(last, type);
        return found?.status === status && found.reason === reason;
      },
      WAIT_MS,
      `${resource} ${namespace}/${name}: ${type}=${status} (${reason}); has ${JSON.stringify(last.conditions?.map((found) => [found.type, found.status, found.reason]))}\n${output.slice(-2000)}`,
    );
    return last;
  };
  const metrics = async (): Promise<string> =>
    (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const metric = async (pattern: RegExp): Promise<number> => {
    const line = (await metrics()).split("\n").find((candidate) => pattern.test(candidate));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
  };
  const writes = () => metric(/^metalsynth_status_writes_total\{kind="Provisioning",result="written"\}/);
  const rounds = () => metric(/^metalsynth_status_round_duration_seconds_count /);

  /** The Job of `component` (kud-, software-) cluster-east's directory renders. */
  const eastJob = async (prefix: string): Promise<string> => {
    const objects = await readObjects(filesUnder(EAST));
    const job = objects.find(
      (object) => object.kind === "Job" && object.metadata.name.startsWith(`${prefix}-cluster-east-`),
    );
    if (!job) throw new Error(`no ${prefix} Job in ${EAST}`);
    return job.metadata.name;
  };
  const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");
  /** What the Job controller writes, in the order Kubernetes 1.34 checks. */
  const jobStatus = async (
    name: string,
    phase: "running" | "failed" | "succeeded",
    started = true,
  ): Promise<void> => {
    const at = now();
    const condition = (type: string, reason: string, message: string) => ({
      type,
      status: "True",
      reason,
      message,
      lastTransitionTime: at,
      lastProbeTime: at,
    });
    const status =
      phase === "running"
        ? { startTime: at, active: 1 }
        : phase === "failed"
          ? {
              active: 0,
              failed: 1,
              conditions: [
                condition(
                  "FailureTarget",
                  "BackoffLimitExceeded",
                  "Job has reached the specified backoff limit",
                ),
                condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
              ],
            }
          : {
              active: 0,
              succeeded: 1,
              completionTime: at,
              conditions: [
                condition(
                  "SuccessCriteriaMet",
                  "CompletionsReached",
                  "Reached expected number of succeeded pods",
                ),
                condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
              ],
            };
    // A Job that goes straight to done has started too; a start time once set never changes.
    const full = started ? status : { startTime: at, ...status };
    await must(kubectl, [
      "patch",
      "job",
      name,
      "-n",
      "edge-a",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status: full }),
    ]);
  };
  const fluxEast = async () =>
    fluxApply(plane, "edge-a.cluster-east", await kustomize(plane, EAST), inventoryFile());
  /** The Flux Kustomization of cluster-east's directory, with the status kustomize-controller writes. */
  const kustomizationStatus = async (revision: string, ready: "True" | "False", attempted = revision) => {
    await must(kubectl, [
      "patch",
      "kustomization",
      "edge-a.cluster-east",
      "-n",
      "flux-system",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: {
          observedGeneration: 1,
          lastAttemptedRevision: attempted,
          ...(ready === "True" ? { lastAppliedRevision: revision } : {}),
          lastHandledReconcileAt: now(),
          conditions: [
            ready === "True"
              ? {
                  type: "Ready",
                  status: "True",
                  reason: "ReconciliationSucceeded",
                  message: `Applied revision: ${revision}`,
                  lastTransitionTime: now(),
                }
              : {
                  type: "Ready",
                  status: "False",
                  reason: "ReconciliationFailed",
                  message:
                    "Provisioning/edge-a/cluster-east dry-run failed: admission webhook denied the request",
                  lastTransitionTime: now(),
                },
          ],
        },
      }),
    ]);
  };

  beforeAll(async () => {
    plane = await startControlPlane(inject("e2eBinDir"), { users: [STATUS_USER] });
    kubectl = kubectlFor(plane.kubeconfig);
    scratch = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-status-"));
    await installCrds(kubectl);
    // The agents' kinds, and cert-manager's: what a cluster directory may render (a SIP tenant's
    // identity provider's certificate) is applied whole, or not at all.
    for (const fixture of ["gitops-crds.yaml", "operator-crds.yaml"])
      await must(kubectl, ["apply", "-f", path.join(REPO, "test", "e2e", "fixtures", fixture)]);
    await must(kubectl, ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
    await ensureNamespaces(kubectl, ["metal3", "edge-a", "edge-sip", "flux-system", "argocd"]);
    // deploy/metalsynth.yaml's ServiceAccounts, ClusterRoles, Roles and bindings, the reporter's among them.
    await installWebhookRbac(kubectl);
    await loadInventory(kubectl, await readObjects(filesUnder(path.join(EXAMPLE, "inventory"))));

    // The reporter's container arguments in deploy/metalsynth.yaml, with a port of this machine's.
    const deploy = (await readObjects([path.join(REPO, "deploy", "metalsynth.yaml")])).find(
      (object) => object.kind === "Deployment" && object.metadata.name === "metalsynth-status",
    );
    const args =
      (deploy?.spec as { template: { spec: { containers: { args: string[] }[] } } } | undefined)?.template
        .spec.containers[0]?.args ?? [];
    expect(args.slice(0, 2)).toEqual(["status", "--write"]);
    metricsPort = await freePort();
    const withPort = args.map((arg, index) => (args[index - 1] === "--port" ? String(metricsPort) : arg));
    reporter = spawn(
      process.execPath,
      [path.join(REPO, "bin", "metalsynth.js"), ...withPort, "--host", "127.0.0.1"],
      {
        env: {
          ...process.env,
          KUBECONFIG: plane.kubeconfigFor(STATUS_USER),
          HOSTNAME: "metalsynth-status-e2e",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    reporter.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    reporter.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await eventually(
      async () => {
        if (reporter.exitCode !== null)
          throw new Error(`reporter exited with ${reporter.exitCode}:\n${output}`);
        return (await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => undefined))?.status === 200;
      },
      60_000,
      `the reporter ready:\n${output}`,
    );
  });
  afterAll(async () => {
    if (reporter && reporter.exitCode === null) {
      const exited = new Promise((resolve) => reporter.once("exit", resolve));
      reporter.kill("SIGTERM");
      await Promise.race([exited, sleep(15_000)]);
    }
    await plane?.stop();
  });

  it("grants the reporter's ServiceAccount status patches on the four kinds, Events, and reads elsewhere, nothing more", async () => {
    const can = async (...args: string[]) =>
      (await kubectl(["auth", "can-i", ...args, `--as=${STATUS_USER}`])).stdout.trim();
    for (const kind of [
      "provisionings.bpa.akraino.org",
      "softwares.bpa.akraino.org",
      "clusters.bpa.akraino.org",
      "sipclusters.airship.airshipit.org",
    ]) {
      expect(await can("patch", kind, "--subresource=status", "-n", "edge-a"), `patch ${kind}/status`).toBe(
        "yes",
      );
      for (const verb of ["patch", "update", "create", "delete"])
        expect(await can(verb, kind, "-n", "edge-a"), `${verb} ${kind}`).toBe("no");
      expect(await can("update", kind, "--subresource=status", "-n", "edge-a"), `update ${kind}/status`).toBe(
        "no",
      );
      expect(await can("watch", kind, "--all-namespaces")).toBe("yes");
    }
    for (const verb of ["create", "patch"])
      expect(await can(verb, "events", "-n", "edge-a"), `${verb} events`).toBe("yes");
    for (const verb of ["delete", "update"])
      expect(await can(verb, "events", "-n", "edge-a"), `${verb} events`).toBe("no");
    for (const resource of [
      "jobs.batch",
      "baremetalhosts.metal3.io",
      "allocations.metalsynth.io",
      "kustomizations.kustomize.toolkit.fluxcd.io",
      "applications.argoproj.io",
    ]) {
      expect(await can("list", resource, "--all-namespaces"), `list ${resource}`).toBe("yes");
      for (const verb of ["create", "patch", "delete"])
        expect(await can(verb, resource, "-n", "edge-a"), `${verb} ${resource}`).toBe("no");
    }
    expect(await can("patch", "jobs.batch", "--subresource=status", "-n", "edge-a")).toBe("no");
    expect(await can("patch", "baremetalhosts.metal3.io", "--subresource=status", "-n", "metal3")).toBe("no");
    expect(await can("get", "secrets", "-n", "metal3")).toBe("yes");
    expect(await can("get", "secrets", "-n", "edge-a")).toBe("no");
    expect(await can("list", "secrets", "--all-namespaces")).toBe("no");
  });

  it("Flux way: cluster-east applied, valid against the live inventory, Git's hosts with hosts.ini's addresses, the apply's revision, the Jobs pending", async () => {
    const report = await fluxEast();
    expect(report["Provisioning/edge-a/cluster-east"]).toBe("created");
    // Flux marked the CR with its Kustomization, which is not in the cluster yet.
    await until("provisioning", "edge-a", "cluster-east", "Applied", "Unknown", "AgentNotFound");
    const kustomization = parse(
      await readFile(path.join(RENDERED, "flux", "edge-a.cluster-east.yaml"), "utf8"),
    ) as KubeObject;
    await must(kubectl, ["apply", "-f", "-"], stringify(kustomization));
    await until("provisioning", "edge-a", "cluster-east", "Applied", "False", "Applying");
    await kustomizationStatus("main@sha1:1111111", "True");
    const status = await until("provisioning", "edge-a", "cluster-east", "Applied", "True", "Applied");
    expect(status.gitops).toEqual({
      kind: "Kustomization",
      namespace: "flux-system",
      name: "edge-a.cluster-east",
      revision: "main@sha1:1111111",
    });
    expect(conditionOf(status, "Valid")).toMatchObject({ status: "True", reason: "Valid" });
    expect(conditionOf(status, "HostsAllocated")).toMatchObject({ status: "True", reason: "Allocated" });
    expect(conditionOf(status, "KudInstalled")).toMatchObject({ status: "False", reason: "JobPending" });
    expect(conditionOf(status, "Ready")).toMatchObject({ status: "False", reason: "JobPending" });
    // The hosts are the Allocation's, each at the address hosts.ini gives its node.
    const [allocation] = await readObjects([path.join(EAST, "allocation.yaml")]);
    const hostsIni = (await readObjects([path.join(EAST, "kud-installer.yaml")])).find(
      (object) => object.kind === "ConfigMap" && object.metadata.name === "cluster-east-hosts-ini",
    );
    const addresses = new Map(
      [
        ...String((hostsIni?.data as Record<string, string>)["hosts.ini"]).matchAll(
          /^(\S+)\s+ansible_ssh_host=(\S+)/gm,
        ),
      ].map((match) => [match[1], match[2]]),
    );
    expect(status.hosts).toEqual(
      (allocation?.spec as { hosts: { host: string; node: string; role: string }[] }).hosts.map((entry) => ({
        host: entry.host,
        role: entry.role,
        node: entry.node,
        address: addresses.get(entry.node),
        present: true,
      })),
    );
    expect(status.hostSummary).toBe("5/5");
    // The printer columns a person reads.
    const table = await must(kubectl, ["get", "provisionings", "-n", "edge-a"]);
    expect(table).toMatch(/^NAME\s+CLUSTER\s+READY\s+HOSTS\s+REASON\s+AGE$/m);
    expect(table).toMatch(/^cluster-east\s+cluster-east\s+False\s+5\/5\s+JobPending\s+\S+$/m);
    expect(
      await metric(
        /^metalsynth_cluster_ready\{namespace="edge-a",cluster="cluster-east",kind="Provisioning"\}/,
      ),
    ).toBe(0);
  });

  it("a KUD Job failing names the Job and its logs and tells a Warning; failing again counts on the same Event; a fix succeeds", async () => {
    const kud = await eastJob("kud");
    await jobStatus(kud, "running");
    await until("provisioning", "edge-a", "cluster-east", "KudInstalled", "False", "JobRunning");
    await jobStatus(kud, "failed");
    const failed = await until(
      "provisioning",
      "edge-a",
      "cluster-east",
      "KudInstalled",
      "False",
      "JobFailed",
    );
    expect(conditionOf(failed, "KudInstalled")?.message).toContain(
      `Job edge-a/${kud} failed (BackoffLimitExceeded`,
    );
    expect(conditionOf(failed, "KudInstalled")?.message).toContain(
      `its logs: kubectl logs -n edge-a job/${kud}`,
    );
    expect(conditionOf(failed, "Ready")).toMatchObject({ status: "False", reason: "JobFailed" });
    expect(failed.jobs?.find((job) => job.name === kud)).toMatchObject({
      phase: "Failed",
      logs: `kubectl logs -n edge-a job/${kud}`,
    });
    const events = async () =>
      (
        JSON.parse(
          await must(kubectl, [
            "get",
            "events",
            "-n",
            "edge-a",
            "--field-selector",
            "involvedObject.kind=Provisioning,involvedObject.name=cluster-east",
            "-o",
            "json",
          ]),
        ) as {
          items: {
            type: string;
            reason: string;
            count: number;
            message: string;
            source: { component: string };
          }[];
        }
      ).items;
    await eventually(
      async () => (await events()).some((event) => event.reason === "JobFailed"),
      WAIT_MS,
      "a JobFailed Event",
    );
    const [warning] = (await events()).filter((event) => event.reason === "JobFailed");
    expect(warning).toMatchObject({ type: "Warning", count: 1, source: { component: "metalsynth-status" } });
    expect(warning?.message).toContain(`kubectl logs -n edge-a job/${kud}`);

    // Run it again: the agent makes the deleted Job anew, and it fails the same way.
    await must(kubectl, ["delete", "job", kud, "-n", "edge-a"]);
    await until("provisioning", "edge-a", "cluster-east", "KudInstalled", "False", "JobNotFound");
    await fluxEast();
    await until("provisioning", "edge-a", "cluster-east", "KudInstalled", "False", "JobPending");
    await jobStatus(kud, "running");
    await until("provisioning", "edge-a", "cluster-east", "KudInstalled", "False", "JobRunning");
    await jobStatus(kud, "failed");
    await until("provisioning", "edge-a", "cluster-east", "KudInstalled", "False", "JobFailed");
    await eventually(
      async () => (await events()).some((event) => event.reason === "JobFailed" && event.count === 2),
      WAIT_MS,
      "the JobFailed Event counted twice",
    );
    expect((await events()).filter((event) => event.reason === "JobFailed")).toHaveLength(1);

    // The fix: once more, and it succeeds; the Software Job after it. `kubectl wait` returns then.
    await must(kubectl, ["delete", "job", kud, "-n", "edge-a"]);
    await until("provisioning", "edge-a", "cluster-east", "KudInstalled", "False", "JobNotFound");
    await fluxEast();
    const waiting = kubectl([
      "wait",
      "--for=condition=Ready",
      "provisioning/cluster-east",
      "-n",
      "edge-a",
      "--timeout=60s",
    ]);
    await jobStatus(kud, "running");
    await jobStatus(kud, "succeeded");
    const installed = await until(
      "provisioning",
      "edge-a",
      "cluster-east",
      "KudInstalled",
      "True",
      "JobSucceeded",
    );
    expect(conditionOf(installed, "KudInstalled")?.message).toContain(`Job edge-a/${kud} succeeded at `);
    await until("software", "edge-a", "cluster-east-software", "SoftwareInstalled", "False", "JobPending");
    await jobStatus(await eastJob("software"), "succeeded", false);
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain("provisioning.bpa.akraino.org/cluster-east condition met");
    for (const [resource, name] of [
      ["software", "cluster-east-software"],
      ["clusters.bpa.akraino.org", "cluster-east"],
    ] as const)
      await until(resource, "edge-a", name, "Ready", "True", "Ready");
    const cluster = await statusOf("clusters.bpa.akraino.org", "edge-a", "cluster-east");
    expect(cluster.conditions?.map((found) => [found.type, found.status])).toEqual([
      ["Valid", "True"],
      ["HostsAllocated", "True"],
      ["Applied", "True"],
      ["KudInstalled", "True"],
      ["SoftwareInstalled", "True"],
      ["Ready", "True"],
    ]);
    expect(
      await metric(
        /^metalsynth_cluster_ready\{namespace="edge-a",cluster="cluster-east",kind="Provisioning"\}/,
      ),
    ).toBe(1);
    const table = await must(kubectl, ["get", "provisionings", "-n", "edge-a"]);
    expect(table).toMatch(/^cluster-east\s+cluster-east\s+True\s+5\/5\s+Ready\s+\S+$/m);
  });

  it("never fights the agent: Flux applies again and changes nothing; the status is metalsynth-status's alone", async () => {
    const before = await objectOf("provisioning", "edge-a", "cluster-east");
    const report = await fluxEast();
    expect(report["Provisioning/edge-a/cluster-east"]).toBe("unchanged");
    const after = JSON.parse(
      await must(kubectl, [
        "get",
        "provisioning",
        "cluster-east",
        "-n",
        "edge-a",
        "-o",
        "json",
        "--show-managed-fields",
      ]),
    ) as KubeObject;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const managers = (
      after.metadata.managedFields as {
        manager: string;
        operation: string;
        subresource?: string;
        fieldsV1: Record<string, unknown>;
      }[]
    ).map((entry) => ({
      manager: entry.manager,
      operation: entry.operation,
      subresource: entry.subresource,
      status: "f:status" in entry.fieldsV1,
    }));
    expect(managers).toContainEqual({
      manager: "metalsynth-status",
      operation: "Apply",
      subresource: "status",
      status: true,
    });
    expect(managers.filter((entry) => entry.status).map((entry) => entry.manager)).toEqual([
      "metalsynth-status",
    ]);
    expect(
      managers
        .filter((entry) => entry.manager === "metalsynth-status")
        .every((entry) => entry.subresource === "status"),
    ).toBe(true);
  });

  it("writes only when something changed: an unrelated host and the agent's reconcile bookkeeping make rounds, not writes", async () => {
    const before = await objectOf("provisioning", "edge-a", "cluster-east");
    const written = await writes();
    const roundsBefore = await rounds();
    // A host no cluster uses gets a label; Flux records another reconcile of the same revision.
    await must(kubectl, ["label", "baremetalhost", "r03-node-08", "-n", "metal3", "rack-audit=2026-05"]);
    await kustomizationStatus("main@sha1:1111111", "True");
    await eventually(async () => (await rounds()) > roundsBefore, WAIT_MS, "a round after the changes");
    await sleep(1000);
    expect(await writes()).toBe(written);
    expect((await objectOf("provisioning", "edge-a", "cluster-east")).metadata.resourceVersion).toBe(
      before.metadata.resourceVersion,
    );
  });

  it("a host vanishing after Ready: Valid and HostsAllocated turn False with the rule's id; it comes back and all is Ready again", async () => {
    const [host] = (await readObjects(filesUnder(path.join(EXAMPLE, "inventory")))).filter(
      (object) => object.kind === "BareMetalHost" && object.metadata.name === VANISHING,
    );
    if (host === undefined) throw new Error(`no ${VANISHING} in the example inventory`);
    await must(kubectl, ["delete", "baremetalhost", VANISHING, "-n", "metal3"]);
    const gone = await until(
      "provisioning",
      "edge-a",
      "cluster-east",
      "HostsAllocated",
      "False",
      "host-vanished",
    );
    expect(conditionOf(gone, "Valid")).toMatchObject({ status: "False", reason: "host-vanished" });
    expect(conditionOf(gone, "HostsAllocated")?.message).toContain(`metalsynth release metal3/${VANISHING}`);
    expect(conditionOf(gone, "Ready")).toMatchObject({ status: "False", reason: "host-vanished" });
    expect(gone.hostSummary).toBe("4/5");
    expect(gone.hosts?.find((entry) => entry.host === `metal3/${VANISHING}`)).toEqual({
      host: `metal3/${VANISHING}`,
      role: "worker",
      node: "worker-2",
      present: false,
    });
    await loadInventory(kubectl, [
      host,
      ...(await readObjects(filesUnder(path.join(EXAMPLE, "inventory")))).filter(
        (object) => object.kind === "HardwareData" && object.metadata.name === VANISHING,
      ),
    ]);
    const back = await until("provisioning", "edge-a", "cluster-east", "Ready", "True", "Ready");
    expect(conditionOf(back, "Valid")).toMatchObject({ status: "True" });
    expect(back.hostSummary).toBe("5/5");
  });

  it("Applied leaves and comes back: the agent fails to apply a new revision, then applies it", async () => {
    await kustomizationStatus("main@sha1:1111111", "False", "main@sha1:2222222");
    const failing = await until("provisioning", "edge-a", "cluster-east", "Applied", "False", "ApplyFailed");
    expect(conditionOf(failing, "Applied")?.message).toContain("failed to apply revision main@sha1:2222222");
    expect(conditionOf(failing, "Ready")).toMatchObject({ status: "False", reason: "ApplyFailed" });
    await kustomizationStatus("main@sha1:2222222", "True");
    const applied = await until("provisioning", "edge-a", "cluster-east", "Ready", "True", "Ready");
    expect(applied.gitops?.revision).toBe("main@sha1:2222222");
  });

  it("a spec change raises observedGeneration: a worker no host fits makes it invalid (no-fit, NotAllocated); taking it back makes it valid", async () => {
    const before = await objectOf("provisioning", "edge-a", "cluster-east");
    const generation = before.metadata.generation as number;
    const spec = before.spec as { workers: Record<string, unknown>[] };
    const patch = (workers: unknown[]) =>
      must(kubectl, [
        "patch",
        "provisioning",
        "cluster-east",
        "-n",
        "edge-a",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { workers } }),
      ]);
    await patch([...spec.workers, { "worker-3": { cpu: 4096 } }]);
    const invalid = await until("provisioning", "edge-a", "cluster-east", "Valid", "False", "no-fit");
    expect(invalid.observedGeneration).toBe(generation + 1);
    expect(conditionOf(invalid, "Valid")?.observedGeneration).toBe(generation + 1);
    expect(conditionOf(invalid, "HostsAllocated")).toMatchObject({ status: "False", reason: "NotAllocated" });
    expect(conditionOf(invalid, "HostsAllocated")?.message).toContain("worker worker-3");
    await patch(spec.workers);
    const valid = await until("provisioning", "edge-a", "cluster-east", "Ready", "True", "Ready");
    expect(valid.observedGeneration).toBe(generation + 2);
    expect(conditionOf(valid, "Valid")).toMatchObject({ status: "True", observedGeneration: generation + 2 });
  });

  it("Argo CD way: tenant-a synced by Argo CD's engine; the label Job's hosts are labelled, the Application's revision shown, kubectl wait returns", async () => {
    const result = await argoSync(
      plane,
      { name: "edge-sip.tenant-a", namespace: "edge-sip", syncOptions: ["ApplyOutOfSyncOnly=true"] },
      await kustomize(plane, TENANT),
    );
    expect(result.phase, result.message).toBe("Succeeded");
    await until("sipcluster", "edge-sip", "tenant-a", "Applied", "Unknown", "AgentNotFound");
    const waiting = kubectl([
      "wait",
      "--for=condition=Ready",
      "sipcluster/tenant-a",
      "-n",
      "edge-sip",
      "--timeout=60s",
    ]);
    // The Application as the application controller records the sync it ran.
    await must(
      kubectl,
      ["apply", "-f", "-"],
      stringify({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Application",
        metadata: { name: "edge-sip.tenant-a", namespace: "argocd" },
        spec: {
          project: "edge",
          source: {
            repoURL: "https://git.example.com/edge/site-a.git",
            path: "rendered/clusters/edge-sip/tenant-a",
            targetRevision: "main",
          },
          destination: { server: "https://kubernetes.default.svc", namespace: "edge-sip" },
        },
        status: {
          sync: { status: "Synced", revision: "3c9a1f0e5d" },
          health: { status: "Healthy" },
          operationState: {
            phase: result.phase,
            message: result.message,
            syncResult: { revision: "3c9a1f0e5d" },
          },
        },
      }),
    );
    const waited = await waiting;
    await until("sipcluster", "edge-sip", "tenant-a", "Applied", "True", "Applied");
    expect(waited.code, `${waited.stderr}\n${output.slice(-2000)}`).toBe(0);
    const status = await statusOf("sipcluster", "edge-sip", "tenant-a");
    expect(status.conditions?.map((found) => [found.type, found.status, found.reason])).toEqual([
      ["Valid", "True", "Valid"],
      ["HostsAllocated", "True", "Allocated"],
      ["Applied", "True", "Applied"],
      ["HostsLabelled", "True", expect.stringMatching(/^(JobSucceeded|HostsLabelled)$/)],
      ["Ready", "True", "Ready"],
    ]);
    expect(status.gitops).toEqual({
      kind: "Application",
      namespace: "argocd",
      name: "edge-sip.tenant-a",
      revision: "3c9a1f0e5d",
    });
    expect(status.hostSummary).toBe("6/6");
    const table = await must(kubectl, ["get", "sipclusters", "-n", "edge-sip"]);
    expect(table).toMatch(/^tenant-a\s+True\s+6\/6\s+Ready\s+\S+$/m);

    // A host's SIP role label taken off by hand: HostsLabelled leaves True, and comes back with it.
    const [member] = status.hosts ?? [];
    if (member === undefined) throw new Error("tenant-a has no hosts");
    const [namespace = "", name = ""] = member.host.split("/");
    await must(kubectl, ["label", "baremetalhost", name, "-n", namespace, "sip.airshipit.org/node-type-"]);
    let unlabelled: Status = {};
    await eventually(
      async () => {
        unlabelled = await statusOf("sipcluster", "edge-sip", "tenant-a");
        return conditionOf(unlabelled, "HostsLabelled")?.status === "False";
      },
      WAIT_MS,
      "HostsLabelled False",
    );
    expect(conditionOf(unlabelled, "HostsLabelled")?.message).toContain(
      `lack the SIP labels of edge-sip/tenant-a (${member.host})`,
    );
    expect(conditionOf(unlabelled, "Ready")?.status).toBe("False");
    await must(kubectl, [
      "label",
      "baremetalhost",
      name,
      "-n",
      namespace,
      `sip.airshipit.org/node-type=${member.role}`,
    ]);
    await until("sipcluster", "edge-sip", "tenant-a", "Ready", "True", "Ready");
  });

  it("metalsynth status prints the same picture from a kubeconfig, and exits 0 when every CR is Ready", async () => {
    const run = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(REPO, "bin", "metalsynth.js"), "status", ...args], {
          env: { ...process.env, KUBECONFIG: plane.kubeconfig },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
      });
    const text = await run();
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^edge-a\s+Provisioning\s+cluster-east\s+cluster-east\s+True\s+5\/5\s+Ready$/m,
    );
    expect(text.stdout).toMatch(/^edge-sip\s+SIPCluster\s+tenant-a\s+tenant-a\s+True\s+6\/6\s+Ready$/m);
    const json = await run("-n", "edge-a", "-o", "json");
    expect(json.code, json.stderr).toBe(0);
    const list = JSON.parse(json.stdout) as {
      kind: string;
      items: { kind: string; metadata: { name: string }; status: Status }[];
    };
    expect(list.kind).toBe("List");
    expect(list.items.map((item) => `${item.kind}/${item.metadata.name}`)).toEqual([
      "Cluster/cluster-east",
      "Provisioning/cluster-east",
      "Software/cluster-east-software",
    ]);
    // Everything it did, it was allowed to do.
    expect(output).not.toMatch(/forbidden|status not written|event not recorded/i);
    // The same status the reporter wrote: nothing changed since.
    expect(list.items.find((item) => item.kind === "Provisioning")?.status).toEqual(
      await statusOf("provisioning", "edge-a", "cluster-east"),
    );
  });
});
