import { existsSync, readFileSync } from "node:fs";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../gitops/errors.ts";
import type { OutputFormat } from "../gitops/report/report.ts";
import type { SiteLocation } from "../gitops/site-reader.ts";

/**
 * Exit codes (docs/contract.md §7), plus `git` for `commit`: Git refused the commit or the push, so CI can tell
 * "the site has errors" (1) from "could not land it" (4).
 */
export const EXIT = { ok: 0, invalid: 1, usage: 2, internal: 3, git: 4 } as const;

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
  format: { type: "string", short: "o" },
  out: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

type Options = NonNullable<ParseArgsConfig["options"]>;

interface SiteArgsConfig<Extra extends Options> {
  args: string[];
  options: typeof SITE_OPTIONS & Extra;
  strict: true;
  allowPositionals: true;
  tokens: true;
}

/**
 * What {@link parseSiteArgs} returns. Named because the declaration files can't name the inferred
 * type (it uses types @types/node keeps private).
 */
interface SiteArgs<Extra extends Options> {
  values: ReturnType<typeof parseArgs<SiteArgsConfig<Extra>>>["values"];
  positionals: string[];
}

/**
 * Parses the arguments of a command that reads a site: {@link SITE_OPTIONS} plus `extra`. As docs/contract.md §7
 * writes them (`--specs GLOB…`, `--inventory PATH…`), every word after `--specs` or `--inventory` up
 * to the next option is one of its values, so a glob the shell expanded (`--specs specs/*.yaml`)
 * still means every file; both may also be repeated. Any other word is a usage error unless
 * `allowPositionals` (explain's cluster name), and is then returned in `positionals`.
 */
export function parseSiteArgs<const Extra extends Options = Record<never, never>>(
  argv: readonly string[],
  // The empty default is what Extra defaults to.
  extra: Extra = {} as Extra,
  allowPositionals = false,
): SiteArgs<Extra> {
  const parsed = parseArgs<SiteArgsConfig<Extra>>({
    args: [...argv],
    options: { ...SITE_OPTIONS, ...extra },
    strict: true,
    allowPositionals: true,
    tokens: true,
  });
  const positionals = listWords(parsed, ["specs", "inventory"]);
  if (!allowPositionals) refuseStrayWords(positionals);
  return { values: parsed.values, positionals };
}

/** For a command that takes no positional arguments: refuses the first of {@link listWords}' words. */
export function refuseStrayWords(words: readonly string[]): void {
  const [stray] = words;
  if (stray !== undefined) throw new UsageError(`unexpected argument "${stray}"`);
}

/** The tokens {@link listWords} reads: what `parseArgs` returns with `tokens: true`. */
type ArgToken =
  | { readonly kind: "option"; readonly name: string }
  | { readonly kind: "positional"; readonly value: string }
  | { readonly kind: "option-terminator" };

/**
 * docs/contract.md §7's `PATH…` options: every word after one of `lists` (multiple-valued string options) up to
 * the next option is one more of its values, so a glob the shell expanded still means every file.
 * Needs `parseArgs` with `allowPositionals` and `tokens`; returns the words that belong to no option.
 */
export function listWords(
  parsed: { readonly values: Record<string, unknown>; readonly tokens?: readonly ArgToken[] },
  lists: readonly string[],
): string[] {
  const positionals: string[] = [];
  let list: string[] | undefined;
  for (const token of parsed.tokens ?? []) {
    if (token.kind === "option") {
      const values = lists.includes(token.name) ? parsed.values[token.name] : undefined;
      list = Array.isArray(values) ? values : undefined;
    } else if (token.kind === "option-terminator") list = undefined;
    else (list ?? positionals).push(token.value);
  }
  return positionals;
}

/**
 * The `--format` (`-o`) value, `text` when not given; `allowed` are the formats the command prints
 * (text and json everywhere, github and sarif where findings are the output, markdown for diff).
 */
export function outputFormat<const Allowed extends OutputFormat = "text" | "json">(
  value: string | undefined,
  allowed: readonly Allowed[] = ["text", "json"] as Allowed[],
): Allowed {
  const format = value ?? "text";
  if ((allowed as readonly string[]).includes(format)) return format as Allowed;
  const names = allowed.join(", ").replace(/, ([^,]*)$/, " or $1");
  throw new UsageError(`--format must be ${names}, not "${value}"`);
}

/** The formats of commands whose output is findings: validate, synth, diff. */
export const FINDING_FORMATS = ["text", "json", "github", "sarif"] as const;

/**
 * The package version from package.json: one directory up from bin/ in the sources, two up from
 * dist/bin/ in the build and the installed package (never a copy in dist/, which would go stale).
 * Read, not imported: Node 20 before 20.18.3 warns on stderr that JSON modules are experimental.
 */
export function packageVersion(): string {
  const file = [import.meta.url.endsWith(".ts") ? "../package.json" : "../../package.json"]
    .map((relative) => new URL(relative, import.meta.url))
    .find((url) => existsSync(url));
  const parsed: unknown = file === undefined ? undefined : JSON.parse(readFileSync(file, "utf8"));
  const found = typeof parsed === "object" && parsed !== null && "version" in parsed ? parsed.version : "";
  return String(found);
}

/** The site-reader location from parsed options, leaving out what the user did not give. */
export function siteLocation(values: {
  site?: string;
  specs?: string[];
  inventory?: string[];
  out?: string;
}): SiteLocation {
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

/** The signals that end a CLI run. */
const ENDING_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Runs `write` (a replacement of `rendered/`) with SIGINT, SIGTERM and SIGHUP turned into the abort
 * of the signal it is given: the write stops at its next file operation and keeps the previous tree.
 * Once it has settled, the process ends the way that signal would have ended it, unless something
 * else listens for it. Only around writes: elsewhere (reading, rendering, git) a signal ends the run
 * at once, as nothing there needs putting back.
 */
export async function interruptible<T>(write: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    received ??= signal;
    controller.abort(new Error(`interrupted by ${signal}; the previous tree is kept`));
  };
  for (const signal of ENDING_SIGNALS) process.on(signal, onSignal);
  try {
    return await write(controller.signal);
  } finally {
    for (const signal of ENDING_SIGNALS) process.off(signal, onSignal);
    if (received && process.listenerCount(received) === 0) process.kill(process.pid, received);
  }
}
