/**
 * The webhook's performance figures (docs/contract.md §8), with 10,000 generated hosts and no CRs, or with a
 * hub's site loaded (bench/hub-site.ts):
 *
 * - the rules for one CR (one object reviewed against the indexed inventory): median and p99 (with
 *   a hub, bench/hub.ts gives these);
 * - with a hub, requests over TLS one at a time: p50 and p99;
 * - the server over TLS at a steady 500 requests/s, after two seconds of it on the same kept-alive
 *   connections: latency from each request's scheduled start,
 *   so a stall shows up in every request it delays, with the longest event-loop stall of the server
 *   and of the load generator, so a stall of the generator itself is told apart; in rounds that
 *   take in turn the webhook, the same reviewing in its server's thread and the echo below, so what
 *   handing each request to a review worker and back adds to the tail is measured on the same
 *   minutes, beside what the stack's ceiling itself answers at that rate;
 * - peak throughput of the webhook against a bare TLS express endpoint that parses the same body
 *   and answers "allowed" (the stack's ceiling), and against the same webhook reviewing in its
 *   server's thread (`InlineReviews`: what the review workers cost or gain), in rounds that take the
 *   three in turn, so a neighbour's load on the machine falls on all three alike, each with the
 *   servers' CPU time per request;
 * - the steady run again with three pathological CRs in the stream (decision 0056): the issue's
 *   Provisioning of 20,000 workers, which the schema's bounds refuse, one of 1,000 workers no host
 *   fits that ask alike, judged host by host once, and one of 1,000 that each ask a different CPU
 *   count, each judged on the hosts open to the cluster, near the review budget; the other
 *   requests' latencies and each one's answer.
 *
 * The webhook reviews in its review workers, as `metalsynth webhook` does.
 *
 * The servers run in a process of their own, as the webhook and the API server do: not their event
 * loop, and not their address space either (decision 0027).
 * Run standalone with `node --import tsx --expose-gc bench/webhook.ts`; `benchWebhook()` returns the
 * printable lines. With `--stream N` it runs only the stream with the pathological CRs, N times on
 * fresh servers (`benchStream`), and prints the median of the others' p99.
 */
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { readFile } from "node:fs/promises";
import { Agent, createServer, request } from "node:https";
import { createSecureContext, type SecureContext } from "node:tls";
import type { AddressInfo } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import express from "express";
import { generateBmhs } from "../test/builders/inventory.ts";
import { createTestCa, issueServerCertificate, SERVICE_NAME } from "../test/webhook/tls-fixture.ts";
import { admissionReview, provisioning, type Cr } from "../test/builders/reviews.ts";
import { WEBHOOK_NODE_OPTIONS } from "../charts/webhook/deployment.ts";
import { hubProvisioning, type HubSite } from "./hub-site.ts";
import { loadHub } from "./hub.ts";
import {
  buildInventory,
  EMPTY_LOCK,
  jsonLogger,
  ReviewPool,
  SiteReviewer,
  startWebhook,
  tuneHeapForReviews,
  WebhookState,
  type Inventory,
} from "./product.ts";
import { median, milliseconds, percentile, settleHeap, timeRuns } from "./stats.ts";

const HOSTS = 10_000;
const RULE_RUNS = 2000;
const STEADY_RATE = 500;
const STEADY_SECONDS = 10;
/** Seconds of the steady rate sent before the measured run, on the same connections. */
const WARM_SECONDS = 2;
const PEAK_SECONDS = 5;
/** Rounds of the peak comparison: webhook, webhook reviewing in its thread, echo, in turn. */
const PEAK_ROUNDS = 3;
/** Rounds of the steady comparison: webhook, webhook reviewing in its thread, in turn. */
const STEADY_ROUNDS = 3;
const PEAK_IN_FLIGHT = 32;
const SEQUENTIAL_REQUESTS = 2000;

/** The generated inventory (the same seed everywhere, so every run measures the same hosts). */
function inventory(): Inventory {
  const objects = [...generateBmhs(HOSTS, { seed: 8 })].map((value, index) => ({
    value,
    source: { file: "bench", line: index + 1, column: 1 },
  }));
  return buildInventory(objects).inventory;
}

/** The MAC of a free, installed host with an address: a master the inventory accepts. */
function freeMac(hosts: Inventory): string {
  const nic = hosts.hosts.find(
    (candidate) => candidate.osInstalled && !candidate.sipOwner && candidate.nics[0]?.ipv4 !== undefined,
  )?.nics[0];
  if (nic === undefined) throw new Error("no free installed host in the generated inventory");
  return nic.mac;
}

/** A CR the inventory accepts: a master by `mac` (see {@link freeMac}), a worker by resources. */
function acceptedCr(mac: string): Cr {
  return provisioning({
    name: "bench",
    masters: [["master-1", { "mac-address": mac, cpu: 8 }]],
    workers: [["worker-1", { cpu: 16, memory: "64Gi" }]],
  });
}

/** Median and p99 of the rules for one CR, allowed and denied. */
function benchRules(hosts: Inventory): string[] {
  const reviewer = new SiteReviewer({ inventory: hosts, resources: [], lock: EMPTY_LOCK });
  const mac = freeMac(hosts);
  const typo = `${mac.slice(0, -1)}${mac.endsWith("f") ? "e" : "f"}`;
  const cases: [string, Cr][] = [
    ["allowed (MAC + best fit)", acceptedCr(mac)],
    [
      "denied, MAC one digit off",
      provisioning({ name: "bench", masters: [["master-1", { "mac-address": typo }]] }),
    ],
    [
      "denied, MAC of no host near",
      provisioning({ name: "bench", masters: [["master-1", { "mac-address": "aa:bb:cc:dd:ee:ff" }]] }),
    ],
  ];
  return cases.map(([name, cr]) => {
    const times = timeRuns(() => reviewer.review(cr), RULE_RUNS);
    return `rules, one CR vs ${HOSTS} hosts, ${name}: median ${milliseconds(percentile(times, 0.5))}, p99 ${milliseconds(percentile(times, 0.99))} (${RULE_RUNS} runs)`;
  });
}

/** What the load generator asks the servers' process. */
type ServerMessage = "stop" | "measure stalls" | "longest stall" | "cpu time";

/** The servers' process, and how the load generator asks it something (it answers by message). */
interface Servers {
  readonly process: ChildProcess;
  ask(message: ServerMessage): void;
}

/** In the servers' process: its {@link ServeData}, as JSON. */
const SERVE_DATA = "METALSYNTH_BENCH_SERVE";

/**
 * The longest time this process's event loop went without running its callbacks, from now or the
 * last `reset`. Requests in the steady run are timed from when they were due, so a stall of the load
 * generator (descheduled on a machine whose two vCPUs it shares with the servers and their
 * collector's threads) counts against the webhook too; printing both processes' longest stall tells
 * which one it was.
 */
function loopStalls(): IntervalHistogram & { longestMs(): number } {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return Object.assign(histogram, { longestMs: () => histogram.max / 1e6 });
}

interface Ports {
  readonly webhook: number;
  /** The same webhook and state, reviewing in the server's thread. */
  readonly inline: number;
  readonly echo: number;
}

/** What the servers' process serves: TLS files and a hub site (without one, generated hosts only). */
interface ServeData {
  readonly certFile: string;
  readonly keyFile: string;
  readonly hub?: HubSite;
}

/**
 * In the servers' process: the webhook with the hub or the generated hosts, the same webhook
 * reviewing in its thread, and the echo beside them.
 */
async function serve(data: ServeData): Promise<void> {
  const files = { certFile: data.certFile, keyFile: data.keyFile };
  // As `metalsynth webhook` does before it evaluates anything.
  tuneHeapForReviews();
  let state: WebhookState;
  if (data.hub) state = await loadHub(data.hub);
  else {
    state = new WebhookState();
    state.update({ inventory: inventory() });
  }
  const log = jsonLogger(() => {});
  const reviews = new ReviewPool({ state, log });
  const webhook = await startWebhook({
    host: "127.0.0.1",
    port: 0,
    tls: files,
    state,
    reviews,
    log,
    drainDelayMs: 0,
  });
  const inline = await startWebhook({ host: "127.0.0.1", port: 0, tls: files, state, log, drainDelayMs: 0 });
  // Started once the workers have evaluated the site, as a pod is ready once they have.
  while (!reviews.status().ready) await new Promise((resolve) => setTimeout(resolve, 50));
  const echoApp = express();
  echoApp.post(
    "/validate/provisioning",
    express.json({ limit: "3mb", type: () => true }),
    (incoming, response) => {
      const uid = (incoming.body as { request?: { uid?: unknown } }).request?.uid;
      response.json({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid, allowed: true },
      });
    },
  );
  const echo = createServer(
    { cert: await readFile(files.certFile), key: await readFile(files.keyFile), minVersion: "TLSv1.2" },
    echoApp,
  );
  echo.listen(0, "127.0.0.1");
  await once(echo, "listening");
  const ports: Ports = {
    webhook: webhook.port,
    inline: inline.port,
    echo: (echo.address() as AddressInfo).port,
  };
  if (process.send === undefined)
    throw new Error("the bench servers run in a process forked with an IPC channel");
  const tell = (message: Ports | number) => process.send?.(message);
  const stalls = loopStalls();
  tell(ports);
  await new Promise<void>((resolve) => {
    const answer = (message: ServerMessage) => {
      if (message === "measure stalls") stalls.reset();
      else if (message === "longest stall") tell(stalls.longestMs());
      else if (message === "cpu time") {
        const { user, system } = process.cpuUsage();
        tell(user + system);
      } else {
        process.off("message", answer);
        resolve();
      }
    };
    process.on("message", answer);
  });
  stalls.disable();
  echo.close();
  echo.closeAllConnections();
  await webhook.shutdown();
  await inline.shutdown();
  // The IPC channel would keep this process alive.
  process.disconnect();
}

/**
 * The load generator's keep-alive connections to a server, up to `maxSockets`, all trusting the test
 * CA through the one context `trust`.
 */
function connections(trust: SecureContext, maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets, secureContext: trust, servername: SERVICE_NAME });
}

/** POSTs `body` and resolves when the whole answer is in. */
function post(port: number, agent: Agent, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/validate/provisioning",
        agent,
        headers: { "content-type": "application/json" },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** POSTs `body`; the answer's status and text. */
function postForText(port: number, agent: Agent, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/validate/provisioning",
        agent,
        headers: { "content-type": "application/json" },
      },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** A Provisioning of `workers` workers by resources, worker `index` asking `cpu(index)` CPUs. */
function manyWorkers(workers: number, cpu: (index: number) => number): Cr {
  return provisioning({
    name: "pathological",
    masters: [["master-1", { cpu: 8 }]],
    workers: Array.from(
      { length: workers },
      (_, index) => [`worker-${index}`, { cpu: cpu(index), memory: "64Gi" }] as const,
    ),
  });
}

/**
 * Sends `body` at {@link STEADY_RATE} for {@link STEADY_SECONDS} over `agent`, and returns each
 * request's latency measured from when it was due (from when it was sent, if that was earlier), so
 * a stall counts in every request it delays (no coordinated omission). The first
 * {@link WARM_SECONDS} are sent the same way and not measured: the API server reaches a webhook over
 * connections it keeps alive for 90 s, and a run that began with none would measure the handshakes
 * of the connections a burst opens, the load generator's above all: 55 opened in 140 ms stalled its
 * event loop 101 ms (bench journal, 2026-11-29).
 */
async function paced(
  send: () => Promise<number>,
  servers: Servers,
  onMeasured?: () => void,
): Promise<PacedRun> {
  const interval = 1000 / STEADY_RATE;
  const clientStalls = loopStalls();
  const warmRequests = STEADY_RATE * WARM_SECONDS;
  const latencies: number[] = [];
  const slowAt: number[] = [];
  const pending: Promise<void>[] = [];
  const started = performance.now();
  for (let index = 0; index < warmRequests + STEADY_RATE * STEADY_SECONDS; index++) {
    if (index === warmRequests) {
      clientStalls.reset();
      servers.ask("measure stalls");
      onMeasured?.();
    }
    const due = started + index * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const measured = index >= warmRequests;
    // Timed from when it was due, so a stall of this generator counts in every request it delays;
    // but a request sent early (a wait under a timer's millisecond is not waited) from when it was
    // sent: timed from due, it would be credited the time it had in hand.
    const from = Math.min(due, performance.now());
    pending.push(
      send().then((status) => {
        if (status !== 200) throw new Error(`webhook answered ${status}`);
        if (!measured) return;
        const latency = performance.now() - from;
        latencies.push(latency);
        if (latency > SLOW_MS) slowAt.push((index - warmRequests) / STEADY_RATE);
      }),
    );
  }
  await Promise.all(pending);
  return {
    latencies: latencies.sort((a, b) => a - b),
    slow: slowSpans(slowAt),
    stalls: await longestStalls(servers, clientStalls),
  };
}

/**
 * A paced run: its latencies (ascending), when its slow requests were due, and the longest
 * event-loop stall of the servers' process and of the load generator over its measured part.
 */
interface PacedRun {
  readonly latencies: number[];
  /** `none`, or how many requests took over {@link SLOW_MS} and the spans they were due in. */
  readonly slow: string;
  readonly stalls: string;
}

/** A latency over this is slow: §8's p99 bar. */
const SLOW_MS = 10;

/**
 * `at` (seconds into the measured run, each a slow request's due time) as spans of tenths of a
 * second: `54 over 10 ms, due at 2.0–2.2 s, 6.1 s`. Slow requests come in bursts; where the bursts
 * fall beside the pathological CRs' times tells what delayed them.
 */
function slowSpans(at: number[]): string {
  if (at.length === 0) return `none over ${SLOW_MS} ms`;
  const tenths = [...new Set(at.map((seconds) => Math.floor(seconds * 10)))].sort((a, b) => a - b);
  const spans: { first: number; last: number }[] = [];
  for (const tenth of tenths) {
    const span = spans.at(-1);
    if (span !== undefined && tenth === span.last + 1) span.last = tenth;
    else spans.push({ first: tenth, last: tenth });
  }
  const text = ({ first, last }: { first: number; last: number }) =>
    first === last
      ? `${(first / 10).toFixed(1)} s`
      : `${(first / 10).toFixed(1)}–${(last / 10).toFixed(1)} s`;
  return `${at.length} over ${SLOW_MS} ms, due at ${spans.map(text).join(", ")}`;
}

function latencyFigures(latencies: readonly number[]): string {
  return `p50 ${milliseconds(percentile(latencies, 0.5))}, p99 ${milliseconds(percentile(latencies, 0.99))}, max ${milliseconds(latencies.at(-1) ?? Number.NaN)}`;
}

/**
 * The steady run with `pathological` requests sent at their times (seconds into the measured run):
 * the latencies of the others, and what each pathological one was answered, and when.
 */
async function steadyWithPathological(
  port: number,
  trust: SecureContext,
  body: string,
  pathological: readonly { readonly name: string; readonly at: number; readonly cr: Cr }[],
  servers: Servers,
): Promise<{ p99: number; lines: string[] }> {
  const agent = connections(trust, 64);
  // Built before the run: stringifying 850 KiB while it runs would stall the load generator.
  const bodies = pathological.map(({ name, at, cr }) => ({
    name,
    at,
    text: JSON.stringify(admissionReview(cr)),
  }));
  const answers: Promise<string>[] = [];
  const sendPathological = () => {
    for (const { name, at, text } of bodies)
      answers.push(
        (async () => {
          await new Promise((resolve) => setTimeout(resolve, at * 1000));
          const sent = performance.now();
          const answer = await postForText(port, agent, text);
          const message = (JSON.parse(answer.text) as { response?: { status?: { message?: string } } })
            .response?.status?.message;
          return `${name} (${(text.length / 1024).toFixed(0)} KiB): answered in ${milliseconds(performance.now() - sent)}, ${answer.status} ${message === undefined ? "allowed" : `"${message.slice(0, 110)}…"`}`;
        })(),
      );
  };
  const { latencies, slow, stalls } = await paced(() => post(port, agent, body), servers, sendPathological);
  const lines = await Promise.all(answers);
  agent.destroy();
  return {
    p99: percentile(latencies, 0.99),
    lines: [
      `webhook over TLS at ${STEADY_RATE} req/s for ${STEADY_SECONDS} s with ${pathological.length} pathological CRs among them: the others' ${latencyFigures(latencies)}; ${slow}; ${stalls}`,
      ...lines.map((line) => `  ${line}`),
    ],
  };
}

/** Latencies of requests sent one after another over one keep-alive connection. */
async function sequential(
  port: number,
  trust: SecureContext,
  body: string,
  requests = SEQUENTIAL_REQUESTS,
): Promise<string> {
  const agent = connections(trust, 1);
  const latencies: number[] = [];
  for (let index = 0; index < requests; index++) {
    const started = performance.now();
    const status = await post(port, agent, body);
    if (status !== 200) throw new Error(`webhook answered ${status}`);
    latencies.push(performance.now() - started);
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return `webhook over TLS, one request at a time (${requests}): p50 ${milliseconds(percentile(latencies, 0.5))}, p99 ${milliseconds(percentile(latencies, 0.99))}`;
}

/**
 * Latencies at a fixed rate, each measured from its scheduled start (sorted), with the longest
 * event-loop stall of the servers' process and of this one over the measured run.
 */
async function steady(
  port: number,
  trust: SecureContext,
  body: string,
  servers: Servers,
): Promise<{ latencies: number[]; stalls: string }> {
  const agent = connections(trust, 64);
  const { latencies, stalls } = await paced(() => post(port, agent, body), servers);
  agent.destroy();
  return { latencies, stalls };
}

/**
 * The longest event-loop stall of the servers' process since it was asked to measure them, and of
 * this one's `clientStalls`, which it stops.
 */
async function longestStalls(servers: Servers, clientStalls: ReturnType<typeof loopStalls>): Promise<string> {
  servers.ask("longest stall");
  const [serverStall] = (await once(servers.process, "message")) as [number];
  clientStalls.disable();
  return `longest event-loop stall: server ${serverStall.toFixed(0)} ms, load generator ${clientStalls.longestMs().toFixed(0)} ms`;
}

/**
 * The steady rate sent to the webhook (review workers), to the same reviewing in its thread and to
 * the echo, {@link STEADY_ROUNDS} rounds taking the three in turn: a line per run, and the median
 * p99s. On a machine whose neighbours deschedule it, the p99 moves from one minute to the next; the
 * three in turn tell what the hand-over to a worker and back costs, and what the stack's ceiling
 * answers at the same rate in the same minutes, which no review can beat.
 */
async function steadyRounds(
  ports: Ports,
  trust: SecureContext,
  body: string,
  servers: Servers,
): Promise<string[]> {
  const lines: string[] = [];
  const p99s = { webhook: [] as number[], inline: [] as number[], echo: [] as number[] };
  for (let round = 1; round <= STEADY_ROUNDS; round++)
    for (const [server, name] of [
      ["webhook", "webhook"],
      ["inline", "reviewing in its thread"],
      ["echo", "bare express echo"],
    ] as const) {
      const { latencies, stalls } = await steady(ports[server], trust, body, servers);
      p99s[server].push(percentile(latencies, 0.99));
      lines.push(
        `webhook over TLS at ${STEADY_RATE} req/s for ${STEADY_SECONDS} s, round ${round}, ${name}: ${latencyFigures(latencies)}; ${stalls}`,
      );
    }
  // Each round's p99 over the echo's in the same round, as the peak's shares are taken per round.
  const overEcho = (p99: readonly number[]) =>
    median(p99.map((value, round) => value / (p99s.echo[round] ?? Number.NaN))).toFixed(1);
  lines.push(
    `steady p99 at ${STEADY_RATE} req/s, median of ${STEADY_ROUNDS} rounds: webhook ${milliseconds(median(p99s.webhook))}, reviewing in its thread ${milliseconds(median(p99s.inline))}, bare express echo ${milliseconds(median(p99s.echo))}; over the echo's in the same round: ${overEcho(p99s.webhook)}×, ${overEcho(p99s.inline)}×`,
  );
  return lines;
}

/** Requests per second with `PEAK_IN_FLIGHT` requests always in flight. */
async function peak(port: number, trust: SecureContext, body: string): Promise<number> {
  const agent = connections(trust, PEAK_IN_FLIGHT);
  const until = performance.now() + PEAK_SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: PEAK_IN_FLIGHT }, async () => {
      while (performance.now() < until) {
        await post(port, agent, body);
        done += 1;
      }
    }),
  );
  agent.destroy();
  return done / PEAK_SECONDS;
}

/**
 * Peak throughput of the webhook (review workers), the same reviewing in its thread, and the echo,
 * {@link PEAK_ROUNDS} rounds taking the three in turn: one line per round, and the median ratios.
 * Each round also tells the servers' process's CPU time per request (all its threads), which a
 * neighbour's load inflates less than it cuts throughput, so it tells where the requests' cost is.
 */
async function peakRounds(
  ports: Ports,
  trust: SecureContext,
  body: string,
  serversCpuMicros: () => Promise<number>,
): Promise<string[]> {
  const lines: string[] = [];
  const workersShare: number[] = [];
  const inlineShare: number[] = [];
  const measured = async (port: number) => {
    const before = await serversCpuMicros();
    const rate = await peak(port, trust, body);
    const cpu = (await serversCpuMicros()) - before;
    return { rate, cpu: `${(cpu / (rate * PEAK_SECONDS)).toFixed(0)} µs` };
  };
  for (let round = 1; round <= PEAK_ROUNDS; round++) {
    const workers = await measured(ports.webhook);
    const inline = await measured(ports.inline);
    const echo = await measured(ports.echo);
    workersShare.push(workers.rate / echo.rate);
    inlineShare.push(inline.rate / echo.rate);
    lines.push(
      `peak throughput over TLS, ${PEAK_IN_FLIGHT} in flight, round ${round}: webhook ${workers.rate.toFixed(0)} req/s, reviewing in its thread ${inline.rate.toFixed(0)} req/s, bare express echo ${echo.rate.toFixed(0)} req/s (${percent(workers.rate / echo.rate)}, ${percent(inline.rate / echo.rate)}); the servers' CPU per request ${workers.cpu}, ${inline.cpu}, ${echo.cpu}`,
    );
  }
  lines.push(
    `peak throughput, median of ${PEAK_ROUNDS} rounds: webhook ${percent(median(workersShare))} of the echo, reviewing in its thread ${percent(median(inlineShare))}`,
  );
  return lines;
}

function percent(share: number): string {
  return `${(100 * share).toFixed(0)}%`;
}

/**
 * The rules' figures and the CR the servers are sent, from the generated inventory, which is let go
 * with this call: kept by the caller's frame, its tens of MiB made the load generator's own
 * collections stall the requests it sends by up to ~170 ms.
 */
function rulesAndCr(): { lines: string[]; cr: Cr } {
  const hosts = inventory();
  return { lines: benchRules(hosts), cr: acceptedCr(freeMac(hosts)) };
}

/** Runs every measurement and returns one printable line per figure. */
export async function benchWebhook(hub?: HubSite): Promise<string[]> {
  let lines: string[];
  let cr: Cr;
  if (hub) {
    // The rules alone with a hub loaded are bench/hub.ts's figures.
    lines = [];
    cr = hubProvisioning("bench-new", hub.freeMacs[0]) as Cr;
  } else ({ lines, cr } = rulesAndCr());
  const body = JSON.stringify(admissionReview(cr));
  const { trust, ports, servers, stop } = await startServers(hub);
  // From here this process is the load generator: what it built and reviewed above is let go first,
  // or collecting it later stalls the requests it sends (by up to ~80 ms on this machine).
  settleHeap();
  try {
    // Warm the servers up (JIT, TLS sessions) before measuring.
    for (const port of [ports.webhook, ports.inline, ports.echo]) await peak(port, trust, body);
    if (hub) lines.push(await sequential(ports.webhook, trust, body));
    lines.push(...(await steadyRounds(ports, trust, body, servers)));
    const serversCpuMicros = async () => {
      servers.ask("cpu time");
      return ((await once(servers.process, "message")) as [number])[0];
    };
    lines.push(...(await peakRounds(ports, trust, body, serversCpuMicros)));
    if (!hub)
      lines.push(
        ...(await steadyWithPathological(ports.webhook, trust, body, pathologicalCrs(), servers)).lines,
      );
  } finally {
    await stop();
  }
  return lines;
}

/** The pathological CRs of the stream, each with when it is sent (seconds into the measured run). */
function pathologicalCrs(): { name: string; at: number; cr: Cr }[] {
  return [
    { name: "20,000 workers by resources", at: 2, cr: manyWorkers(20_000, () => 16) },
    { name: "1,000 workers no host fits, asking alike", at: 4, cr: manyWorkers(1000, () => 4096) },
    {
      name: "1,000 workers no host fits, each asking a different CPU count",
      at: 6,
      cr: manyWorkers(1000, (index) => 4096 + index),
    },
  ];
}

/**
 * Only the steady run with the pathological CRs, `rounds` times, each on servers started afresh and
 * warmed up as {@link benchWebhook} warms them: the others' p99 swings several times over from run
 * to run, so it is judged by a median of rounds, not by one.
 */
export async function benchStream(rounds: number): Promise<string[]> {
  const body = JSON.stringify(admissionReview(acceptedCr(freeMac(inventory()))));
  const lines: string[] = [];
  const p99s: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const { trust, ports, servers, stop } = await startServers(undefined);
    settleHeap();
    try {
      await peak(ports.webhook, trust, body);
      const { p99, lines: measured } = await steadyWithPathological(
        ports.webhook,
        trust,
        body,
        pathologicalCrs(),
        servers,
      );
      lines.push(`round ${round}, ${new Date().toISOString().slice(11, 19)}:`, ...measured);
      p99s.push(p99);
    } finally {
      await stop();
    }
  }
  lines.push(
    `the others' p99 with the pathological CRs, median of ${rounds} rounds: ${milliseconds(median(p99s))}`,
  );
  return lines;
}

/**
 * With `hub` loaded in the webhook, each of `requests` (a name and a CR) sent over TLS one at a
 * time, `count` times after a warm-up: one line per request. For the hub without its lock, where a
 * request costs milliseconds and a steady rate or peak throughput says nothing the line does not.
 */
export async function benchHubRequestsOverTls(
  hub: HubSite,
  requests: readonly (readonly [string, unknown])[],
  count: number,
): Promise<string[]> {
  const { trust, ports, stop } = await startServers(hub);
  settleHeap();
  const lines: string[] = [];
  try {
    for (const [name, cr] of requests) {
      const body = JSON.stringify(admissionReview(cr as Cr));
      await sequential(ports.webhook, trust, body, Math.ceil(count / 10));
      lines.push(`${name}: ${await sequential(ports.webhook, trust, body, count)}`);
    }
  } finally {
    await stop();
  }
  return lines;
}

/** The webhook (with `hub`, or the generated hosts) and the echo server, in a process of their own. */
async function startServers(hub: HubSite | undefined): Promise<{
  trust: SecureContext;
  ports: Ports;
  servers: Servers;
  stop: () => Promise<void>;
}> {
  const ca = await createTestCa();
  const certificate = await issueServerCertificate(ca, "bench");
  const data: ServeData = {
    certFile: certificate.certFile,
    keyFile: certificate.keyFile,
    ...(hub && { hub }),
  };
  const child = fork(fileURLToPath(import.meta.url), [], {
    // With the Node.js options the chart gives the webhook's container.
    execArgv: [...WEBHOOK_NODE_OPTIONS.split(" "), "--import", import.meta.resolve("tsx")],
    env: { ...process.env, [SERVE_DATA]: JSON.stringify(data) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const servers: Servers = { process: child, ask: (message) => child.send(message) };
  const [ports] = (await once(child, "message")) as [Ports];
  const stop = async () => {
    servers.ask("stop");
    await once(child, "exit");
  };
  // Made once, as a Go client makes its tls.Config once: a context per connection would cost the load
  // generator a parse of the CA certificate on every connection it opens.
  const trust = createSecureContext({ ca: ca.cert });
  return { trust, ports, servers, stop };
}

const serveData = process.env[SERVE_DATA];
if (serveData !== undefined) {
  await serve(JSON.parse(serveData) as ServeData);
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const streamRounds = process.argv[2] === "--stream" ? Number(process.argv[3] ?? 10) : undefined;
  if (streamRounds !== undefined && !(Number.isInteger(streamRounds) && streamRounds > 0))
    throw new Error(`--stream takes a number of rounds, not ${process.argv[3]}`);
  const lines = streamRounds === undefined ? await benchWebhook() : await benchStream(streamRounds);
  for (const line of lines) console.log(line);
}
