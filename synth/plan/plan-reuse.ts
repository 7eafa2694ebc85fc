/**
 * A plan kept from an earlier run used again (decision 0070): when the inventory, the settings and
 * the lock are those the plan was made from, and the specs differ only in what planning does not
 * read, the plan is the one planning them again would give. What differs is put right here: the
 * positions of its findings in spec files whose documents moved, and what each changed cluster
 * renders from its own CRs.
 */
import { createHash } from "node:crypto";
import { sipKey, type ClusterKey } from "../cluster-key.ts";
import type { SourceDocument } from "../documents.ts";
import type { Issue } from "../issue.ts";
import type { SiteModel } from "../model/site.ts";
import type { AnyResource } from "../model/resource.ts";
import { clusterSpecs } from "./allocation.ts";
import { groupBpa } from "./bpa-placement.ts";
import type { BpaRender, ClusterRender, RenderPlan } from "./render-plan.ts";

/** Where each document of a spec file starts, and the digest of its text, in file order. */
export type SpecLayout = ReadonlyMap<string, readonly DocumentPiece[]>;

/** One document's place in its file. */
export interface DocumentPiece {
  readonly line: number;
  /** SHA-256 of the document's text. */
  readonly digest: string;
}

/**
 * The layout of `documents` (the specs, in read order); undefined when a document's positions do
 * not move with its first line (it has no `piece`), or a file's documents are not all there (one
 * refused for its size or its syntax): the findings could not be told apart by document.
 */
export function specLayout(documents: readonly SourceDocument[]): SpecLayout | undefined {
  const layout = new Map<string, DocumentPiece[]>();
  for (const document of documents) {
    if (document.piece === undefined) return undefined;
    const pieces = layout.get(document.file) ?? [];
    if (pieces.length !== document.index) return undefined;
    pieces.push({ line: document.piece.line, digest: sha256(document.piece.text) });
    layout.set(document.file, pieces);
  }
  return layout;
}

/**
 * `issues` made against the specs laid out as `before`, positioned in the specs laid out as `now`:
 * a finding in a document whose text is unchanged moves with its first line. Undefined when a
 * finding is in a document that changed, moved to another index or is gone: where it points now is
 * known only by planning again. Findings outside the specs (inventory, lock) stay as they are.
 */
export function movedIssues(
  issues: readonly Issue[],
  before: SpecLayout,
  now: SpecLayout,
): Issue[] | undefined {
  const moved: Issue[] = [];
  for (const found of issues) {
    const source = found.source;
    const was = source && before.get(source.file);
    if (source === undefined || was === undefined) {
      moved.push(found);
      continue;
    }
    const index = pieceAt(was, source.line);
    const then = was[index];
    const after = now.get(source.file)?.[index];
    if (then === undefined || after === undefined || after.digest !== then.digest) return undefined;
    const line = source.line + after.line - then.line;
    moved.push(line === source.line ? found : { ...found, source: { ...source, line } });
  }
  return moved;
}

/** The index of the last piece starting at or before `line`. */
function pieceAt(pieces: readonly DocumentPiece[], line: number): number {
  let low = 0;
  let high = pieces.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((pieces[middle]?.line ?? Infinity) <= line) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * The digest of what planning reads of `model`: every CR it holds, in its order, with what each
 * was read as, less the fields only rendering reads (a Provisioning's KUD plugins and pod subnet, a
 * Software's packages: `render-plan.ts` takes them, no rule of planning does). Two models with one
 * digest are planned alike against one inventory and lock. Positions are not in it: the layout
 * moves them.
 */
export function planningDigest(model: SiteModel): string {
  const read = {
    provisionings: model.provisionings.map(({ resource, plugins: _p, podSubnet: _s, ...rest }) => ({
      ...rest,
      resource: planned(resource, PROVISIONING_RENDER_ONLY),
    })),
    softwares: model.softwares.map(({ resource, masterPackages: _m, workerPackages: _w, ...rest }) => ({
      ...rest,
      resource: planned(resource, SOFTWARE_RENDER_ONLY),
    })),
    glues: model.glues.map(({ resource, ...rest }) => ({ ...rest, resource: planned(resource) })),
    sips: model.sips.map(({ resource, ...rest }) => ({ ...rest, resource: planned(resource) })),
  };
  return sha256(JSON.stringify(read));
}

/** The spec fields of a Provisioning that only rendering reads. */
const PROVISIONING_RENDER_ONLY = ["KUDPlugins", "PodSubnet"];
/** The spec fields of a Software that only rendering reads. */
const SOFTWARE_RENDER_ONLY = ["masterSoftware", "workerSoftware"];

/** `resource` without its document (its positions) and without the spec fields `renderOnly`. */
function planned(resource: AnyResource, renderOnly: readonly string[] = []): unknown {
  // Every other field of the resource, as it is: one added later is read until it is known not to be.
  const { object, ...rest } = resource;
  const spec = (object as { spec?: unknown }).spec;
  const withoutDocument = { ...rest, document: undefined };
  if (renderOnly.length === 0 || typeof spec !== "object" || spec === null)
    return { ...withoutDocument, object };
  const kept = Object.fromEntries(Object.entries(spec).filter(([field]) => !renderOnly.includes(field)));
  return { ...withoutDocument, object: { ...object, spec: kept } };
}

/**
 * The digest of each cluster's own CRs' texts, by the key of the directory it renders into: what
 * tells the clusters whose CRs changed from those whose did not. Each text's digest is the one
 * `layout` (the specs' {@link specLayout}) holds for its document; undefined for a CR whose
 * document it lacks.
 */
export function clusterTexts(
  model: SiteModel,
  layout: SpecLayout,
): ReadonlyMap<ClusterKey, string> | undefined {
  const texts = new Map<ClusterKey, string[]>();
  const add = (key: ClusterKey, resource: AnyResource | undefined) => {
    if (resource === undefined) return true;
    const digest = layout.get(resource.document.file)?.[resource.document.index]?.digest;
    if (digest === undefined) return false;
    const list = texts.get(key) ?? [];
    list.push(`${resource.key}\u0000${digest}`);
    texts.set(key, list);
    return true;
  };
  for (const [key, group] of groupBpa(model)) {
    for (const resource of [group.provisioning, group.glue, group.software])
      if (!add(key, resource?.resource)) return undefined;
  }
  for (const sip of model.sips) if (!add(sipKey(sip.resource), sip.resource)) return undefined;
  return new Map([...texts].map(([key, list]) => [key, list.join("\n")]));
}

/**
 * The clusters of `now` whose CRs' texts differ from `before`'s (or that only one of them has):
 * those whose directories render from CRs other than the kept plan's.
 */
export function changedClusters(
  before: ReadonlyMap<ClusterKey, string>,
  now: ReadonlyMap<ClusterKey, string>,
): Set<ClusterKey> {
  const changed = new Set<ClusterKey>();
  for (const [key, texts] of now) if (before.get(key) !== texts) changed.add(key);
  for (const key of before.keys()) if (!now.has(key)) changed.add(key);
  return changed;
}

/** What {@link rebindShare} rebinds: a cluster directory's share of a render plan. */
export type RenderShare = Pick<RenderPlan, "clusters" | "specs">;

/**
 * A binder of a render plan's shares of a model planned alike (same {@link planningDigest}) to
 * `model`: a share of a cluster in `changed` takes what it renders from its own CRs from `model` (a
 * BPA cluster's KUD plugins, pod subnet and packages, and its CRs as its directory carries them);
 * any other share is as it was. The binder gives undefined for a share holding more than one plan
 * of a changed cluster (a BPA cluster and a SIPCluster of one name): planned again.
 */
export function rebindShare(
  model: SiteModel,
  changed: ReadonlySet<ClusterKey>,
): <S extends RenderShare>(share: S) => S | undefined {
  const groups = groupBpa(model);
  const sips = new Map(model.sips.map((sip) => [sipKey(sip.resource), sip]));
  return (share) => {
    const once = (keys: readonly { readonly key: ClusterKey }[]) =>
      keys.every(
        (entry) => !changed.has(entry.key) || keys.filter((other) => other.key === entry.key).length === 1,
      );
    if (!once(share.clusters) || !once(share.specs)) return undefined;
    const rendered = new Map(share.clusters.map((cluster) => [cluster.key, cluster]));
    const clusters = share.clusters.map((cluster): ClusterRender => {
      const group = groups.get(cluster.key);
      if (cluster.kind !== "bpa" || !changed.has(cluster.key) || group?.provisioning === undefined)
        return cluster;
      const { provisioning, software } = group;
      const rebound: BpaRender = {
        kind: "bpa",
        key: cluster.key,
        namespace: cluster.namespace,
        name: cluster.name,
        provisioning: { plugins: provisioning.plugins, podSubnet: provisioning.podSubnet },
        ...(software && {
          software: { masterPackages: software.masterPackages, workerPackages: software.workerPackages },
        }),
        masters: cluster.masters,
        workers: cluster.workers,
      };
      return rebound;
    });
    const specs = share.specs.map((cluster) => {
      const plan = rendered.get(cluster.key);
      if (!changed.has(cluster.key) || plan === undefined) return cluster;
      const sip = sips.get(cluster.key);
      if (plan.kind === "sip")
        return sip ? clusterSpecs({ kind: "sip", key: plan.key, name: plan.name, sip }) : cluster;
      const group = groups.get(cluster.key);
      return clusterSpecs({
        kind: "bpa",
        key: plan.key,
        name: plan.name,
        ...(group?.provisioning && { provisioning: group.provisioning }),
        ...(group?.glue && { glue: group.glue }),
        ...(group?.software && { software: group.software }),
      });
    });
    return { ...share, clusters, specs };
  };
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
