import { compareIssues, issueText, type Issue } from "../synth/issue.ts";

/** How diagnostics are printed (SPEC §7). */
export type OutputFormat = "text" | "json";

/**
 * Diagnostics, sorted: text as `<file>:<line>:<col>: <severity>[<rule>] <path>: <message>` (the path
 * is left out for findings about a whole document), or a JSON array of
 * `{severity, rule, file, line, column, path, cluster, message}`.
 */
export function formatIssues(issues: readonly Issue[], format: OutputFormat): string {
  if (format === "json") return `${JSON.stringify(issueRows(issues), null, 2)}\n`;
  return [...issues]
    .sort(compareIssues)
    .map((found) => `${issueText(found)}\n`)
    .join("");
}

/**
 * A command's JSON report (synth, diff): `report` as pretty JSON, its `diagnostics` as the sorted
 * rows of SPEC §7.
 */
export function jsonReport(
  report: { readonly diagnostics: readonly Issue[] } & Record<string, unknown>,
): string {
  return `${JSON.stringify({ ...report, diagnostics: issueRows(report.diagnostics) }, null, 2)}\n`;
}

/** Diagnostics as the JSON rows of SPEC §7, sorted. */
function issueRows(issues: readonly Issue[]) {
  return [...issues].sort(compareIssues).map((found) => ({
    severity: found.severity,
    rule: found.rule,
    file: found.source?.file ?? null,
    line: found.source?.line ?? null,
    column: found.source?.column ?? null,
    path: found.path,
    cluster: found.cluster ?? null,
    message: found.message,
  }));
}
