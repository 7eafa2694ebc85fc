/**
 * Rendering only what changed (decision 0057): a unit of `rendered/` (a cluster directory with its
 * Flux Kustomization, or the site's Argo CD wiring) whose inputs have the digest its header records,
 * and whose files on disk still have the digest it records, is not rendered again. Every such file
 * is still read (a file edited by hand no longer matches, so its unit is rendered and the file
 * restored and reported), but nothing is built, serialised or written for it; when no unit changed,
 * not even cdk8s is loaded.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { LOCK_FILE } from "../synth/plan/lock.ts";
import type { RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import type { RenderOptions, RenderedShare, RenderedSite } from "./render.ts";
import {
  APPLICATION_SET_FILE,
  directoryInputsDigest,
  directoryPlace,
  FilesDigest,
  KUSTOMIZATION_FILE,
  lockText,
  planDirectories,
  readUnitHeader,
  thisRenderer,
  wiringInputsDigest,
  type DirectoryPlace,
  type Renderer,
  type RenderedCluster,
  type UnitHeader,
} from "./render-units.ts";

/** Options of {@link renderChanged}. */
export interface ChangedRenderOptions extends RenderOptions {
  /**
   * Render every unit, whatever its header says (`synth --full`).
   * @default false
   */
  readonly full?: boolean;
  /**
   * Aborting it stops reading the previous tree back, between two directories.
   * @default undefined
   */
  readonly signal?: AbortSignal;
}

/** A render of the units that changed, and the files of those that did not. */
export interface ChangedRender extends RenderedSite {
  /**
   * Files of the previous tree that stand as they are: read back, and found to be, byte for byte,
   * what their unit's header records. `files` holds the rest of the tree.
   */
  readonly kept: ReadonlySet<string>;
  /** How many cluster directories were rendered again, and how many were kept. */
  readonly directories: { readonly rendered: number; readonly kept: number };
}

/**
 * The tree of `plan`, as {@link renderSite} would render it, given the previous tree in `out`: a
 * unit whose header matches its inputs and its files is kept as it is, the others are rendered.
 * The lock is always written. The result is byte for byte the tree a full render gives
 * (`test/incremental.test.ts` holds it so over random site changes).
 */
export async function renderChanged(
  plan: RenderPlan,
  settings: SiteSettings,
  out: string,
  options: ChangedRenderOptions = {},
): Promise<ChangedRender> {
  const renderer = thisRenderer();
  const directories = planDirectories(plan);
  const kept = new Set<string>();
  const keptClusters = new Map<number, RenderedCluster>();
  for (let index = 0; index < directories.length; index++) {
    if (options.full) break;
    const share = directories[index]!;
    const place = directoryPlace(share, settings);
    if (place === undefined) continue;
    const inputs = directoryInputsDigest(share, settings, renderer);
    const found = readDirectoryBack(out, place, inputs, renderer);
    if (found === undefined) continue;
    for (const file of found.files) kept.add(file);
    keptClusters.set(index, { ...placeCluster(place), objects: found.objects });
    // Reading is synchronous (a tenth of the CPU of promises per file); signals are heard between reads.
    if (index % 200 === 199) await turn(options.signal);
  }
  const wiringKept =
    !options.full &&
    settings.gitops.targets.includes("argocd") &&
    readWiringBack(out, settings, renderer) !== undefined;
  if (wiringKept) kept.add(APPLICATION_SET_FILE);

  const changed = directories.filter((_, index) => !keptClusters.has(index));
  const files = new Map([[LOCK_FILE, lockText(plan)]]);
  let rendered: RenderedShare[] = [];
  if (changed.length > 0 || (settings.gitops.targets.includes("argocd") && !wiringKept)) {
    // Loaded only here: cdk8s and the charts are most of a synth's start-up (decision 0057).
    const render = await import("./render.ts");
    if (!wiringKept)
      for (const [file, content] of render.renderSiteWiring(settings)) files.set(file, content);
    rendered = await render.renderDirectories(changed, settings, options);
  }
  for (const share of rendered) for (const [file, content] of share.wiring) files.set(file, content);
  for (const share of rendered) for (const [file, content] of share.files) files.set(file, content);

  const renderedClusters = new Map(
    rendered.flatMap((share) => share.clusters).map((cluster) => [cluster.directory, cluster]),
  );
  const clusters: RenderedCluster[] = [];
  directories.forEach((share, index) => {
    const directory = directoryPlace(share, settings)?.directory;
    const cluster = keptClusters.get(index) ?? (directory && renderedClusters.get(directory));
    if (cluster) clusters.push(cluster);
  });
  return {
    files,
    clusters,
    kept,
    directories: { rendered: changed.length, kept: keptClusters.size },
  };
}

function placeCluster(place: DirectoryPlace): Omit<RenderedCluster, "objects"> {
  return { cluster: place.key, directory: place.directory, roles: place.roles };
}

/**
 * A cluster directory of the previous tree, when its header records `inputs` and this metalsynth,
 * and its files (the resources its kustomization lists, the kustomization below its header, its
 * Flux Kustomization) have the digest the header records: their paths, and how many objects the
 * resources hold. Undefined otherwise, and for a directory that can't be read.
 */
function readDirectoryBack(
  out: string,
  place: DirectoryPlace,
  inputs: string,
  renderer: Renderer,
): { files: string[]; objects: number } | undefined {
  const kustomization = `${place.directory}/${KUSTOMIZATION_FILE}`;
  const unit = readUnit(out, kustomization, renderer, inputs);
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

/** The site's ApplicationSet of the previous tree, when its header and bytes are this render's. */
function readWiringBack(out: string, settings: SiteSettings, renderer: Renderer): Buffer | undefined {
  const unit = readUnit(out, APPLICATION_SET_FILE, renderer, wiringInputsDigest(settings, renderer));
  if (unit === undefined) return undefined;
  const files = new FilesDigest().add(APPLICATION_SET_FILE, unit.body).digest();
  return files === unit.header.files ? unit.body : undefined;
}

/** A unit's first file, when its header names this metalsynth and `inputs`. */
function readUnit(
  out: string,
  file: string,
  renderer: Renderer,
  inputs: string,
): { header: UnitHeader; body: Buffer } | undefined {
  const content = readBack(out, file);
  const unit = content === undefined ? undefined : readUnitHeader(content);
  if (unit === undefined || unit.header.version !== renderer.version || unit.header.inputs !== inputs)
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

/** One turn of the event loop, so a signal is heard; then stops if it was. */
async function turn(signal: AbortSignal | undefined): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  signal?.throwIfAborted();
}
