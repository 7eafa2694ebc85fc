import { bpaClusterObjects } from "../charts/index.ts";
import { compareText } from "../synth/issue.ts";
import { lockDocument } from "../synth/plan/lock.ts";
import type { SitePlan } from "../synth/plan/model.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { toYaml, toYamlStream } from "../synth/yaml-output.ts";
import { LOCK_FILE } from "./site-reader.ts";

/** What synth wrote for one cluster, for the CLI's summary. */
export interface RenderedCluster {
  readonly cluster: string;
  readonly directory: string;
  readonly masters: readonly string[];
  readonly workers: readonly string[];
  readonly objects: number;
}

/**
 * The complete `rendered/` tree of a plan (SPEC §4) as relative path → file content: the lock, and
 * per BPA cluster its component files plus a `kustomization.yaml` listing them in sorted order.
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
  for (const cluster of plan.clusters) {
    if (cluster.kind !== "bpa") continue;
    const components = bpaClusterObjects(cluster, settings);
    if (components.size === 0) continue;
    const directory = `clusters/${cluster.namespace}/${cluster.name}`;
    const resources = [...components.keys()].sort(compareText);
    let objects = 0;
    for (const name of resources) {
      const content = components.get(name) ?? [];
      objects += content.length;
      files.set(`${directory}/${name}`, toYamlStream(content));
    }
    files.set(
      `${directory}/kustomization.yaml`,
      toYaml({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources }),
    );
    const describe = (node: { request: { label: string }; host: { id: string } }) =>
      `${node.request.label}=${node.host.id}`;
    clusters.push({
      cluster: cluster.key,
      directory,
      masters: cluster.masters.map(describe),
      workers: cluster.workers.map(describe),
      objects,
    });
  }
  return { files, clusters };
}
