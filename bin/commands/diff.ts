import path from "node:path";
import { diffTrees, hasChanges, type FileChange } from "../../gitops/report/diff.ts";
import { diffText, filePatch } from "../../gitops/report/diff-format.ts";
import { renderFromSite } from "../../gitops/render-site.ts";
import { formatIssues, jsonReport } from "../../gitops/report/report.ts";
import { checkOutput, readTree } from "../../gitops/tree-writer.ts";
import { EXIT, outputFormat, parseSiteArgs, siteLocation, summary, type Console } from "../common.ts";

/**
 * `metalsynth diff`: what synth would change in `rendered/`, per cluster, without writing anything.
 * With `--exit-code` a pending change exits 1, like `git diff --exit-code`.
 */
export async function diff(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseSiteArgs(argv, {
    "exit-code": { type: "boolean" },
    patch: { type: "boolean" },
  });
  const format = outputFormat(values.format);
  const location = siteLocation(values);
  // Comparing with a directory metalsynth did not write would read all of it, and mean nothing.
  await checkOutput(location.out ?? path.join(location.site ?? ".", "rendered"), "compare with");
  const { input, issues, rendered } = await renderFromSite(location);
  if (!rendered) {
    if (format === "json") {
      const nothing = { clusters: [], wiring: { added: [], changed: [], removed: [] }, files: [] };
      io.out(jsonReport({ out: input.out, changed: false, ...nothing, diagnostics: issues }));
    } else io.out(formatIssues(issues, "text"));
    io.err(`${summary(issues)}; nothing to compare\n`);
    return EXIT.invalid;
  }
  const before = await readTree(input.out);
  const changes = diffTrees(before, rendered.files);
  const patch = (change: FileChange) => filePatch(change, before, rendered.files);
  if (format === "json") {
    const files = values.patch
      ? changes.files.map((change) => ({ ...change, patch: patch(change) }))
      : changes.files;
    io.out(
      jsonReport({ out: input.out, changed: hasChanges(changes), ...changes, files, diagnostics: issues }),
    );
  } else {
    if (issues.length > 0) io.err(formatIssues(issues, "text"));
    io.out(diffText(changes, input.out));
    if (values.patch) for (const change of changes.files) io.out(patch(change));
  }
  return values["exit-code"] && hasChanges(changes) ? EXIT.invalid : EXIT.ok;
}
