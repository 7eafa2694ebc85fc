import { lstat, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseDocuments, type ParsedFile } from "../synth/codec/read-documents.ts";
import type { SourceDocument } from "../synth/documents.ts";
import { issue, type Issue } from "../synth/issue.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock } from "../synth/model/lock.ts";
import { lockFromText } from "../synth/rules/lock.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { resolvePathPrefix } from "../synth/site/path-prefix.ts";
import { readSettings } from "../synth/site/settings.ts";
import { UsageError } from "./errors.ts";
import { checkSite, displayPath, errorCode, listInputFiles, systemReason, unreadIssue } from "./files.ts";
import type { InventoryCacheUse } from "./inventory-cache.ts";
import { feedSeenInventory, readInventory } from "./inventory-reader.ts";
import type { InventorySeen, SiteDigest } from "./site-digest.ts";
import { capSyntaxErrors } from "./report/report.ts";
import { renderedPlace } from "./work-tree.ts";

/** Where a site's parts are (docs/contract.md §1.1, §7); every path defaults from `site`. */
export interface SiteLocation {
  /** @default "." */
  readonly site?: string;
  /** @default ["<site>/specs"] */
  readonly specs?: readonly string[];
  /** @default ["<site>/inventory"] */
  readonly inventory?: readonly string[];
  /** @default "<site>/rendered" */
  readonly out?: string;
  /** Paths in diagnostics are relative to this directory. @default process.cwd() */
  readonly relativeTo?: string;
}

/** Everything read from a site, parsed but not yet judged. */
export interface SiteInput {
  readonly documents: readonly SourceDocument[];
  readonly inventory: Inventory;
  readonly lock: Lock;
  /** With `gitops.pathPrefix` resolved from where `out` sits in Git when the site does not set it. */
  readonly settings: SiteSettings;
  /**
   * Set when that path prefix is the default for want of a better one (no Git work tree): what the
   * commands that render the wiring tell the user once (decision 0055).
   */
  readonly pathPrefixNote?: string;
  /** The resolved output directory. */
  readonly out: string;
  /** Problems found while reading (syntax, missing paths, damaged lock). */
  readonly issues: readonly Issue[];
  /** Those of `issues` the inventory's read gave: what a kept plan keeps of it (decision 0070). */
  readonly inventoryIssues?: readonly Issue[];
  /** Those of `issues` the lock's parse gave, likewise (decision 0071). */
  readonly lockIssues?: readonly Issue[];
}

export { checkSite } from "./files.ts";

/** The site's settings file (docs/contract.md §6.1), at the root of the site. */
export const SETTINGS_FILE = "metalsynth.yaml";

/** Options of {@link readSite}. */
export interface ReadSiteOptions {
  /**
   * Fed every part of the site as it is read, for the synth cache (decision 0066).
   * @default undefined
   */
  readonly digest?: SiteDigest;
  /**
   * The inventory cache, with a `digest` to key it (decision 0068; readInventory's `cache`).
   * @default undefined
   */
  readonly inventoryCache?: InventoryCacheUse;
}

/** Reads specs, inventory, settings and the previous lock of a site. */
export async function readSite(location: SiteLocation, options: ReadSiteOptions = {}): Promise<SiteInput> {
  const { digest, inventoryCache: cache } = options;
  return readSiteWith(
    location,
    digest,
    (inventoryPaths, { relativeTo, site }) =>
      // readInventory walks the paths itself and throws a UsageError for a missing one.
      readInventory(inventoryPaths, {
        relativeTo,
        site,
        ...(digest && { digest }),
        ...(cache && { cache }),
      }),
    (file) => {
      const read = file ? lockFromText(file.shown, file.text) : { lock: EMPTY_LOCK, issues: [] };
      return { lock: read.lock, lockIssues: read.issues, issues: read.issues };
    },
  );
}

/**
 * A site read as {@link readSite} reads it but for its inventory and its lock, for a plan kept from
 * a run that read them (decisions 0070 and 0071): the inventory as `seen` is fed to `digest`
 * without a file read, and its `issues` stand for its findings; the lock's bytes are fed to
 * `digest` but not parsed, and `lockIssues` stand for its findings. Both stand only while the
 * digest's plan digest is the kept plan's: the caller checks it.
 */
export async function readSiteBesideInventory(
  location: SiteLocation,
  digest: SiteDigest,
  kept: {
    readonly inventory: { readonly seen: InventorySeen; readonly issues: readonly Issue[] };
    readonly lockIssues: readonly Issue[];
  },
): Promise<Omit<SiteInput, "inventory" | "lock">> {
  return readSiteWith(
    location,
    digest,
    () => {
      feedSeenInventory(kept.inventory.seen, digest);
      return Promise.resolve({ issues: kept.inventory.issues });
    },
    () => ({ lockIssues: kept.lockIssues, issues: kept.lockIssues }),
  );
}

/**
 * Reads a site's specs, then its inventory with `readInventoryPart`, then its settings, then its
 * lock's file, which `readLockPart` takes (undefined when there is none, or it can't be read);
 * feeding `digest` in that order, and the findings in the same order.
 */
async function readSiteWith<
  S extends { readonly issues: readonly Issue[] },
  L extends { readonly issues: readonly Issue[] },
>(
  location: SiteLocation,
  digest: SiteDigest | undefined,
  readInventoryPart: (paths: readonly string[], where: { relativeTo: string; site: string }) => Promise<S>,
  readLockPart: (file: LockFile | undefined) => L,
): Promise<Omit<SiteInput, "inventory" | "lock"> & Omit<S, "issues"> & Omit<L, "issues">> {
  const site = location.site ?? ".";
  const relativeTo = location.relativeTo ?? process.cwd();
  const out = location.out ?? path.join(site, "rendered");
  const issues: Issue[] = [];
  await checkSite(site);

  const specs = await listInputFiles(location.specs ?? [path.join(site, "specs")], { site, relativeTo });
  if (specs.missing.length > 0) throw new UsageError(`specs path not found: ${specs.missing.join(", ")}`);
  issues.push(...specs.unread.map(unreadIssue));
  for (const entry of specs.unread) digest?.unread("spec", entry.display, entry.reason);
  const documents: SourceDocument[] = [];
  const specIssues: Issue[] = [];
  for (const file of specs.files) {
    let text: string;
    try {
      text = await readFile(file.absolute, "utf8");
    } catch (error) {
      specIssues.push(unreadIssue({ display: file.display, reason: systemReason(error) }));
      digest?.incomplete("spec");
      continue;
    }
    digest?.content("spec", file.display, file.absolute, text);
    const parsed = parseDocuments(file.display, text);
    documents.push(...parsed.documents);
    specIssues.push(...parsed.issues);
    if (parsed.documents.length === 0 && parsed.issues.length === 0) {
      specIssues.push(
        issue("no-objects", "", "file holds no Kubernetes object (only comments or empty documents)", {
          source: { file: file.display, line: 1, column: 1 },
        }),
      );
    }
  }
  issues.push(...capSyntaxErrors(specIssues));

  const inventoryPaths = location.inventory ?? [path.join(site, "inventory")];
  const { issues: inventoryIssues, ...inventory } = await readInventoryPart(inventoryPaths, {
    relativeTo,
    site,
  });
  issues.push(...inventoryIssues);

  const settingsParsed = await readSettingsFile(path.join(site, SETTINGS_FILE), relativeTo, digest);
  const settings = readSettings(settingsParsed.documents);
  issues.push(...settingsParsed.issues, ...settings.issues);

  const place = settings.settings.gitops.pathPrefix === undefined ? await renderedPlace(out) : undefined;
  if (digest && place) digest.place = place;
  const resolved = resolvePathPrefix(settings.settings, place);

  const { issues: lockIssues, ...lock } = readLockPart(await readLock(out, relativeTo, issues, digest));
  issues.push(...lockIssues);
  return {
    ...inventory,
    inventoryIssues,
    ...lock,
    documents,
    settings: resolved.settings,
    ...(resolved.note === undefined ? {} : { pathPrefixNote: resolved.note }),
    out,
    issues,
  };
}

/** `metalsynth.yaml`, parsed; a missing file is no file (every setting has a default). */
async function readSettingsFile(
  file: string,
  relativeTo: string,
  digest: SiteDigest | undefined,
): Promise<ParsedFile> {
  const shown = displayPath(file, relativeTo);
  if ((await lstat(file).catch(() => undefined)) === undefined) {
    digest?.absent("settings", shown);
    return { documents: [], issues: [] };
  }
  let info;
  try {
    info = await stat(file);
  } catch (error) {
    digest?.incomplete("settings");
    return { documents: [], issues: [unreadIssue({ display: shown, reason: systemReason(error) })] };
  }
  if (!info.isFile()) {
    digest?.incomplete("settings");
    const what = info.isDirectory() ? "a directory" : "not a regular file";
    return {
      documents: [],
      issues: [unreadIssue({ display: shown, reason: `${what}; the site settings must be a YAML file` })],
    };
  }
  try {
    const text = await readFile(file, "utf8");
    digest?.content("settings", shown, file, text);
    return parseDocuments(shown, text);
  } catch (error) {
    digest?.incomplete("settings");
    return { documents: [], issues: [unreadIssue({ display: shown, reason: systemReason(error) })] };
  }
}

/** The lock file's text, and its path as findings show it. */
interface LockFile {
  readonly shown: string;
  readonly text: string;
}

/** The previous lock's file; undefined when there is none, or it can't be read (a finding then). */
async function readLock(
  out: string,
  relativeTo: string,
  issues: Issue[],
  digest: SiteDigest | undefined,
): Promise<LockFile | undefined> {
  const file = path.join(out, LOCK_FILE);
  const shown = displayPath(file, relativeTo);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    // No lock is a first run; a lock that is there but unreadable must not silently re-plan everything.
    if (errorCode(error) !== "ENOENT" && errorCode(error) !== "ENOTDIR") {
      issues.push(unreadIssue({ display: shown, reason: systemReason(error) }));
      digest?.incomplete("lock");
    } else digest?.absent("lock", shown);
    return undefined;
  }
  digest?.content("lock", shown, file, text);
  return { shown, text };
}
