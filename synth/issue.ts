/**
 * The rule catalogue's vocabulary: every finding metalsynth reports is an {@link Issue} with a stable
 * rule id (docs/contract.md §2). Issues are values; code throws only for bugs. The catalogue of rules is
 * `synth/rule-catalogue.ts`.
 */
import { RULES, type RuleId, type Severity } from "./rule-catalogue.ts";

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
 * One finding as text (docs/contract.md §7): `<file>:<line>:<col>: <severity>[<rule>] <path>: <message>`, the
 * path left out for findings about a whole document (decision 0005). Always one line: editors and CI
 * read a finding per line, and the file name, path and message can all carry the user's values.
 */
export function issueText(found: Issue): string {
  const where = found.source
    ? `${oneLine(found.source.file)}:${found.source.line}:${found.source.column}: `
    : "";
  const path = found.path === "" ? "" : `${oneLine(found.path)}: `;
  return `${where}${found.severity}[${found.rule}] ${path}${oneLine(found.message)}`;
}

/**
 * Control characters (C0, DEL, C1) and the Unicode line and paragraph separators: what breaks a
 * line in some reader of our text output, or moves a terminal's cursor (an ANSI escape in a label).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `text` with every control character written as an escape, as a quoted path segment writes it
 * (`\n`, `\t`, `\u001b`), so that text made of user values stays on one line.
 */
export function oneLine(text: string): string {
  return text.replace(
    CONTROL,
    (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** True when any issue is an error (warnings never block). */
export function hasErrors(issues: readonly Issue[]): boolean {
  return issues.some((found) => found.severity === "error");
}

/**
 * The report order of docs/contract.md §7: by file, line, column, then rule and path so that findings on the same
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
