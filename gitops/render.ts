import { App } from "cdk8s";
import { objectsOf } from "../charts/index.ts";
import { addSiteCharts } from "../charts/site.ts";
import { compareText } from "../synth/issue.ts";
import { lockDocument } from "../synth/plan/lock.ts";
import type { ClusterPlan, SitePlan } from "../synth/plan/model.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { toYaml, toYamlStream } from "../synth/yaml-output.ts";
import { LOCK_FILE } from "./site-reader.ts";

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
  plan: SitePlan,
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

/** The hosts of each role, `label=host` for BPA nodes and `host (standby)` for SIP standbys. */
function roleSummary(cluster: ClusterPlan): RenderedCluster["roles"] {
  if (cluster.kind === "sip") {
    const roles = [...new Set(cluster.members.map((member) => member.role))];
    return roles.map((role) => ({
      role,
      hosts: cluster.members
        .filter((member) => member.role === role)
        .map((member) => `${member.host.id}${member.standby ? " (standby)" : ""}`),
    }));
  }
  const describe = (node: { request: { label: string }; host: { id: string } }) =>
    `${node.request.label}=${node.host.id}`;
  return [
    { role: "master", hosts: cluster.masters.map(describe) },
    { role: "worker", hosts: cluster.workers.map(describe) },
  ];
}
