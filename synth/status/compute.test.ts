import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { makeInventory } from "../../test/builders/inventory.ts";
import { parseDocuments } from "../codec/read-documents.ts";
import { evaluateResources } from "../evaluate.ts";
import type { Inventory } from "../inventory/inventory.ts";
import { lockFromAllocations } from "../rules/allocation.ts";
import type { CrStatus } from "../schema/status.ts";
import { readResources } from "../site/resources.ts";
import { StatusIndex, crStatus, type StatusFacts } from "./compute.ts";
import {
  readApplication,
  readCr,
  readJob,
  readKustomization,
  type AgentView,
  type CrView,
} from "./objects.ts";

const NOW = "2026-05-01T10:00:00Z";
const LATER = "2026-05-01T10:05:00Z";

/** Two hosts for cluster-a's master and worker, by MAC; a third no one uses. */
function hosts(options: { without?: string } = {}) {
  return [
    { name: "node-1", nics: [{ name: "eth0", mac: "aa:00:00:00:00:01", ipv4: "10.0.0.1" }] },
    { name: "node-2", nics: [{ name: "eth0", mac: "aa:00:00:00:00:02", ipv4: "10.0.0.2" }] },
    { name: "node-3", nics: [{ name: "eth0", mac: "aa:00:00:00:00:03", ipv4: "10.0.0.3" }] },
  ].filter((host) => host.name !== options.without);
}

const FLUX_LABELS = {
  "kustomize.toolkit.fluxcd.io/name": "edge-a.cluster-a",
  "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
};

/** cluster-a's Provisioning as the API server holds it (generation, uid, the agent's labels). */
function provisioningObject(
  options: { generation?: number; labels?: Record<string, string>; status?: unknown } = {},
) {
  return {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: {
      name: "cluster-a",
      namespace: "edge-a",
      uid: "uid-1",
      generation: options.generation ?? 1,
      labels: { cluster: "cluster-a", ...(options.labels ?? FLUX_LABELS) },
    },
    spec: {
      masters: [{ "master-1": { "mac-address": "aa:00:00:00:00:01" } }],
      workers: [{ "worker-1": { "mac-address": "aa:00:00:00:00:02" } }],
    },
    ...(options.status === undefined ? {} : { status: options.status }),
  };
}

const ALLOCATION = {
  apiVersion: "metalsynth.io/v1alpha1",
  kind: "Allocation",
  metadata: { name: "cluster-a", namespace: "edge-a" },
  spec: {
    kind: "bpa",
    hosts: [
      { host: "metal3/node-1", node: "master-1", role: "master" },
      { host: "metal3/node-2", node: "worker-1", role: "worker" },
    ],
  },
};

function job(name: string, created: string, status: Record<string, unknown>, cluster = "cluster-a") {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace: "edge-a",
      creationTimestamp: created,
      labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": cluster },
    },
    status,
  };
}

const SUCCEEDED = {
  startTime: "2026-05-01T09:00:00Z",
  completionTime: "2026-05-01T09:30:00Z",
  succeeded: 1,
  conditions: [
    { type: "SuccessCriteriaMet", status: "True" },
    { type: "Complete", status: "True" },
  ],
};
const FAILED = {
  startTime: "2026-05-01T09:00:00Z",
  failed: 1,
  conditions: [
    { type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded" },
    {
      type: "Failed",
      status: "True",
      reason: "BackoffLimitExceeded",
      message: "Job has reached the specified backoff limit",
    },
  ],
};

function kustomization(status: Record<string, unknown>) {
  return {
    apiVersion: "kustomize.toolkit.fluxcd.io/v1",
    kind: "Kustomization",
    metadata: { name: "edge-a.cluster-a", namespace: "flux-system" },
    status,
  };
}

const APPLIED = kustomization({
  lastAppliedRevision: "main@sha1:abc",
  lastAttemptedRevision: "main@sha1:abc",
  conditions: [
    {
      type: "Ready",
      status: "True",
      reason: "ReconciliationSucceeded",
      message: "Applied revision: main@sha1:abc",
    },
  ],
});

interface World {
  readonly objects: readonly unknown[];
  readonly inventory?: Inventory;
  readonly allocations?: readonly unknown[];
  readonly jobs?: readonly unknown[];
  readonly agents?: readonly AgentView[];
}

/** The facts a reporter would gather from `world`: the site evaluated as the webhook evaluates it. */
function facts(world: World): StatusFacts {
  const inventory = world.inventory ?? makeInventory(hosts());
  const { documents } = parseDocuments(
    "cluster.yaml",
    world.objects.map((object) => stringify(object)).join("---\n"),
  );
  const read = readResources(documents);
  const allocations = world.allocations ?? [ALLOCATION];
  const { lock, issues: lockIssues } = lockFromAllocations(allocations);
  const evaluation = evaluateResources(read.resources, inventory, lock, read.invalid);
  return {
    issues: [...read.issues, ...evaluation.issues],
    lockIssues,
    plan: evaluation.plan,
    inventory,
    lock,
    allocations: new Set(
      allocations.map((allocation) => "edge-a/" + (allocation as typeof ALLOCATION).metadata.name),
    ),
    jobs: (world.jobs ?? [job("kud-cluster-a-0123abcd", "2026-05-01T08:00:00Z", SUCCEEDED)]).flatMap(
      (value) => readJob(value) ?? [],
    ),
    agents: world.agents ?? [readKustomization(APPLIED)].flatMap((agent) => agent ?? []),
  };
}

function cr(value: unknown): CrView {
  const view = readCr(value);
  if (view === undefined) throw new Error("fixture is no CR");
  return view;
}

function condition(status: CrStatus, type: string) {
  return status.conditions?.find((found) => found.type === type);
}

describe("crStatus", () => {
  it("reports a cluster whose hosts, apply and installer all hold as Ready, with Git's hosts and their addresses", () => {
    const provisioning = provisioningObject();
    const outcome = crStatus(cr(provisioning), new StatusIndex(facts({ objects: [provisioning] })), NOW);
    expect(outcome.ready).toBe(true);
    expect(outcome.changed).toBe(true);
    expect(outcome.cluster).toBe("cluster-a");
    expect(outcome.status.observedGeneration).toBe(1);
    expect(outcome.status.conditions?.map(({ type, status, reason }) => [type, status, reason])).toEqual([
      ["Valid", "True", "Valid"],
      ["HostsAllocated", "True", "Allocated"],
      ["Applied", "True", "Applied"],
      ["KudInstalled", "True", "JobSucceeded"],
      ["Ready", "True", "Ready"],
    ]);
    expect(outcome.status.hostSummary).toBe("2/2");
    expect(outcome.status.hosts).toEqual([
      { host: "metal3/node-1", role: "master", node: "master-1", address: "10.0.0.1", present: true },
      { host: "metal3/node-2", role: "worker", node: "worker-1", address: "10.0.0.2", present: true },
    ]);
    expect(outcome.status.gitops).toEqual({
      kind: "Kustomization",
      namespace: "flux-system",
      name: "edge-a.cluster-a",
      revision: "main@sha1:abc",
    });
    expect(outcome.status.jobs).toEqual([
      {
        name: "kud-cluster-a-0123abcd",
        component: "kud",
        phase: "Succeeded",
        startTime: SUCCEEDED.startTime,
        completionTime: SUCCEEDED.completionTime,
        logs: "kubectl logs -n edge-a job/kud-cluster-a-0123abcd",
      },
    ]);
    for (const found of outcome.status.conditions ?? []) {
      expect(found.lastTransitionTime).toBe(NOW);
      expect(found.observedGeneration).toBe(1);
    }
    // A healthy object seen the first time tells nothing: a reporter starting on a hub is no news.
    expect(outcome.transitions).toEqual([]);
  });

  it("writes nothing and tells nothing when the status it has is the one it would get, later too", () => {
    const first = crStatus(
      cr(provisioningObject()),
      new StatusIndex(facts({ objects: [provisioningObject()] })),
      NOW,
    );
    const stored = provisioningObject({ status: JSON.parse(JSON.stringify(first.status)) });
    const again = crStatus(cr(stored), new StatusIndex(facts({ objects: [stored] })), LATER);
    expect(again.changed).toBe(false);
    expect(again.transitions).toEqual([]);
    expect(again.status).toEqual(first.status);
  });

  it("keeps each condition's lastTransitionTime while its status stays, and follows a new generation", () => {
    const first = crStatus(
      cr(provisioningObject()),
      new StatusIndex(facts({ objects: [provisioningObject()] })),
      NOW,
    );
    const changed = provisioningObject({ generation: 2, status: first.status });
    const next = crStatus(cr(changed), new StatusIndex(facts({ objects: [changed] })), LATER);
    expect(next.changed).toBe(true);
    expect(next.status.observedGeneration).toBe(2);
    for (const found of next.status.conditions ?? []) {
      expect(found.observedGeneration).toBe(2);
      expect(found.lastTransitionTime).toBe(NOW);
    }
    expect(next.transitions).toEqual([]);
  });

  it("names a failed installer Job and how to read its logs, and tells it as a Warning", () => {
    const running = job("kud-cluster-a-0123abcd", "2026-05-01T08:00:00Z", {
      startTime: "2026-05-01T09:00:00Z",
      active: 1,
    });
    const before = crStatus(
      cr(provisioningObject()),
      new StatusIndex(facts({ objects: [provisioningObject()], jobs: [running] })),
      NOW,
    );
    expect(condition(before.status, "KudInstalled")).toMatchObject({ status: "False", reason: "JobRunning" });
    const stored = provisioningObject({ status: before.status });
    const failed = job("kud-cluster-a-0123abcd", "2026-05-01T08:00:00Z", FAILED);
    const after = crStatus(cr(stored), new StatusIndex(facts({ objects: [stored], jobs: [failed] })), LATER);
    expect(condition(after.status, "KudInstalled")).toEqual({
      type: "KudInstalled",
      status: "False",
      observedGeneration: 1,
      // Status stayed False: the time it became False stays.
      lastTransitionTime: NOW,
      reason: "JobFailed",
      message:
        "Job edge-a/kud-cluster-a-0123abcd failed (BackoffLimitExceeded: Job has reached the specified backoff limit); its logs: kubectl logs -n edge-a job/kud-cluster-a-0123abcd",
    });
    expect(condition(after.status, "Ready")).toMatchObject({ status: "False", reason: "JobFailed" });
    expect(after.ready).toBe(false);
    expect(after.transitions).toEqual([
      {
        type: "KudInstalled",
        eventType: "Warning",
        reason: "JobFailed",
        message: `KudInstalled False: ${condition(after.status, "KudInstalled")?.message ?? ""}`,
      },
    ]);
  });

  it("reads a Job's times as a typed client's list gives them (Date objects) as it reads a watch's strings", () => {
    const typed = {
      ...job("kud-cluster-a-0123abcd", "", {}),
      metadata: {
        name: "kud-cluster-a-0123abcd",
        namespace: "edge-a",
        creationTimestamp: new Date("2026-05-01T08:00:00Z"),
        labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": "cluster-a" },
      },
      status: {
        ...SUCCEEDED,
        startTime: new Date(SUCCEEDED.startTime),
        completionTime: new Date(SUCCEEDED.completionTime),
      },
    };
    expect(readJob(typed)).toEqual(readJob(job("kud-cluster-a-0123abcd", "2026-05-01T08:00:00Z", SUCCEEDED)));
  });

  it("takes the latest of a cluster's installer Jobs, and no other cluster's or hand-made Job", () => {
    const old = job("kud-cluster-a-0123abcd", "2026-05-01T08:00:00Z", SUCCEEDED);
    const current = job("kud-cluster-a-feedbeef", "2026-05-01T09:59:00Z", {});
    const other = job("kud-cluster-b-00000000", "2026-05-01T09:59:30Z", FAILED, "cluster-b");
    const handMade = {
      ...job("kud-cluster-a-99999999", "2026-05-01T09:59:40Z", FAILED),
      metadata: {
        name: "kud-cluster-a-99999999",
        namespace: "edge-a",
        creationTimestamp: "2026-05-01T09:59:40Z",
        labels: { "metalsynth.io/cluster": "cluster-a" },
      },
    };
    const outcome = crStatus(
      cr(provisioningObject()),
      new StatusIndex(facts({ objects: [provisioningObject()], jobs: [old, current, other, handMade] })),
      NOW,
    );
    expect(condition(outcome.status, "KudInstalled")).toMatchObject({
      status: "False",
      reason: "JobPending",
    });
    expect(outcome.status.jobs?.map((found) => found.name)).toEqual(["kud-cluster-a-feedbeef"]);
  });

  it("reports a host gone from the inventory with the rule's id and the command that lets its node go", () => {
    const outcome = crStatus(
      cr(provisioningObject()),
      new StatusIndex(
        facts({ objects: [provisioningObject()], inventory: makeInventory(hosts({ without: "node-2" })) }),
      ),
      NOW,
    );
    expect(condition(outcome.status, "Valid")).toMatchObject({ status: "False", reason: "host-vanished" });
    expect(condition(outcome.status, "HostsAllocated")).toMatchObject({
      status: "False",
      reason: "host-vanished",
      message: expect.stringContaining("metalsynth release metal3/node-2") as unknown,
    });
    expect(outcome.status.hostSummary).toBe("1/2");
    expect(outcome.status.hosts?.[1]).toEqual({
      host: "metal3/node-2",
      role: "worker",
      node: "worker-1",
      present: false,
    });
    expect(condition(outcome.status, "Ready")).toMatchObject({ status: "False", reason: "host-vanished" });
    expect(outcome.transitions.map(({ type, eventType, reason }) => [type, eventType, reason])).toEqual([
      ["Valid", "Warning", "host-vanished"],
      ["HostsAllocated", "Warning", "host-vanished"],
    ]);
  });

  it("says when Git has not allocated the cluster yet, or not every node of its spec", () => {
    const none = crStatus(
      cr(provisioningObject()),
      new StatusIndex(facts({ objects: [provisioningObject()], allocations: [] })),
      NOW,
    );
    expect(condition(none.status, "HostsAllocated")).toMatchObject({
      status: "False",
      reason: "NotAllocated",
    });
    expect(none.status.hostSummary).toBe("0/0");
    const partial = { ...ALLOCATION, spec: { kind: "bpa", hosts: [ALLOCATION.spec.hosts[0]] } };
    const some = crStatus(
      cr(provisioningObject()),
      new StatusIndex(facts({ objects: [provisioningObject()], allocations: [partial] })),
      NOW,
    );
    expect(condition(some.status, "HostsAllocated")).toMatchObject({
      status: "False",
      reason: "NotAllocated",
      message: expect.stringContaining("worker worker-1") as unknown,
    });
  });

  it("leaves Ready to the rest when no GitOps agent applied the object, and blocks it when one failed", () => {
    const byHand = provisioningObject({ labels: {} });
    const manual = crStatus(cr(byHand), new StatusIndex(facts({ objects: [byHand] })), NOW);
    expect(condition(manual.status, "Applied")).toMatchObject({ status: "Unknown", reason: "NoGitOpsAgent" });
    expect(manual.ready).toBe(true);
    const failing = readKustomization(
      kustomization({
        lastAppliedRevision: "main@sha1:abc",
        lastAttemptedRevision: "main@sha1:def",
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "ReconciliationFailed",
            message: "Provisioning edge-a/cluster-a dry-run failed",
          },
        ],
      }),
    );
    const outcome = crStatus(
      cr(provisioningObject()),
      new StatusIndex(facts({ objects: [provisioningObject()], agents: failing ? [failing] : [] })),
      NOW,
    );
    expect(condition(outcome.status, "Applied")).toEqual(
      expect.objectContaining({
        status: "False",
        reason: "ApplyFailed",
        message:
          "Flux Kustomization flux-system/edge-a.cluster-a failed to apply revision main@sha1:def: Provisioning edge-a/cluster-a dry-run failed",
      }),
    );
    expect(outcome.status.gitops?.revision).toBe("main@sha1:def");
    expect(condition(outcome.status, "Ready")).toMatchObject({ status: "False", reason: "ApplyFailed" });
  });

  it("reads a SIPCluster's label Job from the hosts' labels once Argo CD deleted the succeeded hook", () => {
    const sip = {
      apiVersion: "airship.airshipit.org/v1",
      kind: "SIPCluster",
      metadata: {
        name: "tenant-a",
        namespace: "edge-sip",
        generation: 3,
        annotations: {
          "argocd.argoproj.io/tracking-id":
            "edge-sip.tenant-a:airship.airshipit.org/SIPCluster:edge-sip/tenant-a",
        },
      },
      spec: {
        nodes: {
          Worker: {
            labelSelector: { matchLabels: { flavor: "worker" } },
            count: { active: 2, standby: 0 },
          },
        },
        services: { jumpHost: [{ nodeInterfaceId: "oam", nodePort: 30022, nodeSSHPrivateKeys: "keys" }] },
      },
    };
    const members = (labelled: boolean) =>
      makeInventory(
        ["w-1", "w-2"].map((name, index) => ({
          name,
          labels: { flavor: "worker" },
          networks: { oam: `10.1.0.${index + 1}` },
          ...(labelled && { sipOwner: { namespace: "edge-sip", name: "tenant-a", nodeType: "Worker" } }),
        })),
      );
    const allocation = {
      apiVersion: "metalsynth.io/v1alpha1",
      kind: "Allocation",
      metadata: { name: "tenant-a", namespace: "edge-sip" },
      spec: {
        kind: "sip",
        hosts: [
          { host: "metal3/w-1", role: "Worker" },
          { host: "metal3/w-2", role: "Worker" },
        ],
      },
    };
    const application = readApplication({
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Application",
      metadata: { name: "edge-sip.tenant-a", namespace: "argocd" },
      status: { sync: { status: "Synced", revision: "4f2c1e" }, operationState: { phase: "Succeeded" } },
    });
    const world = (labelled: boolean, jobs: unknown[]) => {
      const gathered = facts({
        objects: [sip],
        inventory: members(labelled),
        allocations: [allocation],
        jobs,
        agents: application ? [application] : [],
      });
      return new StatusIndex({ ...gathered, allocations: new Set(["edge-sip/tenant-a"]) });
    };
    const labelJob = (status: Record<string, unknown>) => ({
      ...job("bmh-labels-tenant-a-0a1b2c3d", "2026-05-01T08:00:00Z", status, "tenant-a"),
      metadata: {
        name: "bmh-labels-tenant-a-0a1b2c3d",
        namespace: "edge-sip",
        creationTimestamp: "2026-05-01T08:00:00Z",
        labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": "tenant-a" },
      },
    });
    const done = crStatus(cr(sip), world(true, []), NOW);
    expect(done.status.conditions?.map(({ type, status, reason }) => [type, status, reason])).toEqual([
      ["Valid", "True", "Valid"],
      ["HostsAllocated", "True", "Allocated"],
      ["Applied", "True", "Applied"],
      ["HostsLabelled", "True", "HostsLabelled"],
      ["Ready", "True", "Ready"],
    ]);
    expect(done.status.observedGeneration).toBe(3);
    expect(done.status.gitops).toEqual({
      kind: "Application",
      namespace: "argocd",
      name: "edge-sip.tenant-a",
      revision: "4f2c1e",
    });
    expect(done.status.hosts?.map((host) => host.address)).toEqual(["10.1.0.1", "10.1.0.2"]);
    const running = crStatus(cr(sip), world(false, [labelJob({ startTime: NOW, active: 1 })]), NOW);
    expect(condition(running.status, "HostsLabelled")).toMatchObject({
      status: "False",
      reason: "JobRunning",
    });
    const unlabelled = crStatus(cr(sip), world(false, [labelJob(SUCCEEDED)]), NOW);
    expect(condition(unlabelled.status, "HostsLabelled")).toMatchObject({
      status: "False",
      reason: "LabelsMissing",
    });
  });

  it("reports a CR that fails its schema as not Valid, with the rule's id", () => {
    const broken = { ...provisioningObject(), spec: { masters: "not a list" } };
    const outcome = crStatus(cr(broken), new StatusIndex(facts({ objects: [broken] })), NOW);
    expect(condition(outcome.status, "Valid")).toMatchObject({ status: "False", reason: "schema" });
    expect(outcome.ready).toBe(false);
  });
});

describe("the agents' objects", () => {
  it.each([
    [
      "applied",
      {
        lastAppliedRevision: "r1",
        lastAttemptedRevision: "r1",
        conditions: [{ type: "Ready", status: "True", message: "ok" }],
      },
      ["True", "Applied", "r1"],
    ],
    [
      "applied, a health check failing after",
      {
        lastAppliedRevision: "r1",
        lastAttemptedRevision: "r1",
        conditions: [{ type: "Ready", status: "False", reason: "HealthCheckFailed", message: "Job failed" }],
      },
      ["True", "Applied", "r1"],
    ],
    [
      "applying a new revision",
      {
        lastAppliedRevision: "r1",
        lastAttemptedRevision: "r2",
        conditions: [
          { type: "Ready", status: "Unknown", reason: "Progressing", message: "Reconciliation in progress" },
        ],
      },
      ["False", "Applying", "r2"],
    ],
    ["never reconciled", {}, ["False", "Applying", undefined]],
  ])("a Flux Kustomization %s", (_name, status, [applied, reason, revision]) => {
    const view = readKustomization(kustomization(status));
    expect([view?.applied, view?.reason, view?.revision]).toEqual([applied, reason, revision]);
  });

  it.each([
    ["synced", { sync: { status: "Synced", revision: "r1" } }, ["True", "Applied"]],
    [
      "syncing",
      { sync: { status: "OutOfSync", revision: "r2" }, operationState: { phase: "Running" } },
      ["False", "Applying"],
    ],
    [
      "failed to sync",
      {
        sync: { status: "OutOfSync", revision: "r2" },
        operationState: { phase: "Failed", message: "one or more objects failed" },
      },
      ["False", "ApplyFailed"],
    ],
    ["out of sync", { sync: { status: "OutOfSync", revision: "r2" } }, ["False", "OutOfSync"]],
    ["not yet compared", {}, ["Unknown", "AgentUnknown"]],
  ])("an Argo CD Application %s", (_name, status, [applied, reason]) => {
    const view = readApplication({
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Application",
      metadata: { name: "a", namespace: "argocd" },
      status,
    });
    expect([view?.applied, view?.reason]).toEqual([applied, reason]);
  });
});
