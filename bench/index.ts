/**
 * `npm run bench`: the figures of docs/contract.md §8 on this machine. Each synth size runs in a child process so
 * its peak RSS is its own; the webhook figures come from bench/webhook.ts and, with a hub site loaded,
 * bench/hub.ts; start-up from bench/startup.ts. Numbers are printed, never
 * asserted: speed is measured here, not in unit tests.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { InventoryBenchResult, InventoryFormat } from "./inventory.ts";
import type { RenderBenchResult, ValidateBenchResult } from "./synth.ts";
import { benchAtTheFloor } from "./at-the-floor.ts";
import { benchClosestMac } from "./closest-mac.ts";
import { generateHubSite } from "./hub-site.ts";
import { writeMixedSite } from "./mixed-site.ts";
import { benchStartup } from "./startup.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** Hosts and clusters per synth run: the contract's 1,000 clusters over 10,000 hosts, and a tenth and ten times that. */
const SIZES = [
  [1_000, 100],
  [10_000, 1_000],
  [100_000, 10_000],
] as const;

/** Hub sites: the contract's 1,000 clusters over 10,000 hosts (also over TLS), and a ZTP hub's 3,500 clusters. */
const HUBS = [
  [10_000, 1_000, true],
  [35_000, 3_500, false],
] as const;

/** Hosts per inventory read run: the contract's 10,000 and ten times that, in YAML and in JSON. */
const INVENTORY_RUNS = [
  [10_000, "yaml"],
  [10_000, "json"],
  [100_000, "yaml"],
  [100_000, "json"],
] as const satisfies readonly (readonly [number, InventoryFormat])[];

/**
 * What a bench module prints, run in a process of its own: its heap and peak RSS hold only what it
 * measures, and `--expose-gc` lets the webhook and hub modules measure a settled heap (the steady
 * state apart from the collection after a load, a load generator that is not collecting what it
 * measured before).
 */
function inOwnProcess(module: string, args: readonly string[] = []): string {
  return execFileSync(
    process.execPath,
    ["--import", "tsx", "--expose-gc", "--max-old-space-size=4096", path.join(HERE, module), ...args],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
}

function inventoryRun(hosts: number, format: InventoryFormat): InventoryBenchResult {
  return JSON.parse(inOwnProcess("inventory.ts", [String(hosts), format])) as InventoryBenchResult;
}

function render(site: string): RenderBenchResult {
  return JSON.parse(inOwnProcess("synth.ts", ["render", site])) as RenderBenchResult;
}

function validateRun(site: string): ValidateBenchResult {
  return JSON.parse(inOwnProcess("synth.ts", ["validate", site])) as ValidateBenchResult;
}

/** One row of the synth table: a render's phases, its peak RSS, and what it wrote. */
function renderRow(hosts: number, run: string, result: RenderBenchResult): string {
  const { seconds } = result;
  return [
    String(hosts).padEnd(8),
    run.padEnd(7),
    String(seconds.read).padEnd(6),
    String(seconds.evaluate).padEnd(9),
    String(seconds.render).padEnd(7),
    String(seconds.write).padEnd(6),
    String(seconds.total).padEnd(7),
    `${result.maxRssMiB} MiB`.padEnd(9),
    `${result.written} of ${result.files} files, lock ${result.lockMiB} MiB`,
  ].join(" ");
}

const cpu = os.cpus()[0]?.model ?? "unknown CPU";
console.log(
  `machine: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
console.log(
  "\nsynth (the mixed site of bench/mixed-site.ts: JSON inventory, clusters half Provisionings by MAC, three tenths by resources, one fifth SIPClusters; seconds):",
);
console.log("hosts    run     read   evaluate  render  write  total   peak RSS  written");
// The synth sites, and the trees of synth at the floor, are removed when the bench is done, not
// after each run. This ext4 has no journal: for a few minutes after a file is deleted, creating a
// file in its block group skips its inode, at a cost per file created (decision 0019). Writing 100k
// hosts' 42,500 files took 5-9 s in the bench right after the smaller runs' sites were deleted, and
// 2.6 s on its own.
const synthSites = await mkdtemp(path.join(os.tmpdir(), "metalsynth-bench-synth-"));
/** Seconds of the first render, the second and validate, by hosts. */
const timings = new Map<number, readonly [number, number, number]>();
for (const [hosts, clusters] of SIZES) {
  const site = path.join(synthSites, String(hosts));
  const inventoryBytes = await writeMixedSite(site, hosts, clusters);
  console.log(
    `${hosts} hosts, ${clusters} clusters, inventory ${(inventoryBytes / 2 ** 20).toFixed(1)} MiB:`,
  );
  const first = render(site);
  console.log(renderRow(hosts, "first", first));
  // The lock the first render wrote is read back: nothing changed, so nothing may be written.
  const second = render(site);
  console.log(renderRow(hosts, "second", second));
  const checked = validateRun(site);
  console.log(
    `${String(hosts).padEnd(8)} validate ${checked.seconds} s, ${checked.maxRssMiB} MiB: ${checked.errors} errors, ${checked.warnings} warnings`,
  );
  timings.set(hosts, [first.seconds.total, second.seconds.total, checked.seconds]);
}
const [small, large] = [timings.get(10_000), timings.get(100_000)];
if (small && large) {
  const growth = (index: 0 | 1 | 2) => `×${(large[index] / small[index]).toFixed(1)}`;
  console.log(
    `growth 10k → 100k hosts: first render ${growth(0)}, second ${growth(1)}, validate ${growth(2)}`,
  );
}

console.log(
  "\nsynth at the floor (bench/at-the-floor.ts, decision 0057): the built CLI's CPU over a script's doing only the file work, rounds interleaved:",
);
for (const [hosts, clusters] of SIZES.filter(([hosts]) => hosts >= 10_000))
  benchAtTheFloor(hosts, clusters, 3, { under: synthSites });

console.log(
  "\ninventory read (one List file as kubectl get -o yaml / -o json prints it; MB/s = 10^6 bytes/s):",
);
console.log("hosts    format  file        read s  cpu s   MB/s   peak RSS");
for (const [hosts, format] of INVENTORY_RUNS) {
  const { fileMiB, seconds, cpuSeconds, megabytesPerSecond, maxRssMiB } = inventoryRun(hosts, format);
  console.log(
    [
      String(hosts).padEnd(8),
      format.padEnd(7),
      `${fileMiB} MiB`.padEnd(11),
      String(seconds).padEnd(7),
      String(cpuSeconds).padEnd(7),
      String(megabytesPerSecond).padEnd(6),
      `${maxRssMiB} MiB`,
    ].join(" "),
  );
}

console.log("\nwebhook (10,000 hosts loaded, no CRs):");
process.stdout.write(inOwnProcess("webhook.ts"));

console.log("\nwebhook memory (--from-cluster, the built CLI as the chart runs it; decision 0056):");
process.stdout.write(inOwnProcess("webhook-memory.ts"));

console.log("\nclosest MAC for a mac-unknown denial:");
for (const line of benchClosestMac()) console.log(line);

console.log("\nhub scale (the webhook with a hub's CRs loaded; requests name a cluster sorting first):");
for (const [hosts, clusters, overTls] of HUBS) {
  process.stdout.write(
    inOwnProcess("hub.ts", [String(hosts), String(clusters), ...(overTls ? ["--tls"] : [])]),
  );
}

console.log("\nstart-up (the built CLI, spawned as npx runs it):");
for (const line of await benchStartup()) console.log(line);

console.log("\nsite map (metalsynth map of the 10,000-host / 1,000-cluster hub):");
{
  const { benchMap } = await import("./map.ts");
  const hub = await generateHubSite(10_000, 1_000);
  try {
    for (const line of await benchMap(hub, 10_000, 1_000)) console.log(line);
  } finally {
    await rm(hub.site, { recursive: true, force: true });
  }
}

await rm(synthSites, { recursive: true, force: true });
