/**
 * `npm run bench:counts`: what one review of the 1k / 10k hub without its lock executes, counted by
 * Valgrind's cachegrind rather than timed (decision 0042, Session 15). Wall time on a machine shared
 * with other jobs moves by a factor of two within minutes; instructions and simulated cache misses do
 * not, so a change worth a few percent shows here when it cannot show in `npm run bench`.
 *
 * Each request kind runs in `node --single-threaded` under cachegrind twice: the site loaded and
 * reviewed `WARM_UP` times, then `REVIEWS` more reviews or none. The difference, divided by
 * `REVIEWS`, is one review. Needs `valgrind` (Debian's package); takes ~5 minutes per kind on 2 cores.
 * Run as `npm run bench:counts`; the process re-runs itself under Valgrind with `--review-loop`.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { generateHubSite } from "./hub-site.ts";
import { loadHub, noLockRequests } from "./hub.ts";
import { tuneHeapForReviews } from "./product.ts";

const run = promisify(execFile);
const WARM_UP = 40;
const REVIEWS = 1000;
const KINDS = 2;

/** The summary figures cachegrind prints for a whole run. */
interface Totals {
  readonly instructions: number;
  readonly instructionMisses: number;
  readonly dataMisses: number;
}

/** One run's totals: `reviews` reviews of request `kind` after the warm-up, under cachegrind. */
async function countRun(work: string, kind: number, reviews: number): Promise<Totals> {
  const out = path.join(work, `cachegrind.${kind}.${reviews}`);
  const { stderr } = await run(
    "valgrind",
    [
      "--tool=cachegrind",
      "--cache-sim=yes",
      `--cachegrind-out-file=${out}`,
      process.execPath,
      "--single-threaded",
      "--import",
      import.meta.resolve("tsx"),
      fileURLToPath(import.meta.url),
      "--review-loop",
      work,
      String(kind),
      String(reviews),
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      throw new Error("bench:counts needs Valgrind on the PATH (Debian: apt-get install valgrind)");
    throw error;
  });
  const figure = (label: RegExp): number => {
    const match = label.exec(stderr);
    if (match?.[1] === undefined) throw new Error(`cachegrind printed no ${label.source}:\n${stderr}`);
    return Number(match[1].replaceAll(",", ""));
  };
  return {
    instructions: figure(/I\s+refs:\s+([\d,]+)/),
    instructionMisses: figure(/I1\s+misses:\s+([\d,]+)/),
    dataMisses: figure(/D1\s+misses:\s+([\d,]+)/),
  };
}

/** Reviews request `kind` of the hub written to `work`, `WARM_UP` + `reviews` times: the counted loop. */
async function reviewLoop(work: string, kind: number, reviews: number): Promise<void> {
  const { hub, requests } = JSON.parse(await readFile(path.join(work, "hub.json"), "utf8")) as {
    hub: Parameters<typeof loadHub>[0];
    requests: [string, unknown][];
  };
  tuneHeapForReviews();
  const reviewer = (await loadHub(hub)).reviewer();
  const request = requests[kind]?.[1];
  if (reviewer === undefined || request === undefined) throw new Error("the hub did not load");
  for (let index = 0; index < WARM_UP + reviews; index++) reviewer.review(request);
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), "metalsynth-counts-"));
  const hub = await generateHubSite(10_000, 1_000);
  try {
    await rm(path.join(hub.site, "rendered", "metalsynth.lock.yaml"));
    const requests = noLockRequests(hub).slice(0, KINDS);
    await writeFile(path.join(work, "hub.json"), JSON.stringify({ hub, requests }));
    console.log(
      "one review of the 1k / 10k hub without its lock, counted by cachegrind (node --single-threaded):",
    );
    for (let kind = 0; kind < requests.length; kind++) {
      const [none, many] = await Promise.all([countRun(work, kind, 0), countRun(work, kind, REVIEWS)]);
      const per = (key: keyof Totals) => (many[key] - none[key]) / REVIEWS;
      console.log(
        `  ${requests[kind]?.[0]}: ${(per("instructions") / 1e6).toFixed(1)} M instructions, ` +
          `${(per("instructionMisses") / 1e3).toFixed(0)} k L1i misses, ` +
          `${(per("dataMisses") / 1e3).toFixed(0)} k L1d misses`,
      );
    }
  } finally {
    await rm(hub.site, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  }
}

const [flag, work, kind, reviews] = process.argv.slice(2);
if (flag === "--review-loop" && work !== undefined) await reviewLoop(work, Number(kind), Number(reviews));
else await main();
