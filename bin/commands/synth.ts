import path from "node:path";
import { UsageError } from "../../gitops/errors.ts";
import { clustersOutsideSubset, synthFromSite } from "../../gitops/render-site.ts";
import { formatIssues, jsonReport } from "../../gitops/report/report.ts";
import { checkSite } from "../../gitops/site-reader.ts";
import { checkOutput, writeRendered } from "../../gitops/render.ts";
import {
  EXIT,
  FINDING_FORMATS,
  interruptible,
  outputFormat,
  parseSiteArgs,
  siteLocation,
  summary,
  type Console,
} from "../common.ts";
import { findingsIn } from "../findings.ts";

/** `metalsynth synth`: validate, plan and write `rendered/`; on errors the tree is left as it was. */
export async function synth(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseSiteArgs(argv, { full: { type: "boolean" } });
  const format = outputFormat(values.format, FINDING_FORMATS);
  const location = siteLocation(values);
  // Before reading and rendering: a wrong --site or --out is said at once.
  await checkSite(location.site ?? ".");
  await checkOutput(location.out ?? path.join(location.site ?? ".", "rendered"));
  // Only the cluster directories whose inputs or files changed are rendered, unless --full (decision 0057).
  const render = await synthFromSite(location, { full: values.full === true });
  const { input, issues, rendered } = render;
  if (rendered === undefined) {
    // The same report shape as a successful run, so a CI script reads one format either way.
    if (format === "json")
      io.out(jsonReport({ out: input.out, clusters: [], change: null, diagnostics: issues }));
    else io.out(findingsIn(issues, format));
    io.err(`${summary(issues)}; ${input.out} left unchanged\n`);
    return EXIT.invalid;
  }
  const outside = await clustersOutsideSubset(location, render);
  if (outside.length > 0) {
    // Rendering a subset never removes the rest of the site: refuse rather than delete (README).
    throw new UsageError(
      `--specs covers only part of the site: writing ${input.out} would remove ${outside.join(", ")}, ` +
        `which ${path.join(location.site ?? ".", "specs")} still defines (and free their hosts in the lock). ` +
        `Run synth without --specs, or write the subset elsewhere with --out`,
      { showHelp: false },
    );
  }
  const { kept } = rendered;
  const change = await interruptible((signal) => writeRendered(input.out, rendered.files, { signal, kept }));
  if (input.pathPrefixNote !== undefined) io.err(`metalsynth: note: ${input.pathPrefixNote}\n`);
  if (format === "json") {
    io.out(jsonReport({ out: input.out, clusters: rendered.clusters, change, diagnostics: issues }));
    return EXIT.ok;
  }
  // With annotations or SARIF on stdout (the warnings), what was written goes to the log on stderr.
  const machine = format === "github" || format === "sarif";
  if (machine) io.out(findingsIn(issues, format));
  else if (issues.length > 0) io.err(formatIssues(issues, "text"));
  const report = machine ? io.err : io.out;
  for (const cluster of rendered.clusters) {
    const roles = cluster.roles.map(({ role, hosts }) => `${hosts.length} ${role}(s) [${hosts.join(", ")}]`);
    report(`${cluster.cluster}: ${roles.join(", ")}, ${cluster.objects} objects in ${cluster.directory}\n`);
  }
  const counts = `${change.added.length} added, ${change.changed.length} changed, ${change.removed.length} removed, ${change.unchanged} unchanged`;
  report(`wrote ${input.out}: ${counts}\n`);
  return EXIT.ok;
}
