/**
 * `metalsynth inventory pull` (decision 0023): takes the site's inventory from the cluster, writes it
 * into `<site>/inventory/` as the canonical snapshot (synth/inventory/canonical.ts), and says what
 * changed against the snapshot there — per host, and per cluster by planning the site in memory with
 * the inventory before and after.
 *
 * `inventory/` may hold other files. A file all of whose inventory objects the pull replaces (a raw
 * `kubectl get -o yaml` dump of the pulled namespaces, or an earlier pull) is removed, so no host is
 * defined twice; a file with nothing the pull replaces is left alone; a file with both, or one that
 * can't be read, makes the pull refuse before anything is written.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseDocuments } from "../synth/codec/read-documents.ts";
import { compact } from "../synth/compact.ts";
import { evaluateSite } from "../synth/evaluate.ts";
import { compareText, hasErrors, issueText, type Issue } from "../synth/issue.ts";
import { namespaceOf } from "../synth/inventory/bmh.ts";
import { canonicalFiles } from "../synth/inventory/canonical.ts";
import { inventoryChanges, type HostChange } from "../synth/inventory/changes.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import {
  InventoryBuilder,
  buildInventory,
  documentObjects,
  type InventoryObject,
} from "../synth/inventory/load.ts";
import { hasNetworkData } from "../synth/inventory/network-data.ts";
import { field, isListKind, isRecord, stringField } from "../synth/inventory/raw.ts";
import { renderPlan } from "../synth/plan/render-plan.ts";
import type { ClusterScope } from "./cluster-inventory.ts";
import { UsageError } from "./errors.ts";
import { displayPath, listInputFiles } from "./files.ts";
import { readInventory } from "./inventory-reader.ts";
import { diffTrees, type RenderedDiff } from "./report/diff.ts";
import { SETTINGS_FILE, readSite, type SiteInput } from "./site-reader.ts";

/** Options of {@link pullInventory}. */
export interface PullOptions {
  /** @default "." */
  readonly site?: string;
  /** Namespaces to pull; replaces `inventory.namespaces` of the site's settings. */
  readonly namespaces?: readonly string[];
  /** Label selector of the hosts to pull; replaces `inventory.selector` of the site's settings. */
  readonly selector?: string;
  /** Compare only: write nothing. */
  readonly check?: boolean;
  /** Paths in the report are relative to this directory. @default process.cwd() */
  readonly relativeTo?: string;
  /** Reads the live objects in `scope` (the CLI: the API server through client-node). */
  readonly read: (scope: ClusterScope) => Promise<InventoryObject[]>;
}

/** A file of `inventory/` the pull adds, rewrites or removes. */
export interface SnapshotFileChange {
  /** Display path (relative to {@link PullOptions.relativeTo}). */
  readonly path: string;
  readonly status: "added" | "changed" | "removed";
}

/** What a pull found, and did. */
export interface PullReport {
  /** The inventory directory, as a display path. */
  readonly inventory: string;
  /** Hosts in the pulled snapshot. */
  readonly hostCount: number;
  /** Hosts that appear, disappear or differ in a fact metalsynth reads: the drift `--check` fails on. */
  readonly hosts: HostChange[];
  /**
   * What synth would change per cluster with the new inventory instead of the committed one (both
   * planned and rendered in memory, with the same specs and lock); undefined when no host changed,
   * the site has no specs, or either inventory leaves the site with errors (see {@link refused}).
   */
  readonly clusters?: RenderedDiff;
  /** Errors synth would report with the new inventory that it does not report today. */
  readonly refused: Issue[];
  /** Files written or removed (or, with `check`, that would be). */
  readonly files: SnapshotFileChange[];
  /** Snapshot files already as they would be written. */
  readonly unchanged: number;
  /** Findings about the live objects (a malformed MAC, a Secret a host names that is missing). */
  readonly diagnostics: Issue[];
  /** Whether files were written (never with `check`). */
  readonly written: boolean;
}

/** Reads the cluster, compares with the committed snapshot, and (unless `check`) writes the new one. */
export async function pullInventory(options: PullOptions): Promise<PullReport> {
  const site = options.site ?? ".";
  const relativeTo = path.resolve(options.relativeTo ?? process.cwd());
  const inventoryDir = path.join(site, "inventory");
  const shown = (file: string) => displayPath(file, relativeTo);

  const hasSpecs = existsSync(path.join(site, "specs"));
  // The inventory is read below, file by file; readSite brings the settings, specs and lock.
  const input = await readSite({ site, relativeTo, inventory: [], ...(hasSpecs ? {} : { specs: [] }) });
  const settingsErrors = input.issues.filter(
    (found) => found.severity === "error" && found.source?.file === shown(path.join(site, SETTINGS_FILE)),
  );
  if (settingsErrors.length > 0) {
    throw new UsageError(
      `${shown(path.join(site, SETTINGS_FILE))} has errors, so the pull's settings are unknown:\n` +
        settingsErrors.map((found) => `  ${issueText(found)}`).join("\n"),
      { showHelp: false },
    );
  }
  const settings = input.settings.inventory;
  const namespaces = options.namespaces ?? settings.namespaces;
  const selector = options.selector ?? settings.selector;
  const scope: ClusterScope = compact({
    namespaces,
    selector,
    labelledNetworkData: settings.labelledNetworkData,
  });

  const committed = await readCommitted(inventoryDir, site, relativeTo);
  const live = buildInventory(await options.read(scope));
  const snapshot = canonicalFiles(
    live.inventory.hosts,
    settings.fileLabel === undefined ? {} : { fileLabel: settings.fileLabel },
    live.inventory.setAside,
  );
  const snapshotPaths = new Map(
    [...snapshot.keys()].map((file) => [shown(path.join(inventoryDir, file)), file]),
  );
  const snapshotSecrets = new Set(
    live.inventory.hosts.flatMap((host) =>
      host.networkData?.found ? [`${host.networkData.namespace}/${host.networkData.name}`] : [],
    ),
  );
  const inScope = (object: FileObject): boolean =>
    scope.namespaces === undefined ||
    scope.namespaces.includes(object.namespace) ||
    (object.kind === "Secret" && snapshotSecrets.has(`${object.namespace}/${object.name}`));
  const { kept, replaced } = sortFiles(committed.files, inScope, snapshotPaths);

  // The inventory as it will be: the files kept, plus the new snapshot.
  const builder = new InventoryBuilder();
  for (const [display, file] of snapshotPaths) {
    builder.beginFile(display);
    for (const object of documentObjects(parseDocuments(display, snapshot.get(file) ?? "").documents)) {
      builder.add(object);
    }
  }
  const next = await readInventory(
    kept.map((file) => file.absolute),
    { relativeTo, site, builder },
  );

  const hosts = inventoryChanges(committed.inventory.hosts, next.inventory.hosts);
  const affected =
    hosts.length > 0 && hasSpecs
      ? await affectedClusters(input, committed, next)
      : { refused: [] as Issue[] };

  const files: SnapshotFileChange[] = [];
  const toWrite = new Map<string, string>();
  let unchanged = 0;
  for (const [display, file] of snapshotPaths) {
    const text = snapshot.get(file) ?? "";
    const existing = committed.files.get(display);
    const before = existing && (await readFile(existing.absolute, "utf8").catch(() => undefined));
    if (before === text) {
      unchanged += 1;
      continue;
    }
    files.push({ path: display, status: existing === undefined ? "added" : "changed" });
    toWrite.set(file, text);
  }
  const removed = replaced.filter((file) => !snapshotPaths.has(file.display));
  for (const file of removed) files.push({ path: file.display, status: "removed" });
  files.sort((a, b) => compareText(a.path, b.path));

  if (!options.check && files.length > 0) await writeSnapshot(inventoryDir, toWrite, removed);
  return {
    inventory: shown(inventoryDir),
    hostCount: live.inventory.size,
    hosts,
    ...(affected.clusters && { clusters: affected.clusters }),
    refused: affected.refused,
    files,
    unchanged,
    diagnostics: live.issues,
    written: !options.check && files.length > 0,
  };
}

/** An inventory object of a committed file, as far as deciding what the pull replaces needs. */
interface FileObject {
  readonly kind: "BareMetalHost" | "HardwareData" | "Secret";
  readonly namespace: string;
  readonly name: string;
}

/** What one file of `inventory/` holds. */
interface FileContents {
  readonly objects: FileObject[];
  /** Objects metalsynth does not read from an inventory (a ConfigMap, a BMC credentials Secret). */
  readonly others: string[];
  /** Why the file could not be read, or not all of it. */
  readonly problems: Issue[];
}

/** A file of `inventory/`, where it is and what it holds. */
interface CommittedFile extends FileContents {
  readonly display: string;
  readonly absolute: string;
}

/**
 * A builder that also notes, per file, which objects each file holds, so the pull knows which files
 * its snapshot replaces. It sees exactly what the loader sees, large streamed files included.
 */
class FileObjects extends InventoryBuilder {
  readonly files = new Map<string, FileContents>();

  override add(object: InventoryObject): void {
    const { value } = object;
    const kind = isRecord(value) ? value["kind"] : undefined;
    // A list's items come back through add(), one by one.
    if (!isListKind(kind)) this.#note(object.source.file, value, kind);
    super.add(object);
  }

  override report(found: Issue): void {
    if (found.source) this.#file(found.source.file).problems.push(found);
    super.report(found);
  }

  #note(file: string, value: unknown, kind: unknown): void {
    const entry = this.#file(file);
    const metal3 = String(field(value, "apiVersion") ?? "metal3.io/").startsWith("metal3.io/");
    const name = stringField(field(value, "metadata"), "name") ?? "";
    const namespace = namespaceOf(value) ?? "";
    if ((kind === "BareMetalHost" || kind === "HardwareData") && metal3) {
      entry.objects.push({ kind, namespace, name });
    } else if (kind === "Secret" && hasNetworkData(value)) {
      entry.objects.push({ kind, namespace, name });
    } else {
      entry.others.push(`${typeof kind === "string" ? kind : "an object without kind"} ${namespace}/${name}`);
    }
  }

  #file(file: string): FileContents {
    let entry = this.files.get(file);
    if (!entry) this.files.set(file, (entry = { objects: [], others: [], problems: [] }));
    return entry;
  }
}

/** The committed inventory and what each of its files holds; empty when `inventory/` is missing. */
async function readCommitted(
  inventoryDir: string,
  site: string,
  relativeTo: string,
): Promise<{ inventory: Inventory; issues: Issue[]; files: Map<string, CommittedFile> }> {
  const files = new Map<string, CommittedFile>();
  if (!existsSync(inventoryDir)) return { ...buildInventory([]), files };
  const builder = new FileObjects();
  const read = await readInventory([inventoryDir], { relativeTo, site, builder });
  const listing = await listInputFiles([inventoryDir], { site, relativeTo });
  const absolute = new Map(listing.files.map((file) => [file.display, file.absolute]));
  // Unread paths (a link leaving the site) are known by their finding only.
  for (const display of new Set([...absolute.keys(), ...builder.files.keys()])) {
    const held: FileContents = builder.files.get(display) ?? { objects: [], others: [], problems: [] };
    files.set(display, {
      display,
      absolute: absolute.get(display) ?? path.resolve(relativeTo, display),
      ...held,
    });
  }
  return { ...read, files };
}

/**
 * Which committed files stay and which the snapshot replaces (see the module comment).
 *
 * @throws UsageError naming every file that holds both replaced and other objects, can't be read, or
 *   sits where the snapshot writes a file of its own.
 */
function sortFiles(
  files: ReadonlyMap<string, CommittedFile>,
  inScope: (object: FileObject) => boolean,
  snapshotPaths: ReadonlyMap<string, string>,
): { kept: CommittedFile[]; replaced: CommittedFile[] } {
  const kept: CommittedFile[] = [];
  const replaced: CommittedFile[] = [];
  const refusals: string[] = [];
  for (const file of [...files.values()].sort((a, b) => compareText(a.display, b.display))) {
    const pulled = file.objects.filter(inScope);
    const other = file.objects.filter((object) => !inScope(object));
    const [problem] = file.problems;
    if (problem !== undefined) {
      refusals.push(`${file.display}: can't tell what it holds (${issueText(problem)}); fix or remove it`);
    } else if (pulled.length === 0 && snapshotPaths.has(file.display)) {
      refusals.push(
        `${file.display}: the snapshot is written to this path, but the file holds ${describeObjects(other, file.others)}, which the pull does not replace; rename it`,
      );
    } else if (pulled.length === 0) {
      kept.push(file);
    } else if (other.length > 0 || file.others.length > 0) {
      refusals.push(
        `${file.display}: holds ${describeObjects(pulled, [])}, which the pull replaces, and ${describeObjects(other, file.others)}, which it does not; split the file or remove it`,
      );
    } else replaced.push(file);
  }
  if (refusals.length > 0) {
    throw new UsageError(
      `inventory pull refused, nothing written: the pull replaces every BareMetalHost, HardwareData and networkData Secret it reads, and these files would keep a second copy or lose other objects:\n${refusals.map((line) => `  ${line}`).join("\n")}`,
      { showHelp: false },
    );
  }
  return { kept, replaced };
}

/** `2 objects (BareMetalHost metal3/a, Secret metal3/b)`, at most three named. */
function describeObjects(objects: readonly FileObject[], others: readonly string[]): string {
  const names = [...objects.map((object) => `${object.kind} ${object.namespace}/${object.name}`), ...others];
  const shown = names.slice(0, 3).join(", ");
  const more = names.length > 3 ? `, … ${names.length - 3} more` : "";
  return `${names.length} object(s) (${shown}${more})`;
}

/**
 * Plans and renders the site in memory with the committed and the new inventory (same specs, same
 * lock) and compares the two trees as `metalsynth diff` does. When either can't be rendered, the
 * errors that only the new inventory brings are what the reviewer needs instead.
 */
async function affectedClusters(
  input: SiteInput,
  before: { readonly inventory: Inventory; readonly issues: readonly Issue[] },
  after: { readonly inventory: Inventory; readonly issues: readonly Issue[] },
): Promise<{ clusters?: RenderedDiff; refused: Issue[] }> {
  const evaluate = (inventory: { readonly inventory: Inventory; readonly issues: readonly Issue[] }) => {
    const evaluation = evaluateSite(input.documents, inventory.inventory, input.lock);
    return { plan: evaluation.plan, issues: [...input.issues, ...inventory.issues, ...evaluation.issues] };
  };
  const old = evaluate(before);
  const next = evaluate(after);
  const known = new Set(old.issues.filter((found) => found.severity === "error").map(withoutSource));
  const refused = next.issues.filter(
    (found) => found.severity === "error" && !known.has(withoutSource(found)),
  );
  const oldReady = renderPlan(old.plan, old.issues);
  const nextReady = renderPlan(next.plan, next.issues);
  if (!oldReady || !nextReady || hasErrors(refused)) return { refused };
  // cdk8s takes a quarter of a second to load: only a pull that changed a host renders (decision 0018).
  const { renderSite } = await import("./render.ts");
  const [oldTree, nextTree] = [
    await renderSite(oldReady, input.settings),
    await renderSite(nextReady, input.settings),
  ];
  return { clusters: diffTrees(oldTree.files, nextTree.files), refused };
}

/** An issue's identity across two inventories: where the host was defined may differ, nothing else. */
function withoutSource(found: Issue): string {
  return JSON.stringify([found.rule, found.path, found.cluster ?? "", found.message]);
}

/**
 * Writes the changed snapshot files, each through a temporary file renamed into place, then removes
 * the files the snapshot replaces (and directories that only held them). In that order, so a pull cut
 * short leaves hosts defined twice, which `validate` reports, rather than hosts missing.
 */
async function writeSnapshot(
  inventoryDir: string,
  files: ReadonlyMap<string, string>,
  removed: readonly CommittedFile[],
): Promise<void> {
  for (const [file, text] of files) {
    const target = path.join(inventoryDir, ...file.split("/"));
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.tmp-${process.pid}`;
    try {
      await writeFile(temporary, text);
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
  const root = path.resolve(inventoryDir);
  const directories = new Set<string>();
  for (const file of removed) {
    await rm(file.absolute, { force: true });
    for (let dir = path.dirname(path.resolve(file.absolute)); dir.startsWith(`${root}${path.sep}`);) {
      directories.add(dir);
      dir = path.dirname(dir);
    }
  }
  // Deepest first, so a parent is empty by the time it is tried; a directory with anything left stays.
  for (const dir of [...directories].sort((a, b) => b.length - a.length)) {
    if ((await readdir(dir).catch(() => ["?"])).length === 0) await rmdir(dir).catch(() => undefined);
  }
}
