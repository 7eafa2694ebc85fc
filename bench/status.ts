/**
 * `npm run bench:status`: the status reporter's writes at a hub of 1,000 clusters over 10,000 hosts
 * (issue #38, decision 0059). The real reporter (informers, rounds, the writer) runs against the
 * test suite's fake API server, which speaks list and watch; each status it writes is stored back
 * and comes back through its watch, as the API server would send it. It measures:
 *
 * - the first start: every CR gets its first status (one write each);
 * - a minute at rest, in real time: what a live hub changes in a minute without anything happening to
 *   a cluster — every Flux Kustomization reconciled once per its 10-minute interval (a tenth of
 *   them), every BareMetalHost's status refreshed once per 10 minutes (a tenth of them), spread over
 *   the minute;
 * - one KUD installer Job finishing: the writes and Events that follow.
 *
 * Counts, not times, are the result (times are printed for the record: they move with the machine).
 */
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseAllDocuments } from "yaml";
import { SIP_LABELS } from "../synth/inventory/bmh.ts";
import { KINDS } from "../synth/schema/kinds.ts";
import type { CrStatus } from "../synth/schema/status.ts";
import type { CrView } from "../synth/status/objects.ts";
import { FakeApiServer, type KubeObject } from "../test/support/fake-apiserver.ts";
import { filesUnder } from "../test/support/files.ts";
import { jsonLogger } from "../webhook/log.ts";
import type { StatusEvent, StatusSink } from "../webhook/status-api.ts";
import { StatusReporter } from "../webhook/status-reporter.ts";
import { generateHubSite } from "./hub-site.ts";

const HOSTS = 10_000;
const CLUSTERS = 1_000;
const BMHS = "/apis/metal3.io/v1alpha1/baremetalhosts";
const HARDWARE = "/apis/metal3.io/v1alpha1/hardwaredata";
const SECRETS = "/api/v1/secrets";
const ALLOCATIONS = "/apis/metalsynth.io/v1alpha1/allocations";
const JOBS = "/apis/batch/v1/jobs";
const KUSTOMIZATIONS = "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations";
const crPath = (kind: keyof typeof KINDS) =>
  `/apis/${KINDS[kind].group}/${KINDS[kind].version}/${KINDS[kind].plural}`;

/** Every object of the YAML files given, lists unwrapped. */
async function objectsOf(files: readonly string[]): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const file of files)
    for (const document of parseAllDocuments(await readFile(file, "utf8"))) {
      const value = document.toJS() as KubeObject | null;
      if (value === null) continue;
      objects.push(...(Array.isArray(value.items) ? (value.items as KubeObject[]) : [value]));
    }
  return objects;
}

const metadataOf = (object: KubeObject) =>
  object.metadata as { name: string; namespace?: string; labels?: Record<string, string> };
const at = (seconds: number) =>
  new Date(Date.UTC(2026, 4, 1, 8, 0, seconds)).toISOString().replace(/\.\d+Z$/, "Z");

/** A Job as the Job controller leaves it: succeeded, or running. */
function withOutcome(job: KubeObject, running: boolean): KubeObject {
  const condition = (type: string) => ({ type, status: "True", reason: "CompletionsReached" });
  return {
    ...job,
    metadata: { ...metadataOf(job), creationTimestamp: at(0) },
    status: running
      ? { startTime: at(1), active: 1 }
      : {
          startTime: at(1),
          completionTime: at(30),
          succeeded: 1,
          conditions: [condition("SuccessCriteriaMet"), condition("Complete")],
        },
  };
}

const flux = (ready: string) => ({
  lastAppliedRevision: "main@sha1:4f2c1e0",
  lastAttemptedRevision: "main@sha1:4f2c1e0",
  lastHandledReconcileAt: ready,
  conditions: [
    {
      type: "Ready",
      status: "True",
      reason: "ReconciliationSucceeded",
      message: "Applied revision: main@sha1:4f2c1e0",
    },
  ],
});

async function main(): Promise<void> {
  process.stdout.write(`generating a hub of ${CLUSTERS} clusters over ${HOSTS} hosts and rendering it…\n`);
  const hub = await generateHubSite(HOSTS, CLUSTERS);
  const rendered = path.join(hub.site, "rendered");
  const server = new FakeApiServer()
    .serve(BMHS, "metal3.io/v1alpha1", "BareMetalHost")
    .serve(HARDWARE, "metal3.io/v1alpha1", "HardwareData")
    .serve(SECRETS, "v1", "Secret")
    .serve(ALLOCATIONS, "metalsynth.io/v1alpha1", "Allocation")
    .serve(JOBS, "batch/v1", "Job")
    .serve(KUSTOMIZATIONS, "kustomize.toolkit.fluxcd.io/v1", "Kustomization")
    .serveCustomResources();
  await server.start();

  const inventory = await objectsOf([hub.inventory]);
  for (const object of inventory) {
    if (object.kind === "BareMetalHost") server.put(BMHS, object);
    else if (object.kind === "HardwareData") server.put(HARDWARE, object);
    else if (object.kind === "Secret")
      server.put(SECRETS, {
        ...object,
        metadata: {
          ...metadataOf(object),
          labels: { ...metadataOf(object).labels, "metalsynth.io/network-data": "true" },
        },
      });
  }
  // Each cluster directory's objects, with the owner labels Flux's apply leaves: its Kustomization's.
  const fluxNames = new Map<string, string>();
  for (const kustomization of await objectsOf(filesUnder(path.join(rendered, "flux")))) {
    const directory = String((kustomization.spec as { path: string }).path).replace(/^\.\//, "");
    fluxNames.set(directory.slice(directory.indexOf("clusters/")), metadataOf(kustomization).name);
    server.put(KUSTOMIZATIONS, { ...kustomization, status: flux(at(0)) });
  }
  const files = filesUnder(path.join(rendered, "clusters")).filter((file) =>
    /\/(allocation|specs|kud-installer|bmh-labels)\.yaml$/.test(file),
  );
  let running: KubeObject | undefined;
  let uid = 0;
  for (const file of files) {
    const directory = path.relative(rendered, path.dirname(file));
    const owner = fluxNames.get(directory);
    if (owner === undefined) throw new Error(`no Flux Kustomization for ${directory}`);
    for (const object of await objectsOf([file])) {
      const metadata = metadataOf(object);
      const owned = {
        ...object,
        metadata: {
          ...metadata,
          labels: {
            ...metadata.labels,
            "kustomize.toolkit.fluxcd.io/name": owner,
            "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
          },
        },
      };
      if (object.kind === "Allocation") {
        server.put(ALLOCATIONS, owned);
        // A SIP cluster's hosts carry its labels: its label Job ran (`succeeded` below).
        const spec = object.spec as {
          kind: string;
          hosts: { host: string; role: string; released?: boolean }[];
        };
        if (spec.kind === "sip")
          for (const entry of spec.hosts.filter((candidate) => candidate.released !== true)) {
            const [namespace, name] = entry.host.split("/");
            const host = server
              .objects(BMHS)
              .find(
                (candidate) =>
                  metadataOf(candidate).name === name && metadataOf(candidate).namespace === namespace,
              );
            if (host === undefined) continue;
            const labels = {
              ...metadataOf(host).labels,
              [SIP_LABELS.namespace]: metadata.namespace ?? "",
              [SIP_LABELS.name]: metadata.name,
              [SIP_LABELS.nodeType]: entry.role,
            };
            server.put(BMHS, { ...host, metadata: { ...metadataOf(host), labels } });
          }
      } else if (object.kind === "Job") {
        const runs = running === undefined && metadata.name.startsWith("kud-");
        const job = withOutcome(owned, runs);
        if (runs) running = job;
        server.put(JOBS, job);
      } else if (typeof object.kind === "string" && object.kind in KINDS)
        server.put(crPath(object.kind as keyof typeof KINDS), {
          ...owned,
          metadata: { ...owned.metadata, uid: `uid-${uid++}`, generation: 1 },
        });
    }
  }
  if (running === undefined) throw new Error("the hub renders no KUD Job");

  let events = 0;
  const writes: string[] = [];
  const sink: StatusSink = {
    async applyStatus(cr: CrView, status: CrStatus) {
      writes.push(cr.key);
      const collection = crPath(cr.kind);
      const stored = server
        .objects(collection)
        .find(
          (object) => metadataOf(object).name === cr.name && metadataOf(object).namespace === cr.namespace,
        );
      if (stored === undefined) throw new Error(`${cr.key} is gone`);
      server.put(collection, { ...stored, status });
      return String(
        (
          server
            .objects(collection)
            .find(
              (object) =>
                metadataOf(object).name === cr.name && metadataOf(object).namespace === cr.namespace,
            )?.metadata as { resourceVersion?: string }
        ).resourceVersion,
      );
    },
    async createEvent(_event: StatusEvent) {
      events += 1;
    },
    async countEvent() {
      events += 1;
      return true;
    },
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  const reporter = await StatusReporter.start({
    kubeConfig: server.kubeConfig(),
    log: jsonLogger(() => {}),
    sink,
  });
  // Settled: two seconds without a round (a round awaits its writes).
  const settle = async () => {
    for (let rounds = -1; rounds !== reporter.rounds;) {
      rounds = reporter.rounds;
      await sleep(2000);
    }
  };
  await settle();
  const firstStart = {
    ms: performance.now() - started,
    writes: writes.length,
    events,
    cpu: process.cpuUsage(cpu),
  };
  const roundsAfterStart = reporter.rounds;
  const roundTime = async () => {
    const text = await reporter.metrics.registry.getSingleMetricAsString(
      "metalsynth_status_round_duration_seconds",
    );
    return {
      sum: Number(/_sum (\S+)/.exec(text)?.[1] ?? "0"),
      count: Number(/_count (\S+)/.exec(text)?.[1] ?? "0"),
    };
  };
  const startRounds = await roundTime();

  // A minute at rest: a tenth of the Kustomizations reconciled, a tenth of the hosts' statuses refreshed.
  const restWrites = writes.length;
  const restEvents = events;
  const restRounds = reporter.rounds;
  const restCpu = process.cpuUsage();
  const kustomizations = server.objects(KUSTOMIZATIONS);
  const hosts = server.objects(BMHS);
  const churn = [
    ...kustomizations
      .filter((_, index) => index % 10 === 0)
      .map((object) => () => server.put(KUSTOMIZATIONS, { ...object, status: flux(at(600)) })),
    ...hosts
      .filter((_, index) => index % 10 === 0)
      .map(
        (object) => () =>
          server.put(BMHS, { ...object, status: { ...(object.status as object), lastUpdated: at(600) } }),
      ),
  ];
  // Spread over a real minute, as a hub makes them.
  const minute = performance.now();
  for (const [index, change] of churn.entries()) {
    change();
    await sleep(Math.max(0, minute + ((index + 1) * 60_000) / churn.length - performance.now()));
  }
  await settle();
  const rest = {
    changes: churn.length,
    writes: writes.length - restWrites,
    events: events - restEvents,
    rounds: reporter.rounds - restRounds,
    cpu: process.cpuUsage(restCpu),
  };

  // One KUD Job finishes.
  const jobWrites = writes.length;
  const jobEvents = events;
  const jobCpu = process.cpuUsage();
  server.put(JOBS, withOutcome(running, false));
  await settle();
  const job = { writes: writes.slice(jobWrites), events: events - jobEvents, cpu: process.cpuUsage(jobCpu) };

  const endRounds = await roundTime();
  const later = { sum: endRounds.sum - startRounds.sum, count: endRounds.count - startRounds.count };
  const average = (rounds: { sum: number; count: number }) =>
    `${((rounds.sum / Math.max(1, rounds.count)) * 1000).toFixed(0)} ms`;
  await reporter.close();
  await server.stop();
  await rm(hub.site, { recursive: true, force: true });
  const seconds = (usage: NodeJS.CpuUsage) => ((usage.user + usage.system) / 1e6).toFixed(2);
  const crs = reporter.statuses().length;
  process.stdout.write(
    [
      "",
      `status reporter at a hub of ${CLUSTERS} clusters (${crs} CRs) over ${HOSTS} hosts, ${server.objects(JOBS).length} Jobs, ${kustomizations.length} Flux Kustomizations`,
      `  first start          ${firstStart.writes} writes (one per CR), ${firstStart.events} Events, ${(firstStart.ms / 1000).toFixed(1)} s wall, ${seconds(firstStart.cpu)} s CPU, ${roundsAfterStart} rounds`,
      `  a minute at rest     ${rest.writes} writes, ${rest.events} Events for ${rest.changes} changes (${kustomizations.filter((_, index) => index % 10 === 0).length} reconciles, ${hosts.filter((_, index) => index % 10 === 0).length} host refreshes): ${rest.rounds} rounds, ${seconds(rest.cpu)} s CPU`,
      `  one KUD Job finishes ${job.writes.length} writes (${job.writes.join(", ")}), ${job.events} Events, ${seconds(job.cpu)} s CPU`,
      `  a round              ${average(startRounds)} at the start (the site evaluated whole), ${average(later)} after (${later.count} rounds: what changed evaluated, the statuses it reaches computed and compared)`,
      "",
    ].join("\n"),
  );
}

await main();
