/**
 * The webhook's memory with `--from-cluster` (decision 0056): the built CLI, run as the chart runs
 * it (two review workers), against an API server that serves a hub site's objects as a cluster holds
 * them: the BareMetalHosts with their status, the networkData Secrets, the CRs and the Allocations,
 * each with the managed fields the API server keeps. What it reports:
 *
 * - resident memory (VmRSS) once ready and idle, and its peak (VmHWM), at 2,000 hosts / 200 clusters
 *   and 10,000 hosts / 1,000 clusters, and at 10,000 hosts / 200 clusters to tell hosts from clusters;
 * - memory per host and per cluster, and the request the chart derives from them
 *   (`charts/webhook/sizing.ts`).
 *
 * The API server is the suite's fake one (test/support/fake-apiserver.ts), in this process; the
 * webhook is a process of its own, so its memory is its own. Run standalone with
 * `node --import tsx bench/webhook-memory.ts`; `benchWebhookMemory()` returns the printable lines.
 */
import { spawn } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { request } from "node:https";
import { parseAllDocuments } from "yaml";
import { WEBHOOK_NODE_OPTIONS } from "../charts/webhook/deployment.ts";
import { MEMORY_PER_CLUSTER_KIB, MEMORY_PER_HOST_KIB, MEMORY_BASE_MIB } from "../charts/webhook/sizing.ts";
import { NETWORK_DATA_LABEL } from "../synth/inventory/network-data.ts";
import { KINDS } from "../synth/schema/kinds.ts";
import { FakeApiServer, type KubeObject } from "../test/support/fake-apiserver.ts";
import { filesUnder } from "../test/support/files.ts";
import { createTestCa, issueServerCertificate } from "../test/webhook/tls-fixture.ts";
import { generateHubSite } from "./hub-site.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
/** Sites measured: hosts, clusters. */
const SITES = [
  [2_000, 200],
  [10_000, 200],
  [10_000, 1_000],
] as const;
/** How long the webhook idles once ready before its memory is read. */
const SETTLE_MS = 10_000;

const BMHS = "/apis/metal3.io/v1alpha1/baremetalhosts";
const HARDWARE = "/apis/metal3.io/v1alpha1/hardwaredata";
const SECRETS = "/api/v1/secrets";
const ALLOCATIONS = "/apis/metalsynth.io/v1alpha1/allocations";

/** One measurement, in MiB. */
interface Measured {
  readonly hosts: number;
  readonly clusters: number;
  readonly rssMiB: number;
  readonly peakMiB: number;
  /** Milliseconds from start to ready. */
  readonly readyMs: number;
}

/**
 * The managed fields the API server would keep for `object`: an entry per writer, each naming every
 * field it set (`fieldsV1` mirrors the object's shape), as an apply by a GitOps agent and the
 * operator's status writes leave them.
 */
function withManagedFields(object: KubeObject, manager: string): KubeObject {
  const shape = (value: unknown): unknown => {
    if (Array.isArray(value))
      return Object.fromEntries(value.map((item, index) => [`i:${index}`, shape(item)]));
    if (typeof value !== "object" || value === null) return {};
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [`f:${key}`, shape(child)]));
  };
  const { status, metadata, ...rest } = object;
  const meta = (metadata ?? {}) as Record<string, unknown>;
  const entries = [
    {
      manager,
      operation: "Apply",
      apiVersion: object.apiVersion,
      time: "2026-11-21T10:00:00Z",
      fieldsType: "FieldsV1",
      fieldsV1: shape({ ...rest, metadata: { labels: meta.labels, annotations: meta.annotations } }),
    },
    ...(status === undefined
      ? []
      : [
          {
            manager: "baremetal-operator",
            operation: "Update",
            apiVersion: object.apiVersion,
            time: "2026-11-21T10:05:00Z",
            fieldsType: "FieldsV1",
            fieldsV1: shape({ status }),
            subresource: "status",
          },
        ]),
  ];
  return { ...object, metadata: { ...meta, managedFields: entries } };
}

/** Every object of the YAML files, `kind: List`s unwrapped. */
async function objectsOf(files: readonly string[]): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(file, "utf8"))) {
      const value = document.toJS() as KubeObject | null;
      if (value === null) continue;
      const items = value.items;
      objects.push(...(Array.isArray(items) ? (items as KubeObject[]) : [value]));
    }
  }
  return objects;
}

/** VmRSS and VmHWM of process `pid`, in MiB. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
}

/** GET `url` trusting `ca`: the status code, 0 when nothing answers. */
function probe(url: string, ca: string): Promise<number> {
  return new Promise((resolve) => {
    const outgoing = request(url, { ca, agent: false }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    outgoing.on("error", () => resolve(0));
    outgoing.end();
  });
}

/** The webhook's memory once ready and idle with the hub of `hosts` hosts and `clusters` clusters. */
async function measure(hosts: number, clusters: number): Promise<Measured> {
  const hub = await generateHubSite(hosts, clusters);
  const apiServer = new FakeApiServer()
    .serve(BMHS, "metal3.io/v1alpha1", "BareMetalHost")
    .serve(HARDWARE, "metal3.io/v1alpha1", "HardwareData")
    .serve(SECRETS, "v1", "Secret")
    .serve(ALLOCATIONS, "metalsynth.io/v1alpha1", "Allocation")
    .serveCustomResources();
  try {
    await apiServer.start();
    for (const object of await objectsOf([hub.inventory])) {
      if (object.kind === "BareMetalHost")
        apiServer.put(BMHS, withManagedFields(object, "kustomize-controller"));
      else if (object.kind === "Secret") {
        const metadata = object.metadata as Record<string, unknown>;
        const labels = { ...(metadata.labels as object | undefined), [NETWORK_DATA_LABEL]: "true" };
        apiServer.put(
          SECRETS,
          withManagedFields({ ...object, metadata: { ...metadata, labels } }, "kustomize-controller"),
        );
      }
    }
    const kinds = new Map<string, string>(
      Object.values(KINDS).map(({ group, version, plural, kind }) => [
        kind,
        `/apis/${group}/${version}/${plural}`,
      ]),
    );
    for (const object of await objectsOf(filesUnder(path.join(hub.site, "specs")))) {
      const collection = kinds.get(object.kind as string);
      if (collection !== undefined)
        apiServer.put(collection, withManagedFields(object, "kustomize-controller"));
    }
    const allocations = filesUnder(path.join(hub.site, "rendered", "clusters")).filter(
      (file) => path.basename(file) === "allocation.yaml",
    );
    for (const object of await objectsOf(allocations))
      apiServer.put(ALLOCATIONS, withManagedFields(object, "kustomize-controller"));

    const kubeconfig = path.join(hub.site, "kubeconfig");
    await writeFile(kubeconfig, apiServer.kubeConfig().exportConfig());
    const ca = await createTestCa();
    const certificate = await issueServerCertificate(ca, "webhook", ["127.0.0.1"]);
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        path.join(REPO, "bin", "metalsynth.js"),
        "webhook",
        "--from-cluster",
        "--kubeconfig",
        kubeconfig,
        "--tls-cert",
        certificate.certFile,
        "--tls-key",
        certificate.keyFile,
        "--host",
        "127.0.0.1",
        "--port",
        String(port),
      ],
      // With the Node.js options the chart gives the webhook's container.
      { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, NODE_OPTIONS: WEBHOOK_NODE_OPTIONS } },
    );
    try {
      while ((await probe(`https://127.0.0.1:${port}/readyz`, ca.cert)) !== 200) {
        if (child.exitCode !== null) throw new Error(`the webhook exited with ${child.exitCode}`);
        await sleep(200);
      }
      const readyMs = performance.now() - started;
      await sleep(SETTLE_MS);
      const { rss, peak } = await memoryOf(child.pid ?? 0);
      return { hosts, clusters, rssMiB: rss, peakMiB: peak, readyMs };
    } finally {
      child.kill("SIGKILL");
    }
  } finally {
    await apiServer.stop();
    await rm(hub.site, { recursive: true, force: true });
  }
}

/** One printable line per figure. */
export async function benchWebhookMemory(): Promise<string[]> {
  const measured: Measured[] = [];
  for (const [hosts, clusters] of SITES) measured.push(await measure(hosts, clusters));
  const [small, manyHosts, manyClusters] = measured as [Measured, Measured, Measured];
  const perHostKiB = ((manyHosts.rssMiB - small.rssMiB) / (manyHosts.hosts - small.hosts)) * 1024;
  const perClusterKiB =
    ((manyClusters.rssMiB - manyHosts.rssMiB) / (manyClusters.clusters - manyHosts.clusters)) * 1024;
  const baseMiB = small.rssMiB - (small.hosts * perHostKiB + small.clusters * perClusterKiB) / 1024;
  const mib = (value: number) => `${value.toFixed(0)} MiB`;
  return [
    ...measured.map(
      ({ hosts, clusters, rssMiB, peakMiB, readyMs }) =>
        `--from-cluster, ${hosts} hosts / ${clusters} clusters: RSS ${mib(rssMiB)} ready and idle (peak ${mib(peakMiB)}), ready after ${(readyMs / 1000).toFixed(1)} s`,
    ),
    `memory per host ${perHostKiB.toFixed(1)} KiB, per cluster ${perClusterKiB.toFixed(1)} KiB, base ${mib(baseMiB)} (the chart's formula: ${MEMORY_BASE_MIB} MiB + ${MEMORY_PER_HOST_KIB} KiB a host + ${MEMORY_PER_CLUSTER_KIB} KiB a cluster)`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const line of await benchWebhookMemory()) console.log(line);
}
