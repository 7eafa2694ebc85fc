import { App } from "cdk8s";
import {
  ArgoApplicationSetChart,
  FluxKustomizationChart,
  fluxKustomizationName,
} from "../charts/gitops-wiring.ts";
import { bpaClusterObjects, objectsOf } from "../charts/index.ts";
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
  readonly masters: readonly string[];
  readonly workers: readonly string[];
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
  const targets = new Set(settings.gitops.targets);
  if (targets.has("argocd")) {
    const app = new App({ recordConstructMetadata: false });
    files.set(
      "argocd/applicationset.yaml",
      toYamlStream(objectsOf(new ArgoApplicationSetChart(app, "argocd", { settings }))),
    );
  }
  for (const cluster of plan.clusters) {
    const components = clusterObjects(cluster, settings);
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
    if (targets.has("flux")) {
      const app = new App({ recordConstructMetadata: false });
      const chart = new FluxKustomizationChart(app, "flux", {
        settings,
        namespace: cluster.namespace,
        cluster: cluster.name,
      });
      files.set(
        `flux/${fluxKustomizationName(cluster.namespace, cluster.name)}.yaml`,
        toYamlStream(objectsOf(chart)),
      );
    }
    clusters.push({ cluster: cluster.key, directory, ...roleSummary(cluster), objects });
  }
  return { files, clusters };
}

/** The component files of one cluster directory. */
function clusterObjects(cluster: ClusterPlan, settings: SiteSettings): Map<string, unknown[]> {
  return cluster.kind === "bpa" ? bpaClusterObjects(cluster, settings) : new Map();
}

/** `label=host` per master and worker, for the CLI's summary. */
function roleSummary(cluster: ClusterPlan): { masters: string[]; workers: string[] } {
  if (cluster.kind === "sip") {
    const describe = (role: string) =>
      cluster.members
        .filter((member) => member.role === role)
        .map((member) => `${member.host.id}${member.standby ? " (standby)" : ""}`);
    return { masters: describe("ControlPlane"), workers: describe("Worker") };
  }
  const describe = (node: { request: { label: string }; host: { id: string } }) =>
    `${node.request.label}=${node.host.id}`;
  return { masters: cluster.masters.map(describe), workers: cluster.workers.map(describe) };
}
