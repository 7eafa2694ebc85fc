/**
 * The synth cache (decision 0066): what a synth's evaluation of a site gave (its findings, and the
 * units of the tree it rendered), kept outside Git under the site digest of everything the
 * evaluation read (site-digest.ts). A synth whose site has a digest the cache holds takes the
 * findings from it and reads the tree back against the units it records, as a full run would;
 * only when every unit reads back whole does it answer, and then with what a full run gives. A
 * miss, an entry that does not check out, a unit that changed: the full run, silently.
 *
 * Like ESLint's `--cache` file or tsc's buildinfo it is state a clone does not have, so nothing in
 * Git or in the output depends on it: with or without it a synth prints and writes the same bytes.
 */
import os from "node:os";
import path from "node:path";
import type { Issue } from "../synth/issue.ts";
import { readEntryBody, sha256, writeEntry, type CacheShelf } from "./cache-files.ts";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";
import type { RenderedPlace } from "../synth/site/path-prefix.ts";
import type { ChangedRender } from "./render-incremental.ts";
import { readUnitsBack, type PlanUnits } from "./render-readback.ts";
import type { SiteDigest, SiteRead } from "./site-digest.ts";
import type { SiteLocation } from "./site-reader.ts";
import { renderedPlace } from "./work-tree.ts";

/** What a synth found, up to the write: from the cache or from a full run. */
export interface SynthOutcome {
  /** The resolved output directory. */
  readonly out: string;
  /** Reading and evaluation findings, errors and warnings. */
  readonly issues: readonly Issue[];
  /** The path prefix note the site reader gives (decision 0055). */
  readonly pathPrefixNote?: string;
  /** The tree to write; undefined when `issues` has errors. */
  readonly rendered?: ChangedRender;
}

/** One cache entry: a site's evaluation, under its digest. Plain data, written as JSON. */
interface CacheEntry {
  readonly digest: string;
  /** What `renderedPlace(out)` said, when the evaluation asked it; null when it did not. */
  readonly place: RenderedPlace | null;
  readonly issues: readonly Issue[];
  readonly pathPrefixNote: string | null;
  /** Null when the findings held an error, so nothing was rendered. */
  readonly render: {
    /** The lock's text to write; null when it is the lock as read. */
    readonly lock: string | null;
    readonly units: PlanUnits;
  } | null;
}

/** Where a synth cache's entries are, and how many it keeps. */
function shelf(directory: string): CacheShelf {
  return { directory, suffix: ".json", kept: 16 };
}

/**
 * The cache's directory: `$METALSYNTH_SYNTH_CACHE` when set (as `METALSYNTH_E2E_CACHE` names the
 * e2e suite's), else `$XDG_CACHE_HOME/metalsynth/synth`, or `~/.cache/metalsynth/synth` when that
 * is unset or not absolute (the XDG base directory specification).
 */
export function cacheDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const own = env["METALSYNTH_SYNTH_CACHE"];
  if (own !== undefined && own !== "") return own;
  const xdg = env["XDG_CACHE_HOME"];
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache");
  return path.join(base, "metalsynth", "synth");
}

/**
 * The synth of the site at `location`, as `readSiteDigest` read it (`site`), from the cache, when the
 * cache holds its digest and every
 * unit of the tree in the output directory reads back whole; undefined otherwise (a full run gives
 * the answer then). Files of `rendered/` are read and compared as a full run reads them.
 */
export async function synthFromCache(
  location: SiteLocation,
  site: SiteRead,
  options: { readonly directory?: string; readonly signal?: AbortSignal } = {},
): Promise<SynthOutcome | undefined> {
  const entry = readEntry(options.directory ?? cacheDirectory(), site.digest);
  if (entry === undefined) return undefined;
  const out = location.out ?? path.join(location.site ?? ".", "rendered");
  if (entry.place !== null && JSON.stringify(await renderedPlace(out)) !== JSON.stringify(entry.place))
    return undefined;
  const found = {
    out,
    issues: entry.issues,
    ...(entry.pathPrefixNote !== null && { pathPrefixNote: entry.pathPrefixNote }),
  };
  if (entry.render === null) return found;
  const lock = entry.render.lock ?? site.lock?.toString("utf8");
  const { units } = entry.render;
  const back = await readUnitsBack(out, units, options.signal);
  // A unit to render again needs the plan: the full run renders it.
  if (lock === undefined || back.clusters.size < units.directories.length) return undefined;
  if (units.wiring !== undefined && !back.wiring) return undefined;
  return {
    ...found,
    rendered: {
      files: new Map([[LOCK_FILE, lock]]),
      // In plan order: read back directory by directory, in that order.
      clusters: [...back.clusters.values()],
      kept: back.kept,
      directories: { rendered: 0, kept: back.clusters.size },
      units,
    },
  };
}

/**
 * Keeps what a full synth found under `digest` (fed by the site reader as it read the site); a run
 * whose reading failed somewhere is not kept. Failing to write is not an error: the cache is an
 * optimisation, and the next run evaluates again.
 */
export function storeSynth(digest: SiteDigest, outcome: SynthOutcome, directory = cacheDirectory()): void {
  const key = digest.digest();
  if (key === undefined) return;
  const { rendered } = outcome;
  if (rendered !== undefined && rendered.units === undefined) return;
  const lock = rendered?.files.get(LOCK_FILE);
  const entry: CacheEntry = {
    digest: key,
    place: digest.place ?? null,
    issues: outcome.issues,
    pathPrefixNote: outcome.pathPrefixNote ?? null,
    render:
      rendered?.units === undefined || lock === undefined
        ? null
        : { lock: sha256(lock) === digest.lock ? null : lock, units: rendered.units },
  };
  writeEntry(shelf(directory), key, JSON.stringify(entry));
}

/**
 * The entry under `digest`, when there is one and it is whole: its first line is the SHA-256 of the
 * rest, and the rest names the digest. Anything else (missing, truncated, edited, another format)
 * is a miss.
 */
function readEntry(directory: string, digest: string): CacheEntry | undefined {
  const body = readEntryBody(shelf(directory), digest);
  if (body === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  return isEntryOf(parsed, digest) ? parsed : undefined;
}

/**
 * Whether `value` is the entry of `digest`. Its bytes are those {@link storeSynth} wrote (their
 * checksum holds), and the digest covers metalsynth's own code, so it was written by this very
 * code: checking the digest and the shape's top is enough.
 */
function isEntryOf(value: unknown, digest: string): value is CacheEntry {
  if (typeof value !== "object" || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    entry["digest"] === digest && Array.isArray(entry["issues"]) && "render" in entry && "place" in entry
  );
}
