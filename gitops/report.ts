import { compareIssues, issueText, type Issue } from "../synth/issue.ts";

/** How diagnostics are printed (SPEC §7). */
export type OutputFormat = "text" | "json";

/**
 * Diagnostics, sorted: text as `<file>:<line>:<col>: <severity>[<rule>] <path>: <message>` (the path
 * is left out for findings about a whole document), or a JSON array of
 * `{severity, rule, file, line, column, path, cluster, message}`.
 */
export function formatIssues(issues: readonly Issue[], format: OutputFormat): string {
  const sorted = [...issues].sort(compareIssues);
  if (format === "json") {
    const rows = sorted.map((found) => ({
      severity: found.severity,
      rule: found.rule,
      file: found.source?.file ?? null,
      line: found.source?.line ?? null,
      column: found.source?.column ?? null,
      path: found.path,
      cluster: found.cluster ?? null,
      message: found.message,
    }));
    return `${JSON.stringify(rows, null, 2)}\n`;
  }
  return sorted.map((found) => `${issueText(found)}\n`).join("");
}
