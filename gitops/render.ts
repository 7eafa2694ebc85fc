import { App } from "cdk8s";
import { parseAllDocuments } from "yaml";
import { objectsOf } from "../charts/index.ts";
import { addSiteCharts } from "../charts/site.ts";
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

/**
 * The complete `rendered/` tree of a plan (SPEC §4) as relative path → file content: the lock; per
 * cluster its component files plus a `kustomization.yaml` listing them in sorted order; and the Argo
 * CD and Flux wiring the site's settings ask for.
 */
export function renderSite(
  plan: RenderPlan,
  settings: SiteSettings,
): { files: Map<string, string>; clusters: RenderedCluster[] } {
  const files = new Map<string, string>();
  const clusters: RenderedCluster[] = [];
  files.set(
    LOCK_FILE,
    `# Written by metalsynth: host allocations, read back so clusters are never reshuffled.\n${toYaml(lockDocument(plan.lock))}`,
  );
  const charts = addSiteCharts(plan, settings, () => new App({ recordConstructMetadata: false }));
  for (const [file, chart] of charts.wiring) files.set(file, toYamlStream(objectsOf(chart)));
  for (const cluster of charts.clusters) {
    const resources = [...cluster.files.keys()].sort(compareText);
    let objects = 0;
    for (const name of resources) {
      const content = objectsOf(cluster.files.get(name)!);
      objects += content.length;
      files.set(`${cluster.directory}/${name}`, toYamlStream(content));
    }
    files.set(
      `${cluster.directory}/kustomization.yaml`,
      toYaml({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources }),
    );
    clusters.push({
      cluster: cluster.key,
      directory: cluster.directory,
      roles: cluster.retired
        ? [{ role: "released", hosts: cluster.retired.released.map((host) => host.id) }]
        : cluster.plans.flatMap(roleSummary),
      objects,
    });
  }
  return { files, clusters };
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
