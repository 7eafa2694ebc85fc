/**
 * The plan cache (decision 0070): what a run that read an inventory, settings and lock planned,
 * kept beside the synth cache under their digest (`SiteDigest.planDigest`), so a synth whose specs
 * changed only in what planning does not read takes the plan instead of reading the inventory and
 * planning the site again. Serialised with `node:v8`, like the inventory cache's entries; each
 * cluster directory's share of the plan on its own, so a run reads only those it renders again
 * (decision 0071).
 */
import path from "node:path";
import { deserialize, serialize } from "node:v8";
import type { ClusterKey } from "../synth/cluster-key.ts";
import type { Issue } from "../synth/issue.ts";
import type { SpecLayout } from "../synth/plan/plan-reuse.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { readSerialisedEntry, sha256, writeEntry, type CacheShelf } from "./cache-files.ts";
import type { PlanUnits } from "./render-readback.ts";
import type { PlanShare, PlanShares } from "./render-units.ts";

/** One entry: a site's plan, and what tells whether other specs are planned alike. */
export interface PlanEntry {
  /** The plan digest it is kept under. */
  readonly key: string;
  /**
   * SHA-256 of the settings as resolved (the wiring's path prefix may come from where `rendered/`
   * sits in Git, which no file digest covers, decision 0055): the units' digests read them.
   */
  readonly settings: string;
  /** `planningDigest` of the model planned. */
  readonly planning: string;
  /** Where the specs' documents were, for moving the findings. */
  readonly layout: SpecLayout;
  /** `clusterTexts` of the model planned. */
  readonly clusters: ReadonlyMap<ClusterKey, string>;
  /** The inventory's findings. */
  readonly inventoryIssues: readonly Issue[];
  /** The lock's findings: the lock read is the one read then, byte for byte, so it is not parsed again. */
  readonly lockIssues: readonly Issue[];
  /** The planner's findings, then the address clashes, as the evaluation gave them. */
  readonly planIssues: readonly Issue[];
  /** The plan's cluster directories, each read when it is rendered (see {@link KeptShares}). */
  readonly shares: KeptShares;
  /** The plan's units as its run read them back. */
  readonly units: PlanUnits;
}

/**
 * A plan's directories as the entry keeps them: the lock file's text, and each directory's key and
 * share, the shares serialised one after another into one buffer. A change to one cluster's CRs
 * renders one directory; reading the 10,000 others' hosts back cost more than the rest of such a
 * run (decision 0071).
 */
export interface KeptShares {
  readonly lock: string;
  /** Each directory's cluster key, in plan order. */
  readonly keys: readonly ClusterKey[];
  /** Where each directory's share ends in {@link bytes}; the first starts at 0. */
  readonly ends: readonly number[];
  readonly bytes: Uint8Array;
}

/** `shares` kept for an entry. */
export function keptShares(shares: PlanShares): KeptShares {
  const parts: Buffer[] = [];
  const ends: number[] = [];
  let end = 0;
  for (let index = 0; index < shares.keys.length; index++) {
    const part = serialize(shares.share(index));
    parts.push(part);
    end += part.length;
    ends.push(end);
  }
  return { lock: shares.lock, keys: shares.keys, ends, bytes: Buffer.concat(parts) };
}

/** The plan's directories of a kept entry, each deserialised when asked for. */
export function sharesOf(kept: KeptShares): PlanShares {
  return {
    lock: kept.lock,
    keys: kept.keys,
    share: (index) =>
      deserialize(kept.bytes.subarray(kept.ends[index - 1] ?? 0, kept.ends[index])) as PlanShare,
  };
}

/** Where the plan cache of the synth cache in `directory` keeps its entries: two, as the inventory's. */
function shelf(directory: string): CacheShelf {
  return { directory: path.join(directory, "plan"), suffix: ".v8", kept: 2 };
}

/** The entry kept under `key` in the cache in `directory`; undefined when it holds none whole. */
export function cachedPlan(directory: string, key: string): PlanEntry | undefined {
  const entry = readSerialisedEntry(shelf(directory), key);
  // Its checksum holds and its key covers metalsynth's code: written by this very code.
  if (typeof entry !== "object" || entry === null || (entry as PlanEntry).key !== key) return undefined;
  return entry as PlanEntry;
}

/** Keeps `entry` under its key in the cache in `directory`. */
export function storePlan(directory: string, entry: PlanEntry): void {
  writeEntry(shelf(directory), entry.key, serialize(entry));
}

/** The {@link PlanEntry.settings} of `settings`. */
export function settingsDigest(settings: SiteSettings): string {
  return sha256(JSON.stringify(settings));
}
