import { readdir } from "node:fs/promises";
import path from "node:path";
import { clusterKey, type ClusterKey } from "../synth/cluster-key.ts";
import { evaluateSite, evaluateSiteBy } from "../synth/evaluate.ts";
import { compareText, hasErrors, type Issue } from "../synth/issue.ts";
import type { SiteModel } from "../synth/model/site.ts";
import {
  changedClusters,
  clusterTexts,
  movedIssues,
  planningDigest,
  rebindShare,
  specLayout,
} from "../synth/plan/plan-reuse.ts";
import type { SitePlan } from "../synth/plan/model.ts";
import { releaseHosts, type HostRelease } from "../synth/plan/release.ts";
import { renderPlan } from "../synth/plan/render-plan.ts";
import { UsageError } from "./errors.ts";
import type { PlanShare, PlanShares, RenderedCluster } from "./render-units.ts";
import { planShares, renderChanged, type ChangedRender } from "./render-incremental.ts";
import type { InventoryCacheUse } from "./inventory-cache.ts";
import { cachedPlan, keptShares, settingsDigest, sharesOf, storePlan } from "./plan-entry.ts";
import { reboundUnits, type PlanUnits } from "./render-readback.ts";
import { SiteDigest, type SiteRead } from "./site-digest.ts";
import {
  readSite,
  readSiteBesideInventory,
  type ReadSiteOptions,
  type SiteInput,
  type SiteLocation,
} from "./site-reader.ts";
import { storeSynth, type SynthOutcome } from "./synth-cache.ts";

/** A site read and judged by every rule: what `validate` reports and `explain` explains. */
export interface SiteEvaluation {
  readonly input: SiteInput;
  /** The CRs as the rules read them. */
  readonly model: SiteModel;
  /** The planner's findings and the address clashes (`Evaluation.planIssues`). */
  readonly planIssues: readonly Issue[];
  /** The planner's decisions; `explain` reads them even when `issues` has errors. */
  readonly plan: SitePlan;
  /** Reading and evaluation findings, errors and warnings. */
  readonly issues: readonly Issue[];
}

/** A site read, judged by every rule and, when no rule found an error, rendered in memory. */
export interface SiteRender {
  readonly input: SiteInput;
  /** The planner's decisions, also when `issues` has errors (`diff --map` draws them). */
  readonly plan: SitePlan;
  /** Reading and evaluation findings, errors and warnings. */
  readonly issues: readonly Issue[];
  /** The tree synth would write; undefined when `issues` has errors (nothing may be written then). */
  readonly rendered?: { readonly files: Map<string, string>; readonly clusters: RenderedCluster[] };
}

/**
 * Reads a site and runs the whole rule catalogue and the planner on it, feeding the synth cache's
 * digest and using the inventory cache as `options` say (decisions 0066 and 0068).
 */
export async function evaluateFromSite(
  location: SiteLocation,
  options: ReadSiteOptions = {},
): Promise<SiteEvaluation> {
  const input = await readSite(location, options);
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const { model, plan, planIssues } = evaluation;
  return { input, model, plan, planIssues, issues: [...input.issues, ...evaluation.issues] };
}

/**
 * The clusters that rendering only the `--specs` subset in `render` would remove from the output
 * directory `out` although the site's own `specs/` still defines them (they would vanish from `rendered/`,
 * their lock entries with them, and a SIPCluster's hosts would be released). Empty when `--specs` was
 * not given, or when every cluster the output holds is either rendered or gone from the site too.
 */
export async function clustersOutsideSubset(
  location: SiteLocation,
  render: Pick<SynthOutcome, "out" | "rendered">,
): Promise<string[]> {
  if (location.specs === undefined || !render.rendered) return [];
  const live = new Set(render.rendered.clusters.filter(isLive).map((cluster) => cluster.cluster));
  const before = await clusterDirectories(render.out);
  const missing = before.filter((key) => !live.has(key));
  if (missing.length === 0) return [];
  const whole: SiteLocation = { ...location, specs: undefined };
  let site: SiteEvaluation;
  try {
    site = await evaluateFromSite(whole);
  } catch (error) {
    if (error instanceof UsageError) return []; // the site has no specs/ of its own
    throw error;
  }
  const defined = new Set(site.plan.clusters.map((cluster) => cluster.key));
  return missing.filter((key) => defined.has(key));
}

function isLive(cluster: RenderedCluster): boolean {
  return !cluster.roles.some((role) => role.role === "released");
}

/** The cluster of every `clusters/<namespace>/<name>` directory below `out`, sorted. */
async function clusterDirectories(out: string): Promise<ClusterKey[]> {
  const clusters = path.join(out, "clusters");
  const namespaces = await readdir(clusters, { withFileTypes: true }).catch(() => []);
  const keys: ClusterKey[] = [];
  for (const namespace of namespaces.filter((entry) => entry.isDirectory())) {
    const names = await readdir(path.join(clusters, namespace.name), { withFileTypes: true });
    for (const name of names.filter((entry) => entry.isDirectory()))
      keys.push(clusterKey(namespace.name, name.name));
  }
  return keys.sort(compareText);
}

/** The synth pipeline up to, not including, the write: what `diff` compares and `commit` writes. */
export async function renderFromSite(location: SiteLocation): Promise<SiteRender> {
  const { input, plan, issues } = await evaluateFromSite(location);
  const ready = renderPlan(plan, issues);
  if (!ready) return { input, plan, issues };
  const { renderSite } = await import("./render.ts");
  return { input, plan, issues, rendered: await renderSite(ready, input.settings) };
}

/** What {@link synthFromSite} found: the site, and what of its tree changed. */
export interface SiteSynth extends SiteRender {
  readonly rendered?: ChangedRender;
}

/**
 * `metalsynth synth` up to the write: the site rendered where its inputs or its files in the output
 * directory changed, or everywhere with `full` (decision 0057). The tree it gives is the one
 * {@link renderFromSite} gives; `rendered.kept` names the files that stand as they are. With
 * `cache`, what it found is kept in the synth cache under the site's digest (decision 0066), and with
 * `inventory` too, the inventory cache there is used as it says (decision 0068).
 */
export async function synthFromSite(
  location: SiteLocation,
  options: {
    readonly full?: boolean;
    readonly cache?: string;
    readonly inventory?: Omit<InventoryCacheUse, "directory">;
  } = {},
): Promise<SiteSynth> {
  const { cache } = options;
  const digest = cache === undefined ? undefined : new SiteDigest(location);
  const inventoryCache = cache !== undefined &&
    options.inventory && { directory: cache, ...options.inventory };
  const evaluation = await evaluateFromSite(location, {
    ...(digest && { digest }),
    ...(inventoryCache && { inventoryCache }),
  });
  const { input, plan, issues } = evaluation;
  const ready = renderPlan(plan, issues);
  const shares = ready && planShares(ready);
  const rendered = shares && (await renderChanged(shares, input.settings, input.out, options));
  const found: SiteSynth = { input, plan, issues, ...(rendered && { rendered }) };
  if (digest && cache !== undefined) {
    const planKey = digest.planDigest();
    if (inventoryCache && inventoryCache.keep && planKey !== undefined && shares && rendered?.units)
      keepPlan(cache, planKey, evaluation, shares, rendered.units);
    storeSynth(digest, synthOutcome(found), cache);
  }
  return found;
}

/**
 * Keeps what `evaluation` planned under `key` in the plan cache in `directory` (decision 0070),
 * when every spec document's findings can be moved with it.
 */
function keepPlan(
  directory: string,
  key: string,
  evaluation: SiteEvaluation,
  plan: PlanShares,
  units: PlanUnits,
): void {
  const { input, model, planIssues } = evaluation;
  const { inventoryIssues, lockIssues } = input;
  const layout = specLayout(input.documents);
  const clusters = layout && clusterTexts(model, layout);
  if (layout === undefined || clusters === undefined) return;
  if (inventoryIssues === undefined || lockIssues === undefined) return;
  storePlan(directory, {
    key,
    settings: settingsDigest(input.settings),
    planning: planningDigest(model),
    layout,
    clusters,
    inventoryIssues,
    lockIssues,
    planIssues,
    shares: keptShares(plan),
    units,
  });
}

/**
 * `metalsynth synth` up to the write from a plan kept for the site's inventory, settings and lock
 * (decision 0070), when its specs are planned alike: the specs and settings read and the rules of
 * the CRs run, the lock's bytes digested but not parsed, the inventory neither read nor planned,
 * and only the directories of the clusters whose CRs changed read from the plan and rendered again
 * (decision 0071). Undefined when the cache has no such plan, or the specs are not planned alike:
 * the caller evaluates the site in full. What it found is kept in the synth cache, as
 * {@link synthFromSite} keeps it.
 */
export async function synthFromKeptPlan(
  location: SiteLocation,
  read: SiteRead,
  cache: string,
): Promise<SynthOutcome | undefined> {
  const kept = cachedPlan(cache, read.plan);
  if (kept === undefined) return undefined;
  const digest = new SiteDigest(location);
  const input = await readSiteBesideInventory(location, digest, {
    inventory: { seen: read.inventory, issues: kept.inventoryIssues },
    lockIssues: kept.lockIssues,
  });
  const layout = specLayout(input.documents);
  const moved = layout && movedIssues(kept.planIssues, kept.layout, layout);
  const same = digest.planDigest() === kept.key && settingsDigest(input.settings) === kept.settings;
  if (!same || moved === undefined) return undefined;
  const evaluation = evaluateSiteBy(input.documents, (model) => {
    const texts = layout && planningDigest(model) === kept.planning ? clusterTexts(model, layout) : undefined;
    const changed = texts && changedClusters(kept.clusters, texts);
    const plan = changed && reboundShares(sharesOf(kept.shares), model, changed);
    return { plan: plan && changed && { plan, changed }, issues: moved };
  });
  if (evaluation.plan === undefined) return undefined;
  const issues = [...input.issues, ...evaluation.issues];
  const { plan, changed } = evaluation.plan;
  let rendered: ChangedRender | undefined;
  if (!hasErrors(issues)) {
    const units = reboundUnits(kept.units, plan, input.settings, changed);
    if (units === undefined) return undefined;
    rendered = await renderChanged(plan, input.settings, input.out, { units });
  }
  const outcome = synthOutcome({ input, issues, ...(rendered && { rendered }) });
  storeSynth(digest, outcome, cache);
  return outcome;
}

/**
 * `plan` with the share of each cluster in `changed` bound to `model` ({@link rebindShare}), read
 * now; the others read when asked. Undefined when one of those shares can't be.
 */
function reboundShares(
  plan: PlanShares,
  model: SiteModel,
  changed: ReadonlySet<ClusterKey>,
): PlanShares | undefined {
  const rebind = rebindShare(model, changed);
  const rebound = new Map<number, PlanShare>();
  for (const [index, key] of plan.keys.entries()) {
    if (!changed.has(key)) continue;
    const share = rebind(plan.share(index));
    if (share === undefined) return undefined;
    rebound.set(index, share);
  }
  return { ...plan, share: (index) => rebound.get(index) ?? plan.share(index) };
}

/** What synth writes and prints of a {@link SiteSynth}. */
export function synthOutcome({
  input,
  issues,
  rendered,
}: Pick<SiteSynth, "issues" | "rendered"> & {
  readonly input: Pick<SiteInput, "out" | "pathPrefixNote">;
}): SynthOutcome {
  return {
    out: input.out,
    issues,
    ...(input.pathPrefixNote !== undefined && { pathPrefixNote: input.pathPrefixNote }),
    ...(rendered && { rendered }),
  };
}

/** What {@link releaseFromSite} found: the release, and the site rendered with it when it can be. */
export interface SiteRelease extends SiteSynth {
  readonly release: HostRelease;
}

/**
 * `metalsynth release`: the site rendered with `hosts` released from its lock (decision 0052), so
 * their nodes are placed again. Nothing is rendered when a host can't be released or the site, so
 * released, has errors; the caller writes the tree as synth does.
 */
export async function releaseFromSite(
  location: SiteLocation,
  hosts: readonly string[],
): Promise<SiteRelease> {
  const read = await readSite(location);
  const release = releaseHosts(read.lock, read.inventory, hosts);
  const input = { ...read, lock: release.lock };
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  const ready = release.refused.length === 0 ? renderPlan(evaluation.plan, issues) : undefined;
  const rendered = ready && (await renderChanged(planShares(ready), input.settings, input.out));
  return { input, plan: evaluation.plan, issues, release, ...(rendered && { rendered }) };
}
