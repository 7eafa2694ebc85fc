import path from "node:path";
import { UsageError } from "../../gitops/errors.ts";
import { diffTrees, hasChanges, type FileChange } from "../../gitops/report/diff.ts";
import { diffText, filePatch } from "../../gitops/report/diff-format.ts";
import { diffMarkdown } from "../../gitops/report/diff-markdown.ts";
import { displayPath } from "../../gitops/files.ts";
import { MAP_TO_STDOUT, writeSiteMap } from "../../gitops/map-file.ts";
import { renderFromSite } from "../../gitops/render-site.ts";
import { formatIssues, jsonReport } from "../../gitops/report/report.ts";
import { checkSite, type SiteLocation } from "../../gitops/site-reader.ts";
import { withStagedSite } from "../../gitops/staged-site.ts";
import { checkOutput } from "../../gitops/render.ts";
import { readTree } from "../../gitops/replace-dir.ts";
import { LOCK_FILE } from "../../synth/plan/lock.ts";
import { EXIT, siteLocation, summary, type Command, type Console, type FindingFormat } from "../common.ts";
import { findingsIn } from "../findings.ts";

/**
 * `metalsynth diff`: what synth would change in `rendered/`, per cluster, without writing anything.
 * With `--exit-code` a pending change exits 1, like `git diff --exit-code`. With `--staged`, of the
 * site as the Git index holds it, against the index's `rendered/`.
 */
export const diff: Command<"diff"> = async ({ values }, io) => {
  const format = values.format ?? "text";
  if (values.patch && format !== "text" && format !== "json")
    throw new UsageError(`--patch goes with text or json output, not ${format}`);
  if (values.map === MAP_TO_STDOUT || values.map === "")
    throw new UsageError("--map needs a file name: the diff itself goes to standard output");
  const location = siteLocation(values);
  // The tree the output names: rendered/ as the user knows it, also when --staged compares a copy.
  const shown = location.out ?? path.join(location.site ?? ".", "rendered");
  const options: CompareOptions = { ...values, format, shown };
  return values.staged
    ? withStagedSite(location, "tree", (staged) => compare(staged, options, io))
    : compare(location, options, io);
};

/** How {@link compare} reports: diff's options. */
interface CompareOptions {
  readonly format: FindingFormat | "markdown";
  readonly "exit-code"?: boolean;
  readonly patch?: boolean;
  readonly map?: string;
  /** The output directory as the output names it. */
  readonly shown: string;
}

/** Renders the site at `location` in memory and compares it with its output directory. */
async function compare(location: SiteLocation, values: CompareOptions, io: Console): Promise<number> {
  const { format, shown } = values;
  await checkSite(location.site ?? ".");
  // Comparing with a directory metalsynth did not write would read all of it, and mean nothing.
  await checkOutput(location.out ?? path.join(location.site ?? ".", "rendered"), "compare with");
  const { input, plan, issues, rendered } = await renderFromSite(location);
  if (values.map !== undefined) {
    // The map of the same comparison: hosts changing hands against the lock in rendered/.
    const source = displayPath(path.resolve(shown, LOCK_FILE), process.cwd());
    const previous = { lock: input.lock, source };
    const facts = await writeSiteMap(
      values.map,
      { inventory: input.inventory, plan, issues, previous },
      io.out,
    );
    io.err(`wrote ${values.map}: ${facts}\n`);
  }
  if (!rendered) {
    if (format === "json") {
      const nothing = { clusters: [], wiring: { added: [], changed: [], removed: [] }, files: [] };
      io.out(jsonReport({ out: shown, changed: false, ...nothing, diagnostics: issues }));
    } else if (format === "markdown") io.out(diffMarkdown(undefined, issues, shown));
    else io.out(findingsIn(issues, format));
    io.err(`${summary(issues)}; nothing to compare\n`);
    return EXIT.invalid;
  }
  if (input.pathPrefixNote !== undefined) io.err(`metalsynth: note: ${input.pathPrefixNote}\n`);
  const before = await readTree(input.out);
  const changes = diffTrees(before, rendered.files);
  const patch = (change: FileChange) => filePatch(change, before, rendered.files);
  if (format === "json") {
    const files = values.patch
      ? changes.files.map((change) => ({ ...change, patch: patch(change) }))
      : changes.files;
    io.out(jsonReport({ out: shown, changed: hasChanges(changes), ...changes, files, diagnostics: issues }));
  } else if (format === "text") {
    if (issues.length > 0) io.err(formatIssues(issues, "text"));
    io.out(diffText(changes, shown));
    if (values.patch) for (const change of changes.files) io.out(patch(change));
  } else if (format === "markdown") {
    if (issues.length > 0) io.err(formatIssues(issues, "text"));
    io.out(diffMarkdown(changes, issues, shown));
  } else {
    // Annotations or SARIF on stdout (the warnings); the change itself goes to the log on stderr.
    io.out(findingsIn(issues, format));
    io.err(diffText(changes, shown));
  }
  return values["exit-code"] && hasChanges(changes) ? EXIT.invalid : EXIT.ok;
}
