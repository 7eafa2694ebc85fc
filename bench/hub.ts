/**
 * Hub-scale review figures (docs/contract.md §8 "Hub scale"): the webhook's rules for one CR with a hub's
 * clusters loaded, median and p99 per kind of request, plus what loading the site and taking the
 * first snapshot cost, and what a BareMetalHost event costs after it. Then the same site without
 * its lock (never rendered, as the webhook `--from-cluster` sees it): new clusters placed by MAC and
 * by resources, whose turn comes first and re-places every resource-chosen turn after it
 * (decision 0042). Run standalone with
 * `node --expose-gc --import tsx bench/hub.ts [hosts] [clusters] [--tls]`; bench/index.ts runs it
 * so, in a process of its own, for each hub.
 */
import { spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  Inventory,
  readResources,
  readSite,
  tuneHeapForReviews,
  WebhookState,
  type SiteReviewer,
} from "./product.ts";
import { generateHubSite, hubProvisioning, hubSipCluster, type HubSite } from "./hub-site.ts";
import { buildCli } from "../test/support/build-cli.ts";
import { milliseconds, percentile, settleHeap, timeRuns } from "./stats.ts";
import { benchHubRequestsOverTls, benchWebhook } from "./webhook.ts";

const RUNS = 2000;
/** Runs per request without the lock, where one costs milliseconds rather than tens of microseconds. */
const NO_LOCK_RUNS = 300;
const VALIDATE_RUNS = 3;
const REPO = fileURLToPath(new URL("..", import.meta.url));

/** The webhook's state for `hub`, as `metalsynth webhook --inventory … --site …` loads it. */
export async function loadHub(hub: HubSite): Promise<WebhookState> {
  const input = await readSite({ site: hub.site, inventory: [hub.inventory] });
  const { resources, invalid } = readResources(input.documents);
  const state = new WebhookState();
  state.update({
    inventory: input.inventory,
    siteResources: resources,
    siteInvalid: invalid,
    lock: input.lock,
  });
  return state;
}

/** The requests the bench reviews, by what they are: each a CR as an AdmissionReview carries it. */
export function hubRequests(hub: HubSite, existing: unknown): [string, unknown][] {
  const mac = hub.freeMacs[0];
  if (mac === undefined) throw new Error("the generated hub has no free host");
  const typo = `${mac.slice(0, -1)}${mac.endsWith("f") ? "e" : "f"}`;
  // `bench-…` sorts before every generated cluster, so its turn comes first: the costliest place.
  return [
    ["new Provisioning, master by MAC", hubProvisioning("bench-new", mac)],
    ["new Provisioning by resources", hubProvisioning("bench-new", undefined)],
    ["existing Provisioning unchanged (a dry-run)", existing],
    ["new SIPCluster", hubSipCluster("bench-new")],
    ["denied, MAC one digit off", hubProvisioning("bench-new", typo)],
    ["denied, MAC of no host near", hubProvisioning("bench-new", "aa:bb:cc:dd:ee:ff")],
  ];
}

/** One printable line per figure for `hub`, a site of `clusters` clusters over `hosts` hosts. */
export async function benchHub(hub: HubSite, hosts: number, clusters: number): Promise<string[]> {
  // As `metalsynth webhook` runs.
  tuneHeapForReviews();
  const loadStarted = performance.now();
  const state = await loadHub(hub);
  const loaded = performance.now() - loadStarted;
  const snapshotStarted = performance.now();
  const reviewer = state.reviewer();
  if (reviewer === undefined) throw new Error("the hub's inventory did not load");
  const existing = (await readSite({ site: hub.site, inventory: [hub.inventory] })).documents.find(
    (document) => (document.value as { metadata?: { name?: string } }).metadata?.name === "c00002",
  )?.value;
  reviewer.review(existing);
  const snapshot = performance.now() - snapshotStarted;
  const lines = [
    `hub of ${clusters} clusters over ${hosts} hosts: site and inventory read ${milliseconds(loaded)}, first review (evaluates the site once) ${milliseconds(snapshot)}`,
  ];
  const requests = hubRequests(hub, existing);
  // Right after a load, the collector marks the whole heap again in steps between reviews (what
  // reading and evaluating the site left behind), and V8 is still compiling the reviews' code: the
  // reviews of those seconds, measured as they come, are the webhook after every inventory change.
  const [firstName, firstObject] = requests[0] ?? [];
  const afterLoad = timeRuns(() => reviewer.review(firstObject), RUNS, 0);
  lines.push(
    `  rules, one CR, ${firstName} right after the load: median ${milliseconds(percentile(afterLoad, 0.5))}, p99 ${milliseconds(percentile(afterLoad, 0.99))} (${RUNS} runs)`,
  );
  // Then the steady state the webhook serves in between: the load's garbage collected.
  settleHeap();
  for (const [name, object] of requests) {
    const times = timeRuns(() => reviewer.review(object), RUNS);
    lines.push(
      `  rules, one CR, ${name}: median ${milliseconds(percentile(times, 0.5))}, p99 ${milliseconds(percentile(times, 0.99))} (${RUNS} runs)`,
    );
  }
  lines.push(...benchHostEvents(state, reviewer, requests[0]?.[1]));
  const validate = timeValidate(hub);
  lines.push(
    `  metalsynth validate of the site (YAML inventory): median ${(validate / 1000).toFixed(2)} s (${VALIDATE_RUNS} runs)`,
  );
  return lines;
}

const HOST_EVENT_RUNS = 10;

/**
 * What a BareMetalHost event costs the webhook: the state taking the new inventory (the snapshot
 * carried over, planning again what the host reaches) and the first review after it. Each event is
 * undone before the next, so every run starts from the hub as loaded. The inventory's index is
 * built outside the timing: the feed builds it, once per burst of events.
 */
function benchHostEvents(state: WebhookState, first: SiteReviewer, request: unknown): string[] {
  const { inventory, plan } = first.snapshot;
  const held = new Set(plan.lock.entries.map((entry) => entry.host));
  const claimed = inventory.hosts.find((host) => held.has(host.id) && host.osInstalled);
  if (claimed === undefined) throw new Error("the generated hub has no claimed, installed host");
  const events: [string, Inventory][] = [
    [
      "a claimed host's provisioning state changes",
      new Inventory(
        inventory.hosts.map((host) =>
          host === claimed ? { ...host, provisioningState: "deprovisioning", osInstalled: false } : host,
        ),
      ),
    ],
    ["a claimed host leaves", new Inventory(inventory.hosts.filter((host) => host !== claimed))],
  ];
  return events.map(([name, changed]) => {
    const times: number[] = [];
    for (let run = 0; run < HOST_EVENT_RUNS; run++) {
      const started = performance.now();
      state.update({ inventory: changed });
      state.reviewer()?.review(request);
      times.push(performance.now() - started);
      state.update({ inventory });
      state.reviewer()?.review(request);
    }
    times.sort((a, b) => a - b);
    return `  one BareMetalHost event, ${name}, then one review: median ${milliseconds(percentile(times, 0.5))}, max ${milliseconds(times.at(-1) ?? 0)} (${HOST_EVENT_RUNS} runs)`;
  });
}

/**
 * The requests timed without the lock: the first two as with it (`bench-…` sorts before every
 * generated cluster: its turn comes first and moves every resource-chosen turn after it), and one
 * sorting after every cluster, which moves none.
 */
export function noLockRequests(hub: HubSite): [string, unknown][] {
  const [byMac, byResources] = hubRequests(hub, undefined);
  if (byMac === undefined || byResources === undefined) throw new Error("the hub has no requests");
  return [
    byMac,
    byResources,
    ["new Provisioning by resources, name sorting last", hubProvisioning("zz-new", undefined)],
  ];
}

/** The rules for one CR with `hub` loaded without its lock (remove it first): median and p99. */
export async function benchHubWithoutLock(hub: HubSite): Promise<string[]> {
  tuneHeapForReviews();
  const started = performance.now();
  const reviewer = (await loadHub(hub)).reviewer();
  if (reviewer === undefined) throw new Error("the hub's inventory did not load");
  reviewer.review(hubProvisioning("zz-new", undefined));
  const lines = [
    `the same hub without its lock (never rendered): site read and first review ${milliseconds(performance.now() - started)}`,
  ];
  settleHeap();
  for (const [name, object] of noLockRequests(hub)) {
    const times = timeRuns(() => reviewer.review(object), NO_LOCK_RUNS);
    lines.push(
      `  no lock, rules, one CR, ${name}: median ${milliseconds(percentile(times, 0.5))}, p99 ${milliseconds(percentile(times, 0.99))} (${NO_LOCK_RUNS} runs)`,
    );
  }
  return lines;
}

/** Median wall time of `metalsynth validate --site` on `hub`, as a user runs it (the built CLI). */
function timeValidate(hub: HubSite): number {
  buildCli();
  const times: number[] = [];
  for (let run = 0; run < VALIDATE_RUNS; run++) {
    const started = performance.now();
    const result = spawnSync(
      process.execPath,
      [path.join(REPO, "bin", "metalsynth.js"), "validate", "--site", hub.site],
      {
        stdio: "ignore",
      },
    );
    if (result.status !== 0) throw new Error(`metalsynth validate of the hub site exited ${result.status}`);
    times.push(performance.now() - started);
  }
  return percentile(
    times.sort((a, b) => a - b),
    0.5,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [hosts = "10000", clusters = "1000", tls] = process.argv.slice(2);
  const hub = await generateHubSite(Number(hosts), Number(clusters));
  try {
    for (const line of await benchHub(hub, Number(hosts), Number(clusters))) console.log(line);
    // Over TLS as well: the webhook in a process of its own (see bench/webhook.ts).
    if (tls === "--tls") for (const line of await benchWebhook(hub)) console.log(`  ${line}`);
    // The same site never rendered: what the webhook `--from-cluster` reviews against.
    await rm(path.join(hub.site, "rendered", "metalsynth.lock.yaml"));
    for (const line of await benchHubWithoutLock(hub)) console.log(line);
    if (tls === "--tls") {
      for (const line of await benchHubRequestsOverTls(hub, noLockRequests(hub), NO_LOCK_RUNS))
        console.log(`  no lock, ${line}`);
    }
  } finally {
    await rm(hub.site, { recursive: true, force: true });
  }
}
