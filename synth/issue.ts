/**
 * The rule catalogue's vocabulary: every finding metalsynth reports is an {@link Issue} with a stable
 * rule id (SPEC §2). Issues are values; code throws only for bugs. The catalogue of rules is
 * `synth/rules/index.ts`.
 */
import { RULES } from "./rules/index.ts";

/** How bad a finding is: errors stop synth and deny admission, warnings are reported only. */
export type Severity = "error" | "warning";

/** A stable rule id from {@link RULES}. */
export type RuleId = keyof typeof RULES;

/** Where a finding points in the user's files; lines and columns are 1-based. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** One finding. `path` is a field path such as `spec.masters[0].master-1.mac-address`. */
export interface Issue {
  readonly rule: RuleId;
  readonly severity: Severity;
  /** Field path inside the object, `""` for the whole document. */
  readonly path: string;
  readonly message: string;
  /** `namespace/cluster` the finding belongs to, when it belongs to one. */
  readonly cluster?: string;
  /** `Kind/namespace/name` of the object the finding is about (the webhook reports only its own). */
  readonly object?: string;
  /** `namespace/name` of the BareMetalHost the finding is about, when one is: `metalsynth map` marks it. */
  readonly host?: string;
  readonly source?: SourcePosition;
}

/** Builds an issue with the catalogue's severity for `rule`. */
export function issue(
  rule: RuleId,
  path: string,
  message: string,
  extra: { cluster?: string; object?: string; source?: SourcePosition } = {},
): Issue {
  return { rule, severity: RULES[rule].severity, path, message, ...extra };
}

/**
 * One finding as text (SPEC §7): `<file>:<line>:<col>: <severity>[<rule>] <path>: <message>`, the
 * path left out for findings about a whole document (decision 0005).
 */
export function issueText(found: Issue): string {
  const where = found.source ? `${found.source.file}:${found.source.line}:${found.source.column}: ` : "";
  const path = found.path === "" ? "" : `${found.path}: `;
  return `${where}${found.severity}[${found.rule}] ${path}${found.message}`;
}

/** True when any issue is an error (warnings never block). */
export function hasErrors(issues: readonly Issue[]): boolean {
  return issues.some((found) => found.severity === "error");
}

/**
 * The report order of SPEC §7: by file, line, column, then rule and path so that findings on the same
 * spot are stable too.
 */
export function compareIssues(a: Issue, b: Issue): number {
  return (
    compareText(a.source?.file ?? "", b.source?.file ?? "") ||
    (a.source?.line ?? 0) - (b.source?.line ?? 0) ||
    (a.source?.column ?? 0) - (b.source?.column ?? 0) ||
    compareText(a.rule, b.rule) ||
    compareText(a.path, b.path) ||
    compareText(a.message, b.message)
  );
}

/** Locale-independent string order (never `localeCompare`: output must not depend on the machine). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
