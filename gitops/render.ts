import { App } from "cdk8s";
import { parseAllDocuments } from "yaml";
import { objectsOf } from "../charts/index.ts";
import { addSiteWiringCharts, clusterDirectoryCharts } from "../charts/site.ts";
import { field, isRecord } from "../synth/inventory/raw.ts";
import { compareText } from "../synth/issue.ts";
import { LOCK_FILE, lockDocument } from "../synth/plan/lock.ts";
import type { ClusterRender, RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { toYaml, toYamlStream } from "../synth/yaml-output.ts";

/** What synth wrote for one cluster, for the CLI's summary. */
export interface RenderedCluster {
  readonly cluster: string;
  readonly directory: string;
  /** Per role (`master`, `worker`; `ControlPlane`, `Worker` for SIP), its hosts in plan order. */
  readonly roles: readonly { readonly role: string; readonly hosts: readonly string[] }[];
  readonly objects: number;
}

/** A site's `rendered/` tree in memory, and what it holds per cluster directory. */
export interface RenderedSite {
  /** Relative path → file content. */
  readonly files: Map<string, string>;
  readonly clusters: RenderedCluster[];
}

/**
 * The complete `rendered/` tree of a plan (SPEC §4) as relative path → file content: the lock; per
 * cluster its component files plus a `kustomization.yaml` listing them in sorted order; and the Argo
 * CD and Flux wiring the site's settings ask for.
 */
export function renderSite(plan: RenderPlan, settings: SiteSettings): RenderedSite {
  const rendered = renderShare(plan, settings);
  const lock = `# Written by metalsynth: host allocations, read back so clusters are never reshuffled.\n${toYaml(lockDocument(plan.lock))}`;
  const files = new Map([[LOCK_FILE, lock]]);
  const app = new App({ recordConstructMetadata: false });
  for (const [file, chart] of addSiteWiringCharts(app, settings))
    files.set(file, toYamlStream(objectsOf(chart)));
  for (const [file, content] of rendered.wiring) files.set(file, content);
  for (const [file, content] of rendered.files) files.set(file, content);
  return { files, clusters: [...rendered.clusters] };
}

/** Whole cluster directories of a plan: rendered on their own, they give what the whole plan gives. */
export type PlanShare = Pick<RenderPlan, "clusters" | "retired">;

/** What a {@link PlanShare} renders to, each list in plan order. */
export interface RenderedShare {
  /** The directories' Flux Kustomizations: path in `rendered/` and content. */
  readonly wiring: readonly (readonly [string, string])[];
  /** The directories' files: path in `rendered/` and content. */
  readonly files: readonly (readonly [string, string])[];
  readonly clusters: readonly RenderedCluster[];
}

/**
 * Renders the cluster directories of a share. Each directory gets an App of its own and is serialised
 * before the next is built, so only one directory's construct tree is alive at a time.
 */
export function renderShare(share: PlanShare, settings: SiteSettings): RenderedShare {
  const wiring: [string, string][] = [];
  const files: [string, string][] = [];
  const clusters: RenderedCluster[] = [];
  const directories = clusterDirectoryCharts(
    share,
    settings,
    () => new App({ recordConstructMetadata: false }),
  );
  for (const cluster of directories) {
    for (const [file, chart] of cluster.wiring) wiring.push([file, toYamlStream(objectsOf(chart))]);
    const resources = [...cluster.files.keys()].sort(compareText);
    let objects = 0;
    for (const name of resources) {
      const content = objectsOf(cluster.files.get(name)!);
      objects += content.length;
      files.push([`${cluster.directory}/${name}`, toYamlStream(content)]);
    }
    files.push([
      `${cluster.directory}/kustomization.yaml`,
      toYaml({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources }),
    ]);
    clusters.push({
      cluster: cluster.key,
      directory: cluster.directory,
      roles: cluster.retired
        ? [{ role: "released", hosts: cluster.retired.released.map((host) => host.id) }]
        : cluster.plans.flatMap(roleSummary),
      objects,
    });
  }
  return { wiring, files, clusters };
}

/**
 * Whether metalsynth wrote `file` of a `rendered/` tree (relative POSIX path, content), so a write
 * may delete it: the lock, or a YAML file where metalsynth puts them (`clusters/<ns>/<cluster>/`,
 * `argocd/`, `flux/`) whose every document is an object it renders: labelled
 * `app.kubernetes.io/managed-by: metalsynth`, a kustomize `Kustomization`, or a partial Metal3
 * BareMetalHost (the SIP label patches carry nothing but the SIP labels). A README, a hand-added
 * manifest or notes are not, and synth refuses to delete them.
 */
export function isRenderedFile(file: string, content: Buffer): boolean {
  if (file === LOCK_FILE) return true;
  if (!/^(clusters\/[^/]+\/[^/]+|argocd|flux)\/[^/]+\.yaml$/.test(file)) return false;
  let documents;
  try {
    documents = parseAllDocuments(content.toString("utf8"));
  } catch {
    return false;
  }
  if (!Array.isArray(documents) || documents.length === 0) return false;
  return documents.every((document) => {
    if (document.errors.length > 0) return false;
    const value: unknown = document.toJS();
    return isRenderedObject(value);
  });
}

function isRenderedObject(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const { apiVersion, kind } = value;
  const labels = field(field(value, "metadata"), "labels");
  if (isRecord(labels) && labels[MANAGED_BY] === "metalsynth") return true;
  if (
    kind === "Kustomization" &&
    typeof apiVersion === "string" &&
    apiVersion.startsWith("kustomize.config.k8s.io/")
  )
    return true;
  return (
    kind === "BareMetalHost" &&
    typeof apiVersion === "string" &&
    apiVersion.startsWith("metal3.io/") &&
    value["spec"] === undefined
  );
}

const MANAGED_BY = "app.kubernetes.io/managed-by";

/** The hosts of each role, `label=host` for BPA nodes and `host (standby)` for SIP standbys. */
function roleSummary(cluster: ClusterRender): RenderedCluster["roles"] {
  if (cluster.kind === "sip") {
    const roles = [...new Set(cluster.members.map((member) => member.role))];
    return roles.map((role) => ({
      role,
      hosts: cluster.members
        .filter((member) => member.role === role)
        .map((member) => `${member.host.id}${member.standby ? " (standby)" : ""}`),
    }));
  }
  const describe = (node: { label: string; host: { id: string } }) => `${node.label}=${node.host.id}`;
  return [
    { role: "master", hosts: cluster.masters.map(describe) },
    { role: "worker", hosts: cluster.workers.map(describe) },
  ];
}
