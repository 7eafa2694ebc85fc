import { compareIssues, issueText, type Issue } from "../../synth/issue.ts";

/**
 * What a command prints (docs/contract.md §7): text or json everywhere; `github` (workflow-command annotations)
 * and `sarif` where the output is findings; `markdown` for diff's pull-request summary; `yaml` where a
 * command prints objects (explain, status).
 */
export type OutputFormat = "text" | "json" | "yaml" | "github" | "sarif" | "markdown";

/**
 * Diagnostics, sorted: text as `<file>:<line>:<col>: <severity>[<rule>] <path>: <message>` (the path
 * is left out for findings about a whole document), or a JSON array of
 * `{severity, rule, file, line, column, path, cluster, message}`.
 */
export function formatIssues(issues: readonly Issue[], format: "text" | "json"): string {
  if (format === "json") return `${JSON.stringify(issueRows(issues), null, 2)}\n`;
  return [...issues]
    .sort(compareIssues)
    .map((found) => `${issueText(found)}\n`)
    .join("");
}

/**
 * A command's JSON report (synth, diff): `report` as pretty JSON, its `diagnostics` as the sorted
 * rows of docs/contract.md §7.
 */
export function jsonReport(
  report: { readonly diagnostics: readonly Issue[] } & Record<string, unknown>,
): string {
  return `${JSON.stringify({ ...report, diagnostics: issueRows(report.diagnostics) }, null, 2)}\n`;
}

/** Diagnostics as the JSON rows of docs/contract.md §7, sorted (for reports that hold more than one list of them). */
export function issueRows(issues: readonly Issue[]) {
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

/** How many `yaml-syntax` findings of one file are shown before the rest are only counted. */
export const SYNTAX_ERRORS_PER_FILE = 20;

/**
 * Keeps the first {@link SYNTAX_ERRORS_PER_FILE} `yaml-syntax` findings of each file and replaces the
 * rest with one finding that counts them: a file in the wrong format (newline-delimited JSON, a
 * binary dump) makes the parser report every line, and thousands of lines bury the one that matters.
 */
export function capSyntaxErrors(issues: readonly Issue[]): Issue[] {
  const perFile = new Map<string, Issue[]>();
  for (const found of [...issues].sort(compareIssues)) {
    if (found.rule !== "yaml-syntax" || found.source === undefined) continue;
    const list = perFile.get(found.source.file);
    if (list) list.push(found);
    else perFile.set(found.source.file, [found]);
  }
  const dropped = new Set<Issue>();
  const summaries: Issue[] = [];
  for (const list of perFile.values()) {
    const rest = list.slice(SYNTAX_ERRORS_PER_FILE);
    const [first] = rest;
    if (first === undefined) continue;
    for (const found of rest) dropped.add(found);
    summaries.push({
      ...first,
      message:
        `… and ${rest.length} more syntax errors in this file (only the first ${SYNTAX_ERRORS_PER_FILE} are shown); ` +
        `is it in another format? metalsynth reads YAML and JSON documents, one object or a List each`,
    });
  }
  return [...issues.filter((found) => !dropped.has(found)), ...summaries];
}
