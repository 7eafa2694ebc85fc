/**
 * `metalsynth map` of a hub site (issue 15: the 1,000-cluster / 10,000-host fleet in ≤ 3 s): the
 * built CLI spawned {@link RUNS} times after one unmeasured run, wall time from spawn to exit, and
 * in process how much of that the map itself costs (building its model and drawing the page) beside
 * reading and evaluating the site, which every command pays.
 *
 * Run standalone with `npx tsx bench/map.ts`; `benchMap()` returns the printable lines.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildCli } from "../test/support/build-cli.ts";
import { generateHubSite, type HubSite } from "./hub-site.ts";
import { evaluateSite, mapHtml, readSite, siteMap } from "./product.ts";
import { percentile } from "./stats.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const RUNS = 3;

/** Milliseconds from spawning `metalsynth map` to its exit; throws unless the page was written. */
async function timeMap(site: string, file: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ["bin/metalsynth.js", "map", "--site", site, "--out", file], {
    cwd: REPO,
    stdio: "ignore",
  });
  const [code] = (await once(child, "exit")) as [number | null];
  const elapsed = performance.now() - started;
  // 1 is a site with errors, whose map is written all the same.
  if (code !== 0 && code !== 1) throw new Error(`metalsynth map --site ${site} exited ${code}`);
  return elapsed;
}

/** The map's lines for a hub of `hosts` hosts and `clusters` clusters. */
export async function benchMap(hub: HubSite, hosts: number, clusters: number): Promise<string[]> {
  buildCli();
  const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-map-bench-"));
  try {
    const file = path.join(dir, "map.html");
    await timeMap(hub.site, file);
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) times.push(await timeMap(hub.site, file));
    times.sort((a, b) => a - b);
    const bytes = (await stat(file)).size;

    const input = await readSite({ site: hub.site });
    const { plan, issues } = evaluateSite(input.documents, input.inventory, input.lock);
    const started = performance.now();
    const map = siteMap({ inventory: input.inventory, plan, issues: [...input.issues, ...issues] });
    const modelled = performance.now();
    mapHtml(map);
    const drawn = performance.now();
    return [
      `map, ${hosts} hosts / ${clusters} clusters: median ${(percentile(times, 0.5) / 1000).toFixed(2)} s, ` +
        `max ${((times.at(-1) ?? 0) / 1000).toFixed(2)} s (${RUNS} runs of the CLI; target ≤ 3 s); ` +
        `${(bytes / 2 ** 20).toFixed(1)} MiB page`,
      `  of which the map: model ${(modelled - started).toFixed(0)} ms, page ${(drawn - modelled).toFixed(0)} ms ` +
        `(the rest reads and evaluates the site, as validate does)`,
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const hub = await generateHubSite(10_000, 1_000);
  try {
    for (const line of await benchMap(hub, 10_000, 1_000)) console.log(line);
  } finally {
    await rm(hub.site, { recursive: true, force: true });
  }
}
