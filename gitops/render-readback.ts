/**
 * Reading a previous `rendered/` tree back (decision 0057): a unit (a cluster directory with its
 * Flux Kustomization, or the site's Argo CD wiring) whose header records the digest of its inputs
 * and whose files on disk still have the digest it records stands as it is. Every such file is read
 * (a file edited by hand no longer matches, so its unit is rendered and the file restored and
 * reported). Apart from the render, and light: a synth that takes its evaluation from the cache
 * reads the tree back with the units the cache recorded, loading neither the rules nor cdk8s
 * (decision 0066).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ClusterKey } from "../synth/cluster-key.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import {
  APPLICATION_SET_FILE,
  directoryInputsDigest,
  directoryPlace,
  FilesDigest,
  KUSTOMIZATION_FILE,
  readUnitHeader,
  thisRenderer,
  wiringInputsDigest,
  type DirectoryPlace,
  type PlanShare,
  type PlanShares,
  type Renderer,
  type RenderedCluster,
  type UnitHeader,
} from "./render-units.ts";

/**
 * The units of a render plan as the tree records them: each cluster directory's place and inputs
 * digest, in plan order, and the ApplicationSet's inputs digest when the site asks for Argo CD.
 * Plain data: the synth cache keeps it beside the findings.
 */
export interface PlanUnits {
  /** Metalsynth's version, which each header names. */
  readonly version: string;
  /** In plan order; `place` is undefined for a share the render plan has none for (never kept). */
  readonly directories: readonly { readonly place?: DirectoryPlace; readonly inputs: string }[];
  /** The ApplicationSet's inputs digest; undefined when the site does not ask for Argo CD. */
  readonly wiring?: string;
}

/** The units of the cluster directories `directories` (planDirectories) and of the site's wiring. */
export function planUnits(
  directories: readonly PlanShare[],
  settings: SiteSettings,
  renderer: Renderer,
): PlanUnits {
  return {
    version: renderer.version,
    directories: directories.map((share) => {
      const place = directoryPlace(share, settings);
      return { ...(place && { place }), inputs: directoryInputsDigest(share, settings, renderer) };
    }),
    ...(settings.gitops.targets.includes("argocd") && { wiring: wiringInputsDigest(settings, renderer) }),
  };
}

/**
 * The units of `plan` where `kept` has those of a plan that differs only in the directories of the
 * clusters `changed` (decision 0070): theirs computed again, the rest kept, their shares not even
 * read (decision 0071). Undefined when `kept` is of another number of directories.
 */
export function reboundUnits(
  kept: PlanUnits,
  plan: PlanShares,
  settings: SiteSettings,
  changed: ReadonlySet<ClusterKey>,
): PlanUnits | undefined {
  if (kept.directories.length !== plan.keys.length) return undefined;
  const renderer = thisRenderer();
  return {
    ...kept,
    directories: plan.keys.map((key, index) => {
      if (!changed.has(key)) return kept.directories[index]!;
      const share = plan.share(index);
      const place = directoryPlace(share, settings);
      return { ...(place && { place }), inputs: directoryInputsDigest(share, settings, renderer) };
    }),
  };
}

/** What of a previous tree stands as it is. */
export interface UnitsReadBack {
  /** The files of the units kept, paths in `rendered/`. */
  readonly kept: Set<string>;
  /** The cluster directories kept, by their index in {@link PlanUnits.directories}. */
  readonly clusters: Map<number, RenderedCluster>;
  /** Whether the ApplicationSet is kept (false, too, when the site has none). */
  readonly wiring: boolean;
}

/**
 * Reads the previous tree in `out` back against `units`: a directory is kept when its header names
 * this version and its inputs and its files have the digest the header records; the wiring likewise.
 * Aborting `signal` stops it between two directories.
 */
export async function readUnitsBack(
  out: string,
  units: PlanUnits,
  signal?: AbortSignal,
): Promise<UnitsReadBack> {
  const kept = new Set<string>();
  const clusters = new Map<number, RenderedCluster>();
  for (let index = 0; index < units.directories.length; index++) {
    const { place, inputs } = units.directories[index]!;
    if (place === undefined) continue;
    const found = readDirectoryBack(out, place, inputs, units.version);
    if (found === undefined) continue;
    for (const file of found.files) kept.add(file);
    clusters.set(index, {
      cluster: place.key,
      directory: place.directory,
      roles: place.roles,
      objects: found.objects,
    });
    // Reading is synchronous (a tenth of the CPU of promises per file); signals are heard between reads.
    if (index % 200 === 199) await turn(signal);
  }
  const wiring = units.wiring !== undefined && readWiringBack(out, units.wiring, units.version);
  if (wiring) kept.add(APPLICATION_SET_FILE);
  return { kept, clusters, wiring };
}

/**
 * A cluster directory of the previous tree, when its header records `inputs` and `version`, and its
 * files (the resources its kustomization lists, the kustomization below its header, its Flux
 * Kustomization) have the digest the header records: their paths, and how many objects the
 * resources hold. Undefined otherwise, and for a directory that can't be read.
 */
function readDirectoryBack(
  out: string,
  place: DirectoryPlace,
  inputs: string,
  version: string,
): { files: string[]; objects: number } | undefined {
  const kustomization = `${place.directory}/${KUSTOMIZATION_FILE}`;
  const unit = readUnit(out, kustomization, version, inputs);
  if (unit === undefined) return undefined;
  const resources = resourcesOf(unit.body);
  if (resources === undefined) return undefined;
  const digest = new FilesDigest().add(kustomization, unit.body);
  const files = [kustomization];
  let objects = 0;
  for (const file of [...resources.map((name) => `${place.directory}/${name}`), place.flux]) {
    if (file === undefined) continue;
    const content = readBack(out, file);
    if (content === undefined) return undefined;
    digest.add(file, content);
    files.push(file);
    if (file !== place.flux) objects += documentsIn(content);
  }
  return digest.digest() === unit.header.files ? { files, objects } : undefined;
}

/** Whether the site's ApplicationSet of the previous tree has this render's header and bytes. */
function readWiringBack(out: string, inputs: string, version: string): boolean {
  const unit = readUnit(out, APPLICATION_SET_FILE, version, inputs);
  if (unit === undefined) return false;
  return new FilesDigest().add(APPLICATION_SET_FILE, unit.body).digest() === unit.header.files;
}

/** A unit's first file, when its header names `version` and `inputs`. */
function readUnit(
  out: string,
  file: string,
  version: string,
  inputs: string,
): { header: UnitHeader; body: Buffer } | undefined {
  const content = readBack(out, file);
  const unit = content === undefined ? undefined : readUnitHeader(content);
  if (unit === undefined || unit.header.version !== version || unit.header.inputs !== inputs)
    return undefined;
  return unit;
}

/** The bytes of a file of the previous tree; undefined when it can't be read (missing, a directory). */
function readBack(out: string, file: string): Buffer | undefined {
  try {
    return readFileSync(path.join(out, ...file.split("/")));
  } catch {
    return undefined;
  }
}

/**
 * The file names of a kustomization metalsynth wrote (`resources:` and one `  - name` a line); an
 * unexpected line or name makes it unreadable, and its directory is rendered again.
 */
function resourcesOf(body: Buffer): string[] | undefined {
  const lines = body.toString("utf8").split("\n");
  const start = lines.indexOf("resources:");
  if (start < 0) return undefined;
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line === "") continue;
    const match = /^ {2}- ([a-z0-9][a-z0-9.-]*\.yaml)$/.exec(line);
    if (!match?.[1]) return undefined;
    names.push(match[1]);
  }
  return names;
}

/**
 * The documents of a YAML stream metalsynth wrote: its writer separates them with a `---` line,
 * and nests every scalar below a key, so no other line is `---`.
 */
function documentsIn(content: Buffer): number {
  if (content.length === 0) return 0;
  let count = 1;
  for (let at = content.indexOf("\n---\n"); at >= 0; at = content.indexOf("\n---\n", at + 4)) count++;
  return count;
}

/** One tick of the event loop, so a signal is heard; then stops if it was. */
async function turn(signal: AbortSignal | undefined): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  signal?.throwIfAborted();
}
