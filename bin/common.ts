import type { ParseArgsConfig } from "node:util";
import { UsageError } from "../gitops/errors.ts";
import type { OutputFormat } from "../gitops/report.ts";

/** Exit codes (SPEC §7). */
export const EXIT = { ok: 0, invalid: 1, usage: 2, internal: 3 } as const;

/** Where the CLI writes; injected so tests can capture output without touching process streams. */
export interface Console {
  out(text: string): void;
  err(text: string): void;
}

/** One CLI command: its arguments after the command name in, exit code out. */
export type Command = (argv: readonly string[], io: Console) => Promise<number>;

/** The options every command that reads a site accepts. */
export const SITE_OPTIONS = {
  site: { type: "string" },
  specs: { type: "string", multiple: true },
  inventory: { type: "string", multiple: true },
  format: { type: "string" },
  out: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

export function outputFormat(value: string | undefined): OutputFormat {
  if (value === undefined || value === "text" || value === "json") return value ?? "text";
  throw new UsageError(`--format must be text or json, not "${value}"`);
}

/** The site-reader location from parsed options, leaving out what the user did not give. */
export function siteLocation(values: {
  site?: string;
  specs?: string[];
  inventory?: string[];
  out?: string;
}) {
  return {
    ...(values.site === undefined ? {} : { site: values.site }),
    ...(values.specs === undefined ? {} : { specs: values.specs }),
    ...(values.inventory === undefined ? {} : { inventory: values.inventory }),
    ...(values.out === undefined ? {} : { out: values.out }),
  };
}

/** `metalsynth: 2 errors, 1 warning`, or that there is nothing to report. */
export function summary(issues: readonly { severity: string }[]): string {
  const errors = issues.filter((found) => found.severity === "error").length;
  const warnings = issues.length - errors;
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  return errors + warnings === 0
    ? "metalsynth: no problems found"
    : `metalsynth: ${plural(errors, "error")}, ${plural(warnings, "warning")}`;
}
