/**
 * Rendering only what changed (decision 0057): a unit of `rendered/` (a cluster directory with its
 * Flux Kustomization, or the site's Argo CD wiring) that reads back whole (render-readback.ts) is
 * not rendered again: nothing is built, serialised or written for it; when no unit changed, not
 * even cdk8s is loaded.
 */
import { toYaml } from "../synth/codec/yaml-output.ts";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";
import { lockDocument } from "../synth/plan/lock.ts";
import type { RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import type { RenderOptions, RenderedShare, RenderedSite } from "./render.ts";
import { planUnits, readUnitsBack, type PlanUnits } from "./render-readback.ts";
import {
  directoryPlace,
  planDirectories,
  shareKey,
  thisRenderer,
  type PlanShare,
  type PlanShares,
  type RenderedCluster,
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
  /**
   * The plan's units, when known already (a kept plan's, decision 0070); not with `full`.
   * @default computed from the plan
   */
  readonly units?: PlanUnits;
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
  /** The units of the plan as it read them back (not with `full`): what the synth cache keeps. */
  readonly units?: PlanUnits;
}

/**
 * The tree of `plan`, as {@link renderSite} would render it, given the previous tree in `out`: a
 * unit whose header matches its inputs and its files is kept as it is, the others are rendered.
 * The lock is always written. The result is byte for byte the tree a full render gives
 * (`test/incremental.test.ts` holds it so over random site changes).
 */
export async function renderChanged(
  plan: PlanShares,
  settings: SiteSettings,
  out: string,
  options: ChangedRenderOptions = {},
): Promise<ChangedRender> {
  const units = options.full
    ? undefined
    : (options.units ?? planUnits(allShares(plan), settings, thisRenderer()));
  const back = units
    ? await readUnitsBack(out, units, options.signal)
    : { kept: new Set<string>(), clusters: new Map<number, RenderedCluster>(), wiring: false };
  const changed = new Map<number, PlanShare>();
  plan.keys.forEach((_, index) => {
    if (!back.clusters.has(index)) changed.set(index, plan.share(index));
  });
  const files = new Map([[LOCK_FILE, plan.lock]]);
  let rendered: RenderedShare[] = [];
  const wiring = settings.gitops.targets.includes("argocd");
  if (changed.size > 0 || (wiring && !back.wiring)) {
    // Loaded only here: cdk8s and the charts are most of a synth's start-up (decision 0057).
    const render = await import("./render.ts");
    if (!back.wiring)
      for (const [file, content] of render.renderSiteWiring(settings)) files.set(file, content);
    rendered = await render.renderDirectories([...changed.values()], settings, options);
  }
  for (const share of rendered) for (const [file, content] of share.wiring) files.set(file, content);
  for (const share of rendered) for (const [file, content] of share.files) files.set(file, content);

  const renderedClusters = new Map(
    rendered.flatMap((share) => share.clusters).map((cluster) => [cluster.directory, cluster]),
  );
  const clusters: RenderedCluster[] = [];
  plan.keys.forEach((_, index) => {
    const share = changed.get(index);
    const directory = share && directoryPlace(share, settings)?.directory;
    const cluster = back.clusters.get(index) ?? (directory && renderedClusters.get(directory));
    if (cluster) clusters.push(cluster);
  });
  return {
    files,
    clusters,
    kept: back.kept,
    directories: { rendered: changed.size, kept: back.clusters.size },
    ...(units && { units }),
  };
}

/** The directories of `plan` and its lock's text, as {@link renderChanged} takes them. */
export function planShares(plan: RenderPlan): PlanShares {
  const directories = planDirectories(plan);
  return {
    lock: lockText(plan),
    keys: directories.map(shareKey),
    share: (index) => {
      const share = directories[index];
      if (share === undefined) throw new Error(`planShares: the plan has no directory ${index}`);
      return share;
    },
  };
}

/** Every share of `plan`, in plan order. */
export function allShares(plan: PlanShares): PlanShare[] {
  return plan.keys.map((_, index) => plan.share(index));
}

/** The lock file's text (docs/contract.md §3.4). */
export function lockText(plan: Pick<RenderPlan, "lock">): string {
  return `# Written by metalsynth: host allocations, read back so clusters are never reshuffled.\n${toYaml(lockDocument(plan.lock))}`;
}
