/**
 * One synth benchmark run (docs/contract.md §8), in a process of its own so its peak RSS is its own:
 * `tsx bench/synth.ts render <site>` times each phase of `metalsynth synth` on a site (the site of
 * `bench/mixed-site.ts`), writing its `rendered/`; run again, it times the second render, which reads
 * the lock the first wrote and must write nothing. `tsx bench/synth.ts validate <site>` times
 * `metalsynth validate`. Each prints one JSON line.
 */
import { evaluateSite, readSite, renderPlan, renderSite, writeRendered } from "./product.ts";

/** The result line of a render. */
export interface RenderBenchResult {
  readonly seconds: { read: number; evaluate: number; render: number; write: number; total: number };
  readonly files: number;
  /** Files added, changed or removed: none on a second render of an unchanged site. */
  readonly written: number;
  readonly lockMiB: number;
  readonly maxRssMiB: number;
}

/** The result line of a validate. */
export interface ValidateBenchResult {
  readonly seconds: number;
  readonly errors: number;
  readonly warnings: number;
  readonly maxRssMiB: number;
}

const clock = () => performance.now() / 1000;
const round = (value: number) => Math.round(value * 100) / 100;
const peakRssMiB = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function render(site: string): Promise<RenderBenchResult> {
  const start = clock();
  const input = await readSite({ site, relativeTo: site });
  const read = clock();
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const evaluated = clock();
  const problems = [...input.issues, ...evaluation.issues];
  const ready = renderPlan(evaluation.plan, problems);
  if (!ready) throw new Error(`the site has errors: ${JSON.stringify(problems.slice(0, 3), null, 2)}`);
  const rendered = await renderSite(ready, input.settings);
  const renderedAt = clock();
  const change = await writeRendered(input.out, rendered.files);
  const written = clock();
  return {
    seconds: {
      read: round(read - start),
      evaluate: round(evaluated - read),
      render: round(renderedAt - evaluated),
      write: round(written - renderedAt),
      total: round(written - start),
    },
    files: rendered.files.size,
    written: change.added.length + change.changed.length + change.removed.length,
    lockMiB: round(Buffer.byteLength(rendered.files.get("metalsynth.lock.yaml") ?? "") / 2 ** 20),
    maxRssMiB: peakRssMiB(),
  };
}

async function validate(site: string): Promise<ValidateBenchResult> {
  const start = clock();
  const input = await readSite({ site, relativeTo: site });
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  const seconds = round(clock() - start);
  const errors = issues.filter((found) => found.severity === "error").length;
  return { seconds, errors, warnings: issues.length - errors, maxRssMiB: peakRssMiB() };
}

const [command, site] = process.argv.slice(2, 4);
if (site === undefined || (command !== "render" && command !== "validate"))
  throw new Error("usage: tsx bench/synth.ts render|validate <site>");
const result = command === "render" ? await render(site) : await validate(site);
process.stdout.write(`${JSON.stringify(result)}\n`);
