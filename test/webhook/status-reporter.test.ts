/**
 * The status reporter's loop (decision 0059) against the fake API server's list and watch: what it
 * writes and when, with a sink that records each write and stores it back as the API server would.
 * The real API server, the agents and RBAC are test/e2e/status.test.ts's.
 */
import { afterEach, describe, expect, it } from "vitest";
import { KINDS } from "../../synth/schema/kinds.ts";
import type { CrStatus } from "../../synth/schema/status.ts";
import type { CrView } from "../../synth/status/objects.ts";
import type { AllocationTrust } from "../../webhook/allocation-trust.ts";
import { DEFAULT_ALLOCATION_TRUST } from "../../webhook/allocation-trust.ts";
import { jsonLogger } from "../../webhook/log.ts";
import { EventRecorder, SinkError, type StatusEvent, type StatusSink } from "../../webhook/status-api.ts";
import { StatusReporter } from "../../webhook/status-reporter.ts";
import { allocation } from "../builders/allocations.ts";
import { makeBmh } from "../builders/inventory.ts";
import { provisioning } from "../builders/reviews.ts";
import { FakeApiServer, type KubeObject } from "../support/fake-apiserver.ts";
import { eventually } from "./harness.ts";

const BMHS = "/apis/metal3.io/v1alpha1/baremetalhosts";
const ALLOCATIONS = "/apis/metalsynth.io/v1alpha1/allocations";
const JOBS = "/apis/batch/v1/jobs";
const PROVISIONINGS = `/apis/${KINDS.Provisioning.group}/${KINDS.Provisioning.version}/${KINDS.Provisioning.plural}`;
const MASTER_MAC = "aa:00:00:00:00:01";

function server(): FakeApiServer {
  return new FakeApiServer()
    .serve(BMHS, "metal3.io/v1alpha1", "BareMetalHost")
    .serve("/apis/metal3.io/v1alpha1/hardwaredata", "metal3.io/v1alpha1", "HardwareData")
    .serve("/api/v1/secrets", "v1", "Secret")
    .serve(ALLOCATIONS, "metalsynth.io/v1alpha1", "Allocation")
    .serve(JOBS, "batch/v1", "Job")
    .serveCustomResources();
}

/** A KUD Job of cluster-a as the Job controller leaves it. */
function kudJob(succeeded: boolean): KubeObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: "kud-cluster-a-0123abcd",
      namespace: "edge-a",
      creationTimestamp: "2026-05-01T08:00:00Z",
      labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": "cluster-a" },
    },
    status: succeeded
      ? {
          startTime: "2026-05-01T08:00:01Z",
          completionTime: "2026-05-01T08:10:00Z",
          succeeded: 1,
          conditions: [
            { type: "SuccessCriteriaMet", status: "True" },
            { type: "Complete", status: "True" },
          ],
        }
      : { startTime: "2026-05-01T08:00:01Z", active: 1 },
  };
}

/** cluster-a: one master on node-1, its Allocation, its KUD Job running; node-2 belongs to no one. */
function loadSite(api: FakeApiServer): void {
  api.put(BMHS, makeBmh({ name: "node-1", nics: [{ name: "eth0", mac: MASTER_MAC, ip: "10.0.0.1" }] }));
  api.put(BMHS, makeBmh({ name: "node-2" }));
  const cr = provisioning({ name: "cluster-a", masters: [["master-1", { "mac-address": MASTER_MAC }]] });
  api.put(PROVISIONINGS, {
    ...cr,
    metadata: { ...(cr.metadata as object), uid: "uid-a", generation: 1 },
  });
  api.put(
    ALLOCATIONS,
    allocation("edge-a", "cluster-a", "bpa", [{ host: "metal3/node-1", node: "master-1", role: "master" }]),
  );
  api.put(JOBS, kudJob(false));
}

/** A sink that stores each status back in the fake server (so the watch delivers it) and records it. */
class RecordingSink implements StatusSink {
  readonly writes: { key: string; status: CrStatus }[] = [];
  readonly events: StatusEvent[] = [];
  /** Writes to refuse, each with a 500, before writing again. */
  refusals = 0;

  constructor(private readonly api: FakeApiServer) {}

  async applyStatus(cr: CrView, status: CrStatus): Promise<string | undefined> {
    if (this.refusals > 0) {
      this.refusals -= 1;
      throw new SinkError("500 etcd is sad", 500);
    }
    this.writes.push({ key: cr.key, status });
    const stored = this.api
      .objects(PROVISIONINGS)
      .find((object) => (object.metadata as { name: string }).name === cr.name);
    this.api.put(PROVISIONINGS, { ...stored, status });
    return (this.api.objects(PROVISIONINGS)[0]?.metadata as { resourceVersion?: string }).resourceVersion;
  }

  async createEvent(event: StatusEvent): Promise<void> {
    this.events.push(event);
  }

  async countEvent(): Promise<boolean> {
    return true;
  }
}

describe("the status reporter's loop", () => {
  let api: FakeApiServer;
  let reporter: StatusReporter | undefined;
  afterEach(async () => {
    await reporter?.close();
    await api.stop();
  });

  async function start(sink: StatusSink): Promise<StatusReporter> {
    await api.start();
    reporter = await StatusReporter.start({
      kubeConfig: api.kubeConfig(),
      log: jsonLogger(() => {}),
      sink,
      roundDelayMs: 20,
      retryDelayMs: 50,
    });
    return reporter;
  }

  const condition = (status: CrStatus | undefined, type: string) =>
    status?.conditions?.find((found) => found.type === type);

  it("writes a status once, nothing for a change it does not read, and again when a Job it reads finishes", async () => {
    api = server();
    loadSite(api);
    const sink = new RecordingSink(api);
    const running = await start(sink);
    await eventually(async () => sink.writes.length === 1, "the first status", 10_000);
    expect(condition(sink.writes[0]?.status, "KudInstalled")).toMatchObject({
      status: "False",
      reason: "JobRunning",
    });
    // The write comes back through the watch; then another host gets a label: a round, no write.
    await eventually(
      async () => running.statuses()[0]?.cr.status !== undefined,
      "the write delivered",
      10_000,
    );
    const rounds = running.rounds;
    api.put(BMHS, makeBmh({ name: "node-2", labels: { "rack-audit": "2026-05" } }));
    await eventually(async () => running.rounds > rounds, "a round after the change", 10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sink.writes).toHaveLength(1);
    api.put(JOBS, kudJob(true));
    await eventually(async () => sink.writes.length === 2, "the status after the Job", 10_000);
    expect(condition(sink.writes[1]?.status, "KudInstalled")).toMatchObject({
      status: "True",
      reason: "JobSucceeded",
    });
    expect(condition(sink.writes[1]?.status, "Ready")).toMatchObject({ status: "True" });
    // JobRunning → JobSucceeded, and Ready turning True: two Events.
    expect(sink.events.map((event) => [event.reason, event.type])).toEqual([
      ["JobSucceeded", "Normal"],
      ["Ready", "Normal"],
    ]);
  });

  it("computes nothing while a collection is still listing: its first status already knows the Job", async () => {
    api = server();
    loadSite(api);
    api.failLists.set(JOBS, 3);
    const sink = new RecordingSink(api);
    await start(sink);
    await eventually(async () => sink.writes.length === 1, "the first status", 15_000);
    expect(api.lists(JOBS)).toBeGreaterThan(3);
    expect(condition(sink.writes[0]?.status, "KudInstalled")).toMatchObject({ reason: "JobRunning" });
  });

  it("writes again a status the API server refused", async () => {
    api = server();
    loadSite(api);
    const sink = new RecordingSink(api);
    sink.refusals = 2;
    const running = await start(sink);
    await eventually(async () => sink.writes.length === 1, "the status, after two refusals", 10_000);
    expect(sink.refusals).toBe(0);
    const written = await running.metrics.registry.getSingleMetricAsString("metalsynth_status_writes_total");
    expect(written).toContain('metalsynth_status_writes_total{kind="Provisioning",result="failed"} 2');
    expect(written).toContain('metalsynth_status_writes_total{kind="Provisioning",result="written"} 1');
  });

  /** An Allocation whose spec `manager` wrote, as the API server's managed fields record it. */
  function writtenBy(object: ReturnType<typeof allocation>, manager: string) {
    const managedFields = [{ manager, operation: "Apply", fieldsV1: { "f:spec": {} } }];
    return { ...object, metadata: { ...object.metadata, managedFields } };
  }

  /** cluster-a's status after the first round, computed without writing. */
  async function firstStatus(trust?: AllocationTrust): Promise<CrStatus> {
    await api.start();
    reporter = await StatusReporter.start({
      kubeConfig: api.kubeConfig(),
      log: jsonLogger(() => {}),
      roundDelayMs: 20,
      retryDelayMs: 50,
      ...(trust && { allocationTrust: trust }),
    });
    await reporter.nextRound();
    const [reported] = reporter.statuses();
    if (reported === undefined) throw new Error("no status computed");
    return reported.outcome.status;
  }

  const hostsAllocated = (status: CrStatus) =>
    status.conditions?.find((found) => found.type === "HostsAllocated");

  /** The site, and another cluster's Allocation in namespace `elsewhere` claiming node-1 too. */
  function siteWithIntruder(): FakeApiServer {
    const served = server();
    loadSite(served);
    served.put(
      ALLOCATIONS,
      allocation("elsewhere", "intruder", "bpa", [
        { host: "metal3/node-1", node: "master-1", role: "master" },
      ]),
    );
    return served;
  }

  it("ignores an Allocation outside the declared namespaces: it is not even read", async () => {
    api = siteWithIntruder();
    expect(hostsAllocated(await firstStatus())).toMatchObject({ status: "False" });
    await reporter?.close();
    await api.stop();

    api = siteWithIntruder();
    const status = await firstStatus({ ...DEFAULT_ALLOCATION_TRUST, namespaces: ["edge-a"] });
    expect(hostsAllocated(status)).toMatchObject({ status: "True", reason: "Allocated" });
    const listed = api.requests.map((line) => line.split(" ")[1]?.split("?")[0]);
    expect(listed).toContain("/apis/metalsynth.io/v1alpha1/namespaces/edge-a/allocations");
    expect(listed).not.toContain(ALLOCATIONS);
  });

  it("takes an Allocation whose spec a stranger wrote as damaged, as the webhook does", async () => {
    api = server();
    loadSite(api);
    const own = api.objects(ALLOCATIONS)[0] as ReturnType<typeof allocation>;
    api.put(ALLOCATIONS, writtenBy(own, "kustomize-controller"));
    expect(hostsAllocated(await firstStatus(DEFAULT_ALLOCATION_TRUST))).toMatchObject({ status: "True" });
    await reporter?.close();
    await api.stop();

    api = server();
    loadSite(api);
    api.put(ALLOCATIONS, writtenBy(own, "kubectl-edit"));
    expect(hostsAllocated(await firstStatus(DEFAULT_ALLOCATION_TRUST))).toMatchObject({
      status: "False",
      reason: "lock-invalid",
      message: expect.stringContaining('not trusted: its spec was written by "kubectl-edit"'),
    });
  });
});

describe("Events", () => {
  const cr = {
    kind: "Provisioning",
    namespace: "edge-a",
    name: "cluster-a",
    key: "Provisioning/edge-a/cluster-a",
    uid: "uid-a",
  } as const;
  const failed = {
    type: "KudInstalled",
    eventType: "Warning",
    reason: "JobFailed",
    message: "KudInstalled False: Job edge-a/kud-… failed",
  } as const;

  function sink(expired = false) {
    const calls: string[] = [];
    const recording: StatusSink = {
      applyStatus: () => Promise.resolve(undefined),
      createEvent: async (event) => void calls.push(`create ${event.metadata.name} ${event.count}`),
      countEvent: async (_namespace, name, count) => {
        calls.push(`count ${name} ${count}`);
        return !expired;
      },
    };
    return { calls, recording };
  }

  it("counts a repeat on the Event it made, as kubectl describe shows (x2)", async () => {
    const { calls, recording } = sink();
    const recorder = new EventRecorder(recording, "metalsynth-status-0", () => 1_700_000_000_000);
    expect(
      await recorder.record(
        { ...cr, generation: 1, labels: {}, annotations: {}, conditions: [], status: undefined },
        failed,
      ),
    ).toBe(1);
    expect(
      await recorder.record(
        { ...cr, generation: 1, labels: {}, annotations: {}, conditions: [], status: undefined },
        failed,
      ),
    ).toBe(2);
    expect(
      await recorder.record(
        { ...cr, generation: 1, labels: {}, annotations: {}, conditions: [], status: undefined },
        { ...failed, message: "another" },
      ),
    ).toBe(1);
    const [first] = calls;
    const name = first?.split(" ")[1] ?? "";
    expect(name).toMatch(/^cluster-a\.[0-9a-f]+$/);
    expect(calls).toEqual([
      `create ${name} 1`,
      `count ${name} 2`,
      expect.stringMatching(/^create cluster-a\.[0-9a-f]+ 1$/),
    ]);
  });

  it("makes a new Event when the one it counted on expired", async () => {
    const { calls, recording } = sink(true);
    const recorder = new EventRecorder(recording, "metalsynth-status-0", () => 1_700_000_000_000);
    const view = { ...cr, generation: 1, labels: {}, annotations: {}, conditions: [], status: undefined };
    await recorder.record(view, failed);
    expect(await recorder.record(view, failed)).toBe(1);
    expect(calls.map((call) => call.split(" ")[0])).toEqual(["create", "count", "create"]);
  });
});
