import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseDocuments, type SourceDocument } from "../synth/documents.ts";
import { issue, type Issue } from "../synth/issue.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import { EMPTY_LOCK, parseLock, type Lock } from "../synth/plan/lock.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { readSettings } from "../synth/site/settings.ts";
import { UsageError } from "./errors.ts";
import { displayPath, expandPaths } from "./files.ts";
import { readInventory } from "./inventory-reader.ts";

/** Where a site's parts are (SPEC §1.1, §7); every path defaults from `site`. */
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
  readonly settings: SiteSettings;
  /** The resolved output directory. */
  readonly out: string;
  /** Problems found while reading (syntax, missing paths, damaged lock). */
  readonly issues: readonly Issue[];
}

/** The site's settings file (SPEC §6.1), at the root of the site. */
export const SETTINGS_FILE = "metalsynth.yaml";

/** The file name of the lock inside `rendered/`. */
export const LOCK_FILE = "metalsynth.lock.yaml";

/** Reads specs, inventory, settings and the previous lock of a site. */
export async function readSite(location: SiteLocation): Promise<SiteInput> {
  const site = location.site ?? ".";
  const relativeTo = location.relativeTo ?? process.cwd();
  const out = location.out ?? path.join(site, "rendered");
  const issues: Issue[] = [];

  const specs = await expandPaths(location.specs ?? [path.join(site, "specs")]);
  if (specs.missing.length > 0) throw new UsageError(`specs path not found: ${specs.missing.join(", ")}`);
  const documents: SourceDocument[] = [];
  for (const file of specs.files) {
    const parsed = parseDocuments(displayPath(file, relativeTo), await readFile(file, "utf8"));
    documents.push(...parsed.documents);
    issues.push(...parsed.issues);
  }

  const inventoryPaths = location.inventory ?? [path.join(site, "inventory")];
  // readInventory walks the paths itself and throws a UsageError for a missing one.
  const inventory = await readInventory(inventoryPaths, { relativeTo });
  issues.push(...inventory.issues);

  const settingsFile = path.join(site, SETTINGS_FILE);
  const settingsText = await readFile(settingsFile, "utf8").catch(() => undefined);
  const settingsParsed =
    settingsText === undefined
      ? { documents: [], issues: [] }
      : parseDocuments(displayPath(settingsFile, relativeTo), settingsText);
  const settings = readSettings(settingsParsed.documents);
  issues.push(...settingsParsed.issues, ...settings.issues);

  const lock = await readLock(out, relativeTo, issues);
  return { documents, inventory: inventory.inventory, lock, settings: settings.settings, out, issues };
}

async function readLock(out: string, relativeTo: string, issues: Issue[]): Promise<Lock> {
  const file = path.join(out, LOCK_FILE);
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return EMPTY_LOCK;
  const shown = displayPath(file, relativeTo);
  const parsed = parseDocuments(shown, text);
  issues.push(...parsed.issues);
  const [document] = parsed.documents;
  if (!document) return EMPTY_LOCK;
  const lock = parseLock(document.value);
  if ("problem" in lock) {
    issues.push(
      issue(
        "schema",
        "",
        `damaged lock file (${lock.problem}); restore it from Git rather than deleting it, or every cluster may be re-planned`,
        { source: document.position([]) },
      ),
    );
    return EMPTY_LOCK;
  }
  return lock.lock;
}
