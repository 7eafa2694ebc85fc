import type { Stats } from "node:fs";
import { lstat, readdir, readlink, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { issue, type Issue } from "../synth/issue.ts";
import { UsageError } from "./errors.ts";

/** File endings metalsynth reads from spec and inventory directories (docs/contract.md §7). */
const READABLE = /\.(ya?ml|json)$/i;

/** A file to read: the path to open and the path diagnostics show. */
export interface ListedFile {
  readonly absolute: string;
  readonly display: string;
}

/** A path below a spec or inventory path that is not read, and why (a `file-unread` diagnostic). */
export interface UnreadPath {
  readonly display: string;
  readonly reason: string;
}

/** What {@link listInputFiles} found. */
export interface InputListing {
  /** Files to read, sorted by display path, each real file once. */
  readonly files: ListedFile[];
  /** Paths that are there but are not read (links leaving the site or looping, unreadable directories). */
  readonly unread: UnreadPath[];
  /** Named paths (or globs) that match nothing: a mistake in the call. */
  readonly missing: string[];
}

/** Options of {@link listInputFiles}. */
export interface ListOptions {
  /**
   * The site directory. A symbolic link met below a path inside the site must resolve inside the
   * site; below a path outside it, inside that path. Without a site every named path is its own
   * boundary.
   */
  readonly site?: string;
  /** Diagnostics show paths relative to this directory. @default process.cwd() */
  readonly relativeTo?: string;
}

/**
 * Expands PATH arguments into files (docs/contract.md §7): a file stays itself whatever its name, a directory is
 * read recursively for `*.yaml`, `*.yml`, `*.json`, and a glob (`*`, `?`, `**`, `[a-z]`, `{a,b}`)
 * matches files. The result is sorted and each real file is listed once, so the order files are read in never depends on
 * the file system.
 *
 * Symbolic links follow one rule for specs and inventory alike: a link is followed when its target
 * stays inside the site directory (see {@link ListOptions.site}); a link that leaves it, dangles or
 * loops is not read and is listed in `unread` with its reason, so nothing disappears silently.
 */
export async function listInputFiles(
  patterns: readonly string[],
  options: ListOptions = {},
): Promise<InputListing> {
  const relativeTo = path.resolve(options.relativeTo ?? process.cwd());
  const site = options.site === undefined ? undefined : await realDirectory(options.site);
  const files = new Map<string, ListedFile>();
  const unread = new Map<string, UnreadPath>();
  const missing: string[] = [];
  for (const pattern of patterns) {
    const matcher = await globMatcher(pattern);
    const base = matcher?.base ?? pattern;
    const glob = matcher !== undefined;
    const walker = new Walker(relativeTo, await boundaryOf(base, options.site, site));
    await walker.visit(base, true);
    const matches = (given: string) => !matcher || matcher.test(given.split(path.sep).join("/"));
    const found = walker.files.filter((file) => matches(file.given));
    const skipped = walker.unread.filter((entry) => matches(entry.given));
    if (walker.absent || (glob && found.length === 0 && skipped.length === 0)) missing.push(pattern);
    for (const file of found) {
      if (!files.has(file.real)) files.set(file.real, { absolute: file.given, display: file.display });
    }
    for (const { display, reason } of skipped) unread.set(display, { display, reason });
  }
  const byDisplay = (a: { display: string }, b: { display: string }) =>
    a.display < b.display ? -1 : a.display > b.display ? 1 : 0;
  return {
    files: [...files.values()].sort(byDisplay),
    unread: [...unread.values()].sort(byDisplay),
    missing,
  };
}

/** Expands PATH arguments into file paths, as {@link listInputFiles} without a site does. */
export async function expandPaths(
  patterns: readonly string[],
): Promise<{ files: string[]; missing: string[] }> {
  const listing = await listInputFiles(patterns);
  return { files: listing.files.map((file) => file.absolute), missing: listing.missing };
}

interface WalkedFile {
  /** The path as reached from the named path (what globs match against). */
  readonly given: string;
  readonly real: string;
  readonly display: string;
}

/** One named path's walk: follows links that stay inside `boundary`, records the rest as unread. */
class Walker {
  readonly files: WalkedFile[] = [];
  readonly unread: (UnreadPath & { readonly given: string })[] = [];
  /** The named path does not exist at all. */
  absent = false;

  constructor(
    private readonly relativeTo: string,
    private readonly boundary: string | undefined,
  ) {}

  async visit(given: string, named: boolean, ancestors: readonly string[] = []): Promise<void> {
    const display = displayPath(given, this.relativeTo);
    let info: Stats;
    try {
      info = await lstat(given);
    } catch (error) {
      if (named && errorCode(error) === "ENOENT") this.absent = true;
      else this.unread.push({ given, display, reason: systemReason(error) });
      return;
    }
    let real: string;
    try {
      real = await realpath(given);
    } catch (error) {
      this.unread.push({ given, display, reason: await linkProblem(given, error) });
      return;
    }
    if (this.boundary !== undefined && !isInside(real, this.boundary)) {
      const target = info.isSymbolicLink() ? await readlink(given).catch(() => real) : real;
      this.unread.push({
        given,
        display,
        reason: `symbolic link to ${target} leaves the directory ${displayPath(this.boundary, this.relativeTo)}; copy the file in, or point the link inside it`,
      });
      return;
    }
    if (info.isSymbolicLink()) {
      try {
        info = await stat(given);
      } catch (error) {
        this.unread.push({ given, display, reason: await linkProblem(given, error) });
        return;
      }
    }
    if (info.isDirectory()) {
      const loop = ancestors.find((ancestor) => ancestor === real);
      if (loop !== undefined) {
        this.unread.push({
          given,
          display,
          reason: `symbolic link loops back to ${displayPath(loop, this.relativeTo)}`,
        });
        return;
      }
      let names: string[];
      try {
        names = (await readdir(given)).sort();
      } catch (error) {
        this.unread.push({ given, display, reason: systemReason(error) });
        return;
      }
      for (const name of names) await this.visit(path.join(given, name), false, [...ancestors, real]);
      return;
    }
    // Inside directories only the file names docs/contract.md §7 lists are read; a file named directly always is.
    if (!named && !READABLE.test(path.basename(given))) return;
    if (info.isFile()) this.files.push({ given, real, display });
    else this.unread.push({ given, display, reason: "not a regular file (a FIFO, socket or device)" });
  }
}

/** Why a link can't be followed: it dangles or loops. */
async function linkProblem(given: string, error: unknown): Promise<string> {
  const target = await readlink(given).catch(() => undefined);
  const code = errorCode(error);
  if (code === "ELOOP") return `symbolic link loop${target === undefined ? "" : ` (${target})`}`;
  if (code === "ENOENT" && target !== undefined) return `symbolic link to ${target}, which does not exist`;
  return systemReason(error);
}

/**
 * Where links below `given` must stay: the site when `given` is (lexically) inside it, else `given`
 * itself, resolved.
 */
async function boundaryOf(
  given: string,
  siteGiven: string | undefined,
  siteReal: string | undefined,
): Promise<string | undefined> {
  if (
    siteGiven !== undefined &&
    siteReal !== undefined &&
    isInside(path.resolve(given), path.resolve(siteGiven))
  )
    return siteReal;
  return realDirectory(given);
}

/** The real path of `directory` (of the directory holding it when it is a file); undefined if missing. */
async function realDirectory(given: string): Promise<string | undefined> {
  const real = await realpath(given).catch(() => undefined);
  if (real === undefined) return undefined;
  const info = await stat(real).catch(() => undefined);
  return info?.isDirectory() ? real : path.dirname(real);
}

function isInside(file: string, directory: string): boolean {
  const relative = path.relative(directory, file);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * A glob's matcher and the directory to walk for it (the part before its first wildcard segment), or
 * undefined for a plain path. picomatch's syntax: `*`, `?`, `**`, character classes (`[a-z]`) and
 * braces (`{a,b}`); `*` also matches names that start with a dot, as a directory read does. Imported
 * here, not at the top: the CLI entry imports this module, and `--help` loads no glob library.
 */
async function globMatcher(
  pattern: string,
): Promise<{ base: string; test: (file: string) => boolean } | undefined> {
  const { default: picomatch } = await import("picomatch");
  const scan = picomatch.scan(pattern);
  if (!scan.isGlob) return undefined;
  const base = scan.base === "" ? (pattern.startsWith("/") ? "/" : ".") : scan.base;
  return { base, test: picomatch(pattern, { dot: true }) };
}

/**
 * Throws a usage error when `site` is something other than a directory. A file given as the site
 * would otherwise surface as unread `specs/` and `inventory/` below it: findings about paths that
 * were never the user's mistake, instead of the one that was. A missing site is left to the readers
 * (`--specs` and `--inventory` may name everything elsewhere).
 */
export async function checkSite(site: string): Promise<void> {
  const info = await stat(site).catch(() => undefined);
  if (info !== undefined && !info.isDirectory())
    throw new UsageError(`site is not a directory: ${site} (the site is the directory that holds specs/)`);
}

/** The `file-unread` diagnostic for a path that is not read, and why. */
export function unreadIssue(entry: UnreadPath): Issue {
  return issue("file-unread", "", `not read: ${entry.reason}`, {
    source: { file: entry.display, line: 1, column: 1 },
  });
}

/** A path as it appears in diagnostics: relative to `base`, with `/` separators. */
export function displayPath(file: string, base: string): string {
  return path.relative(base, path.resolve(file)).split(path.sep).join("/") || ".";
}

/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, …), if it is one. */
export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

/** A system error as a short reason a user can act on: `permission denied`, not a stack. */
export function systemReason(error: unknown): string {
  switch (errorCode(error)) {
    case "ENOENT":
      return "no such file or directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "is a directory, not a file";
    case "ENOTDIR":
      return "a part of the path is not a directory";
    case "ELOOP":
      return "symbolic link loop";
    case "EMFILE":
    case "ENFILE":
      return "too many open files";
    case "EIO":
      return "input/output error";
    default: {
      const message = error instanceof Error ? error.message : String(error);
      return message.split("\n")[0] ?? message;
    }
  }
}
