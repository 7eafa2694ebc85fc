import path from "node:path";
import { UsageError } from "../../gitops/errors.ts";
import { checkSite } from "../../gitops/files.ts";
import { formatIssues, jsonReport } from "../../gitops/report/report.ts";
import type { SiteLocation } from "../../gitops/site-reader.ts";
import { readSiteDigest } from "../../gitops/site-digest.ts";
import { cacheDirectory, synthFromCache, type SynthOutcome } from "../../gitops/synth-cache.ts";
import { compareText } from "../../synth/issue.ts";
import { LOCK_FILE } from "../../synth/plan/lock-file.ts";
import { checkOutput, writeRendered } from "../../gitops/render-write.ts";
import { EXIT, interruptible, siteLocation, summary, type Command, type Console } from "../common.ts";
import { findingsIn } from "../findings.ts";
import { startProgress, type Progress } from "../progress.ts";
import type { CommandArgs } from "../usage.ts";

/**
 * `metalsynth synth`: validate, plan and write `rendered/`; on errors the tree is left as it was.
 * A long run draws a progress line on a terminal's stderr, or ends with a summary line elsewhere.
 */
export const synth: Command<"synth"> = async (args, io) => {
  if (args.values.out === "-") return streamRendered(siteLocation({ ...args.values, out: undefined }), io);
  const progress = startProgress(io, "synth");
  try {
    return await synthToTree(args, io, progress);
  } finally {
    progress.end();
  }
};

/** synth into a directory; `progress` is ended before anything else is written. */
async function synthToTree(
  { values }: CommandArgs<"synth">,
  io: Console,
  progress: Progress,
): Promise<number> {
  const format = values.format ?? "text";
  const location = siteLocation(values);
  // Before reading and rendering: a wrong --site or --out is said at once.
  await checkSite(location.site ?? ".");
  await checkOutput(location.out ?? path.join(location.site ?? ".", "rendered"));
  progress.step("reading, planning and rendering");
  const render = await synthOf(location, values.full === true);
  const { out, issues, rendered } = render;
  if (rendered === undefined) {
    progress.end();
    // The same report shape as a successful run, so a CI script reads one format either way.
    if (format === "json") io.out(jsonReport({ out, clusters: [], change: null, diagnostics: issues }));
    else io.out(findingsIn(issues, format));
    io.err(`${summary(issues)}; ${out} left unchanged\n`);
    return EXIT.invalid;
  }
  // Only a --specs subset can leave clusters out (loading the rules to find them).
  const outside =
    location.specs === undefined
      ? []
      : await (await import("../../gitops/render-site.ts")).clustersOutsideSubset(location, render);
  if (outside.length > 0) {
    // Rendering a subset never removes the rest of the site: refuse rather than delete (README).
    throw new UsageError(
      `--specs covers only part of the site: writing ${out} would remove ${outside.join(", ")}, ` +
        `which ${path.join(location.site ?? ".", "specs")} still defines (and free their hosts in the lock). ` +
        `Run synth without --specs, or write the subset elsewhere with --out`,
      { showHelp: false },
    );
  }
  const { kept } = rendered;
  progress.step(`writing ${out}`);
  const change = await interruptible((signal) => writeRendered(out, rendered.files, { signal, kept }));
  progress.end();
  if (render.pathPrefixNote !== undefined) io.err(`metalsynth: note: ${render.pathPrefixNote}\n`);
  if (format === "json") {
    io.out(jsonReport({ out, clusters: rendered.clusters, change, diagnostics: issues }));
    return EXIT.ok;
  }
  // With annotations or SARIF on stdout (the warnings), what was written goes to the log on stderr.
  const machine = format === "github" || format === "sarif";
  if (machine) io.out(findingsIn(issues, format));
  else if (issues.length > 0) io.err(formatIssues(issues, "text"));
  const report = machine ? io.err : io.out;
  // A region's thousands of clusters, a line each, are a wall no one reads: one line then, unless asked.
  if (rendered.clusters.length <= CLUSTER_LINES || values.verbose === true) {
    for (const cluster of rendered.clusters) {
      const roles = cluster.roles.map(
        ({ role, hosts }) => `${hosts.length} ${role}(s) [${hosts.join(", ")}]`,
      );
      report(`${cluster.cluster}: ${roles.join(", ")}, ${cluster.objects} objects in ${cluster.directory}\n`);
    }
  } else {
    const objects = rendered.clusters.reduce((sum, cluster) => sum + cluster.objects, 0);
    report(`${rendered.clusters.length} clusters, ${objects} objects (--verbose lists each cluster)\n`);
  }
  const counts = `${change.added.length} added, ${change.changed.length} changed, ${change.removed.length} removed, ${change.unchanged} unchanged`;
  report(`wrote ${out}: ${counts}\n`);
  return EXIT.ok;
}

/**
 * The site's synth up to the write. A site whose every input is as a previous run read it takes
 * that run's findings and units from the synth cache, its tree in the output directory still read
 * back in full; anything else, and `--full`, evaluates the site and keeps what it found for the
 * next run (decision 0066); a site whose inventory is as a previous run read it takes its hosts
 * and findings from the inventory cache (decision 0068); one whose inventory, settings and lock are
 * as a previous run read them, and whose specs plan alike, takes that run's plan (decision 0070).
 * Only the cluster directories whose inputs or files changed are rendered, unless `--full`
 * (decision 0057). The rules, the planner and their libraries are loaded only when the synth cache
 * does not answer.
 */
async function synthOf(location: SiteLocation, full: boolean): Promise<SynthOutcome> {
  const cache = cacheDirectory();
  const seen = full ? undefined : await readSiteDigest(location);
  const cached = seen && (await synthFromCache(location, seen, { directory: cache }));
  if (cached !== undefined) return cached;
  const { synthFromKeptPlan, synthFromSite, synthOutcome } = await import("../../gitops/render-site.ts");
  if (full) return synthOutcome(await synthFromSite(location, { full }));
  const planned = seen && (await synthFromKeptPlan(location, seen, cache));
  if (planned !== undefined) return planned;
  const inventory = seen && { seen: seen.inventory, keep: seen.lock !== undefined };
  return synthOutcome(await synthFromSite(location, { cache, ...(inventory && { inventory }) }));
}

/** Clusters synth lists one line each without `--verbose`. */
const CLUSTER_LINES = 20;

/**
 * `synth --out -`: the rendered objects as one YAML stream on stdout (for kubeconform, kube-linter,
 * `kubectl apply --dry-run`), in `rendered/`'s file order; nothing is written. The lock is read from
 * `<site>/rendered` as synth reads it, and neither it nor the kustomizations (no Kubernetes objects)
 * are printed. With errors, the findings go to stderr and nothing to stdout.
 */
async function streamRendered(location: SiteLocation, io: Console): Promise<number> {
  await checkSite(location.site ?? ".");
  const { renderFromSite } = await import("../../gitops/render-site.ts");
  const { issues, rendered } = await renderFromSite(location);
  if (rendered === undefined) {
    io.err(findingsIn(issues, "text"));
    io.err(`${summary(issues)}; nothing rendered\n`);
    return EXIT.invalid;
  }
  if (issues.length > 0) io.err(formatIssues(issues, "text"));
  const files = [...rendered.files.keys()]
    .filter((file) => file !== LOCK_FILE && path.posix.basename(file) !== "kustomization.yaml")
    .sort(compareText);
  // Each file is a stream of whole documents: joined, they stay one.
  io.out(files.map((file) => (rendered.files.get(file) ?? "").replace(/^---\n/, "")).join("---\n"));
  return EXIT.ok;
}
