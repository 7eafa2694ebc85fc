import { readdir, stat } from "node:fs/promises";
import path from "node:path";

/** File endings metalsynth reads from spec and inventory paths (SPEC §7). */
const READABLE = /\.(ya?ml|json)$/i;

/**
 * Expands PATH arguments into files: a file stays itself, a directory is read recursively for
 * `*.yaml`, `*.yml`, `*.json`, and anything with `*`, `?` or `**` is a glob. The result is sorted and
 * de-duplicated, so the order files are read in never depends on the file system.
 */
export async function expandPaths(
  patterns: readonly string[],
): Promise<{ files: string[]; missing: string[] }> {
  const files = new Set<string>();
  const missing: string[] = [];
  for (const pattern of patterns) {
    const found = isGlob(pattern) ? await glob(pattern) : await walk(pattern);
    if (found === undefined || (isGlob(pattern) && found.length === 0)) missing.push(pattern);
    for (const file of found ?? []) files.add(file);
  }
  return { files: [...files].sort(), missing };
}

function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

/** All readable files below `target`, or undefined when it does not exist. */
async function walk(target: string): Promise<string[] | undefined> {
  const info = await stat(target).catch(() => undefined);
  if (!info) return undefined;
  if (info.isFile()) return [target];
  if (!info.isDirectory()) return [];
  const entries = await readdir(target, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && READABLE.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

async function glob(pattern: string): Promise<string[]> {
  const segments = pattern.split(/[\\/]/);
  const firstGlob = segments.findIndex(isGlob);
  const base = segments.slice(0, firstGlob).join("/") || ".";
  const matcher = globRegExp(pattern);
  const candidates = (await walk(base)) ?? [];
  return candidates.filter((file) => matcher.test(file.split(path.sep).join("/")));
}

/** `**` spans directories, `*` and `?` stay within one. */
function globRegExp(pattern: string): RegExp {
  let source = "";
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index] ?? "";
    if (char === "*" && pattern[index + 1] === "*") {
      source += pattern[index + 2] === "/" ? "(?:.*/)?" : ".*";
      index += pattern[index + 2] === "/" ? 2 : 1;
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source.replace(/^\.\//, "")}$`);
}

/** A path as it appears in diagnostics: relative to `base`, with `/` separators. */
export function displayPath(file: string, base: string): string {
  return path.relative(base, path.resolve(file)).split(path.sep).join("/") || ".";
}
