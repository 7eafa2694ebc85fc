/**
 * Start-up of the installed CLI (docs/contract.md §8 "Start-up"): `node bin/metalsynth.js`, as `npx metalsynth`
 * runs it, for `--help`, `--version` and `validate --site examples/site`, each {@link RUNS} times
 * after a build and one unmeasured run; median and p90 wall time from spawn to exit.
 *
 * Run standalone with `npx tsx bench/startup.ts`; `benchStartup()` returns the printable lines.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildCli } from "../test/support/build-cli.ts";
import { percentile } from "./stats.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const RUNS = 20;

/** Each command measured, with the contract's bound where it sets one. */
const COMMANDS: readonly { readonly argv: readonly string[]; readonly targetMs?: number }[] = [
  { argv: ["--help"], targetMs: 150 },
  { argv: ["--version"] },
  { argv: ["validate", "--site", "examples/site"], targetMs: 500 },
];

/** Milliseconds from spawning `node bin/metalsynth.js ...argv` to its exit; throws unless it exits 0. */
async function timeRun(argv: readonly string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ["bin/metalsynth.js", ...argv], { cwd: REPO, stdio: "ignore" });
  const [code] = (await once(child, "exit")) as [number | null];
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`metalsynth ${argv.join(" ")} exited ${code}`);
  return elapsed;
}

/** One line per command: `start-up, metalsynth --help: median 71 ms, p90 80 ms (20 runs; target ≤ 150 ms)`. */
export async function benchStartup(): Promise<string[]> {
  buildCli();
  const lines: string[] = [];
  for (const { argv, targetMs } of COMMANDS) {
    // The first run reads the modules from disk into the page cache; users run it warm.
    await timeRun(argv);
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) times.push(await timeRun(argv));
    times.sort((a, b) => a - b);
    const target = targetMs === undefined ? "" : `; target ≤ ${targetMs} ms`;
    lines.push(
      `start-up, metalsynth ${argv.join(" ")}: median ${percentile(times, 0.5).toFixed(0)} ms, p90 ${percentile(times, 0.9).toFixed(0)} ms (${RUNS} runs${target})`,
    );
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await benchStartup()) console.log(line);
}
