/**
 * Synth at the floor (issue #40, docs/contract.md §8, decision 0057): the CPU time of `metalsynth
 * synth` (the built CLI, run as users run it) over the CPU time of a script that does only the file
 * work (bench/floor.ts), measured interleaved in one run on the mixed site of bench/mixed-site.ts:
 *
 * - a first render into an empty `rendered/`, over writing the same files from memory;
 * - a synth that changes nothing, over reading and comparing every rendered file;
 * - a synth after one cluster's CR changed (a KUD plugin added), over the same read floor; the run
 *   that takes it away again is printed in the round's line, not counted: its site is the one the
 *   synth that changed nothing read, which the synth cache may hold;
 * - `metalsynth validate` of the same site, over the same read floor: reading the site and running
 *   every rule and the planner, which synth does before it renders or reads back anything, so it
 *   bounds from below what a synth that changes nothing can cost.
 *
 * Each round runs every figure once, floors and synths alternating, and the figures are the medians
 * of the rounds' ratios. With `--baseline DIR` (another checkout, built), its CLI runs the same
 * steps on a copy of the site in the same rounds, each right after this checkout's, so the ratios
 * before and after a change are measured side by side. CPU is user + system time of the whole
 * process, all threads, from `process.resourceUsage` at exit; a floor is its work's CPU plus a bare
 * `node` start's, measured in the same round. The synth cache (decisions 0066 and 0068) starts
 * empty at each size: a synth that changes nothing finds the evaluation of its site there from
 * round 2 on (in round 1 the lock it reads is the one the first render had just written, which no
 * run had read before), and every synth but the first render finds the inventory's hosts there. A
 * first render is a fresh clone's: it runs with a cache of its own, empty when it starts.
 *
 * Nothing is deleted while the bench runs: a tree a step is done with is moved aside, and every tree
 * is removed when the last size is done. This ext4 has no journal, and for one to six minutes after
 * an inode is freed, creating a file skips it, reading its inode table block on the way (the kernel's
 * `recently_deleted`, decision 0019): writing 60,002 files from memory cost 2.5 s of system time into
 * a quiet file system and 38–61 s right after as many had been deleted (bench journal 2026-12-01,
 * 18:35 entry). A fresh clone's first render deletes nothing before it writes; neither may its floor.
 * A run started within six minutes of deleting a large tree (another run's cleanup) pays for it.
 *
 *   tsx bench/at-the-floor.ts [--sizes 10000,100000] [--rounds 3] [--baseline DIR] [--keep DIR]
 */
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { FloorResult } from "./floor.ts";
import { median } from "./stats.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.dirname(HERE);

/** One process's cost: CPU (user + system, every thread), wall time, peak RSS. */
export interface ProcessCost {
  readonly cpu: number;
  /** Of which system time. */
  readonly sys: number;
  readonly wall: number;
  readonly rssMiB: number;
}

/** The figures of one round at one size. */
export interface FloorRound {
  readonly nodeStart: number;
  readonly writeFloor: number;
  /** Of which system time. */
  readonly writeFloorSys: number;
  readonly readFloor: number;
  readonly first: ProcessCost;
  readonly again: ProcessCost;
  readonly changed: ProcessCost;
  readonly validate: ProcessCost;
  readonly baseline?: {
    readonly first: ProcessCost;
    readonly again: ProcessCost;
    readonly changed: ProcessCost;
  };
}

/** A preload that writes the process's CPU and peak RSS to $METALSYNTH_BENCH_COST when it exits. */
const COST_PRELOAD = `import { writeFileSync } from "node:fs";
process.on("exit", () => {
  const usage = process.resourceUsage();
  const cpu = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  const sys = usage.systemCPUTime / 1e6;
  writeFileSync(process.env.METALSYNTH_BENCH_COST, JSON.stringify({ cpu, sys, rssMiB: Math.round(usage.maxRSS / 1024) }));
});
`;

/** Runs `node [--import preload] args…` and returns what it cost. */
function measured(work: string, args: readonly string[], cache = "synth-cache"): ProcessCost {
  const costFile = path.join(work, "cost.json");
  rmSync(costFile, { force: true });
  const preload = pathToFileURL(path.join(work, "cost-preload.mjs")).href;
  const started = performance.now();
  const child = spawnSync(process.execPath, ["--import", preload, ...args], {
    // The synth cache (decisions 0066 and 0068) of this bench alone, empty when it starts.
    env: {
      ...process.env,
      METALSYNTH_BENCH_COST: costFile,
      METALSYNTH_SYNTH_CACHE: path.join(work, cache),
    },
    stdio: ["ignore", "ignore", "pipe"],
    encoding: "utf8",
    maxBuffer: 256 * 2 ** 20,
  });
  const wall = (performance.now() - started) / 1000;
  if (child.status !== 0)
    throw new Error(`${args.join(" ")} exited ${child.status}: ${child.stderr.slice(-2000)}`);
  const { cpu, sys, rssMiB } = JSON.parse(readFileSync(costFile, "utf8")) as Omit<ProcessCost, "wall">;
  return { cpu, sys, wall, rssMiB };
}

function floor(mode: "write" | "read", tree: string, target?: string): FloorResult {
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", path.join(HERE, "floor.ts"), mode, tree, ...(target ? [target] : [])],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  if (child.status !== 0) throw new Error(`floor ${mode} exited ${child.status}`);
  return JSON.parse(child.stdout) as FloorResult;
}

/** Adds a KUD plugin to the site's first Provisioning, or takes it away again. */
function toggleOneCluster(site: string): void {
  const file = path.join(site, "specs", "clusters.yaml");
  const text = readFileSync(file, "utf8");
  const plugin = "  KUDPlugins:\n    - multus\n";
  const added = "  KUDPlugins:\n    - multus\n    - ovn4nfv\n";
  writeFileSync(file, text.includes(added) ? text.replace(added, plugin) : text.replace(plugin, added));
}

/** A copy of `site`'s inputs in `copy`, the inventory hard-linked (it is only read). */
function copySite(site: string, copy: string): void {
  cpSync(path.join(site, "specs"), path.join(copy, "specs"), { recursive: true });
  mkdirSync(path.join(copy, "inventory"), { recursive: true });
  for (const file of readdirSync(path.join(site, "inventory")))
    linkSync(path.join(site, "inventory", file), path.join(copy, "inventory", file));
}

const seconds = (value: number) => `${value.toFixed(2)} s`;
const ratio = (value: number) => `${value.toFixed(2)}×`;

/**
 * Runs `rounds` interleaved rounds at one size and prints them and their medians. Its trees stay in a
 * directory of its own under `under`, which the caller removes when the bench is done (see above).
 */
export function benchAtTheFloor(
  hosts: number,
  clusters: number,
  rounds: number,
  options: { readonly under: string; readonly baseline?: string; readonly log?: (line: string) => void },
): FloorRound[] {
  const log = options.log ?? ((line: string) => console.log(line));
  const work = mkdtempSync(path.join(options.under, `metalsynth-floor-${hosts}-`));
  const aside = path.join(work, "aside");
  mkdirSync(aside);
  let setAsideCount = 0;
  /** A fresh path under `aside`, for a tree that must not be deleted yet. */
  const asidePath = (name: string) => path.join(aside, `${name}-${++setAsideCount}`);
  const setAside = (dir: string) => {
    if (existsSync(dir)) renameSync(dir, asidePath(path.basename(dir)));
  };
  writeFileSync(path.join(work, "cost-preload.mjs"), COST_PRELOAD);
  const site = path.join(work, "site");
  const inventoryBytes = writeMixedSiteSync(site, hosts, clusters);
  const baseSite = path.join(work, "baseline-site");
  if (options.baseline) copySite(site, baseSite);
  const cli = path.join(REPO, "bin", "metalsynth.js");
  const baseCli = options.baseline ? path.join(options.baseline, "bin", "metalsynth.js") : undefined;
  const synth = (at: string, program: string, ...args: string[]) =>
    measured(work, [program, "synth", "--site", at, ...args]);
  // A first render is a fresh clone's: into an empty `rendered/`, and no cache holds its inventory
  // either.
  const coldSynth = (at: string, program: string) => {
    setAside(path.join(at, "rendered"));
    setAside(path.join(work, "cold-cache"));
    return measured(work, [program, "synth", "--site", at], "cold-cache");
  };
  const results: FloorRound[] = [];
  log(
    `${hosts} hosts, ${clusters} clusters, inventory ${(inventoryBytes / 2 ** 20).toFixed(1)} MiB` +
      `${baseCli ? `; baseline ${options.baseline}` : ""}:`,
  );
  // Untimed, so that every timed write, the first round's too, comes after a tree was written.
  synth(site, cli);
  floor("write", path.join(site, "rendered"), asidePath("floor"));
  if (baseCli) synth(baseSite, baseCli);
  for (let round = 1; round <= rounds; round++) {
    // The baseline takes each step right after this checkout: at 100k hosts a figure moved by
    // seconds between a round's steps, far less between two runs of one step back to back (bench
    // journal 2026-11-30, 09:03 and 09:28 entries).
    const first = coldSynth(site, cli);
    const baseFirst = baseCli && coldSynth(baseSite, baseCli);
    const written = floor("write", path.join(site, "rendered"), asidePath("floor"));
    const nodeStart = measured(work, ["-e", ""]).cpu;
    const again = synth(site, cli);
    const baseAgain = baseCli && synth(baseSite, baseCli);
    const read = floor("read", path.join(site, "rendered"));
    const validate = measured(work, [cli, "validate", "--site", site]);
    toggleOneCluster(site);
    const changedOnce = synth(site, cli);
    if (baseCli) toggleOneCluster(baseSite);
    const baseChanged = baseCli && synth(baseSite, baseCli);
    const readAgain = floor("read", path.join(site, "rendered"));
    toggleOneCluster(site);
    const changedBack = synth(site, cli);
    if (baseCli) {
      toggleOneCluster(baseSite);
      synth(baseSite, baseCli);
    }
    const baseline: FloorRound["baseline"] =
      baseFirst && baseAgain && baseChanged
        ? { first: baseFirst, again: baseAgain, changed: baseChanged }
        : undefined;
    const result: FloorRound = {
      nodeStart,
      writeFloor: written.cpuSeconds + nodeStart,
      writeFloorSys: written.systemSeconds,
      readFloor: median([read.cpuSeconds, readAgain.cpuSeconds]) + nodeStart,
      first,
      again,
      // Taken back, the spec is as `again` read it, an evaluation the synth cache may hold: only the
      // change itself is a site no run has read.
      changed: changedOnce,
      validate,
      ...(baseline && { baseline }),
    };
    results.push(result);
    const base = baseline
      ? `; baseline first ${seconds(baseline.first.cpu)} (system ${seconds(baseline.first.sys)}), again ${seconds(baseline.again.cpu)}, changed ${seconds(baseline.changed.cpu)}`
      : "";
    log(
      `  round ${round}: write floor ${seconds(result.writeFloor)} (system ${seconds(written.systemSeconds)}; ${written.files} files, ` +
        `${(written.bytes / 2 ** 20).toFixed(1)} MiB), read floor ${seconds(result.readFloor)}, node start ` +
        `${seconds(nodeStart)}; synth first ${seconds(first.cpu)} (system ${seconds(first.sys)}, wall ${seconds(first.wall)}, ${first.rssMiB} MiB), ` +
        `again ${seconds(again.cpu)} (wall ${seconds(again.wall)}), one cluster changed ` +
        `${seconds(changedOnce.cpu)} / ${seconds(changedBack.cpu)}, validate ${seconds(validate.cpu)}${base} (CPU)`,
    );
  }
  const of = (pick: (round: FloorRound) => number) => median(results.map(pick));
  const line = (
    label: string,
    cost: (round: FloorRound) => number,
    floorOf: (round: FloorRound) => number,
    name: string,
    detail = "",
  ) =>
    log(
      `  ${label.padEnd(26)} ${ratio(of((round) => cost(round) / floorOf(round))).padStart(7)} the ${name} floor` +
        `  (${seconds(of(cost))} CPU over ${seconds(of(floorOf))}${detail})`,
    );
  log(`  medians of ${rounds} rounds, CPU over the floor measured in the same round:`);
  // Creating files is the kernel's work, and its cost swings several times over between rounds with
  // the file system's state (decision 0019). The ratio counts it, as issue #40 defines it; the user
  // time beside it is what the code itself costs.
  line(
    "synth, first render",
    (round) => round.first.cpu,
    (round) => round.writeFloor,
    "write",
    `; user time ${seconds(of((round) => round.first.cpu - round.first.sys))} over ` +
      seconds(of((round) => round.writeFloor - round.writeFloorSys)),
  );
  // What a first render costs beyond reading and judging the site (validate) and writing its files.
  line(
    "  over validate and writing",
    (round) => round.first.cpu,
    (round) => round.validate.cpu + round.writeFloor,
    "validate-and-write",
  );
  line(
    "synth, nothing changed",
    (round) => round.again.cpu,
    (round) => round.readFloor,
    "read-and-compare",
  );
  line(
    "synth, one cluster changed",
    (round) => round.changed.cpu,
    (round) => round.readFloor,
    "read-and-compare",
  );
  line(
    "validate (no render)",
    (round) => round.validate.cpu,
    (round) => round.readFloor,
    "read-and-compare",
  );
  if (baseCli) {
    line(
      "  before: first render",
      (round) => round.baseline!.first.cpu,
      (round) => round.writeFloor,
      "write",
    );
    line(
      "  before: nothing changed",
      (round) => round.baseline!.again.cpu,
      (round) => round.readFloor,
      "read-and-compare",
    );
    line(
      "  before: one changed",
      (round) => round.baseline!.changed.cpu,
      (round) => round.readFloor,
      "read-and-compare",
    );
  }
  log(
    `  on this machine, this day: first render ${seconds(of((round) => round.first.wall))} wall, peak RSS ` +
      `${of((round) => round.first.rssMiB)} MiB; nothing changed ${seconds(of((round) => round.again.wall))} wall; ` +
      `one cluster changed ${seconds(of((round) => round.changed.wall))} wall`,
  );
  return results;
}

/** {@link writeMixedSite} in a child process, so this process's heap and RSS stay out of it. */
function writeMixedSiteSync(site: string, hosts: number, clusters: number): number {
  if (existsSync(site)) throw new Error(`${site} exists`);
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", path.join(HERE, "mixed-site.ts"), site, String(hosts), String(clusters)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  if (child.status !== 0) throw new Error(`bench/mixed-site.ts exited ${child.status}`);
  return Number(child.stdout.trim());
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string", default: "10000,100000" },
      rounds: { type: "string", default: "3" },
      baseline: { type: "string" },
      keep: { type: "string" },
    },
  });
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  console.log(
    `machine: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
      `load average ${os
        .loadavg()
        .map((load) => load.toFixed(1))
        .join(" ")}`,
  );
  const under = values.keep
    ? path.resolve(values.keep)
    : mkdtempSync(path.join(os.tmpdir(), "metalsynth-floor-"));
  for (const hosts of values.sizes.split(",").map(Number)) {
    benchAtTheFloor(hosts, hosts / 10, Number(values.rounds), {
      under,
      ...(values.baseline !== undefined && { baseline: path.resolve(values.baseline) }),
    });
  }
  if (!values.keep) rmSync(under, { recursive: true, force: true });
}
