import { existsSync, readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { UsageError } from "../gitops/errors.ts";
import type { SiteLocation } from "../gitops/site-reader.ts";
import type { CommandArgs, CommandName } from "./usage.ts";

/**
 * Exit codes (docs/contract.md §7), plus `git` for `commit`: Git refused the commit or the push, so CI can tell
 * "the site has errors" (1) from "could not land it" (4).
 */
export const EXIT = { ok: 0, invalid: 1, usage: 2, internal: 3, git: 4 } as const;

/** Where the CLI writes; injected so tests can capture output without touching process streams. */
export interface Console {
  out(text: string): void;
  err(text: string): void;
  /**
   * Whether `err` is a terminal a person watches, so a progress line may be drawn and redrawn on it.
   * @default false
   */
  readonly errTerminal?: boolean;
}

/** One CLI command: its arguments, parsed as the command table declares them, in; exit code out. */
export type Command<C extends CommandName> = (args: CommandArgs<C>, io: Console) => Promise<number>;

/** The formats of commands whose output is findings: validate, synth, diff. */
export type FindingFormat = NonNullable<CommandArgs<"validate">["values"]["format"]>;

/**
 * Refuses an `--out` that names no directory, where a command only reads the lock from it (validate,
 * explain): without a lock there, the findings about the lock would silently be missing.
 */
export async function checkLockTree(out: string | undefined): Promise<void> {
  if (out === undefined) return;
  const info = await stat(out).catch(() => undefined);
  if (info?.isDirectory() !== true)
    throw new UsageError(
      `--out ${out}: ${info === undefined ? "no such directory" : "not a directory"}; it names the rendered tree whose lock is read`,
      { showHelp: false },
    );
}

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
