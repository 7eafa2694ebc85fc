import type { Chart } from "cdk8s";
import type { Construct } from "constructs";
import type { RetiredSipCluster } from "../synth/plan/model.ts";
import type { ClusterRender, RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { ArgoApplicationSetChart, FluxKustomizationChart, fluxKustomizationName } from "./gitops-wiring.ts";
import { addBpaClusterCharts } from "./index.ts";
import { chartId } from "./metadata.ts";
import { addSipClusterCharts, BmhLabelsChart, labelJobProps } from "./sip/index.ts";

/** The charts of one cluster directory, by file name inside it. */
export interface ClusterCharts {
  /** `namespace/cluster`. */
  readonly key: string;
  /** The plans rendered into it: a BPA cluster, a SIPCluster, or both when they share a name. */
  readonly plans: readonly ClusterRender[];
  /** A SIPCluster gone from the site, whose directory only removes its hosts' labels. */
  readonly retired?: RetiredSipCluster;
  /** `clusters/<namespace>/<cluster>`, relative to `rendered/`. */
  readonly directory: string;
  readonly files: ReadonlyMap<string, Chart>;
}

/** Every chart of a site: the cluster directories, and the GitOps wiring by path in `rendered/`. */
export interface SiteCharts {
  readonly clusters: readonly ClusterCharts[];
  readonly wiring: ReadonlyMap<string, Chart>;
}

/**
 * Adds the charts of a whole site plan (SPEC §4). `scopeFor` says where each group of charts goes:
 * synth gives every cluster an App of its own (cdk8s resolves dependencies App-wide on each chart's
 * synthesis, so one App for a large site is quadratic), `npx cdk8s synth` puts all into its one App.
 * Chart ids carry the namespace and cluster, so they are unique in either case.
 */
export function addSiteCharts(
  plan: RenderPlan,
  settings: SiteSettings,
  scopeFor: () => Construct,
): SiteCharts {
  const targets = new Set(settings.gitops.targets);
  const wiring = new Map<string, Chart>();
  if (targets.has("argocd"))
    wiring.set("argocd/applicationset.yaml", new ArgoApplicationSetChart(scopeFor(), "argocd", { settings }));
  const clusters: ClusterCharts[] = [];
  const addFlux = (scope: Construct, namespace: string, name: string) => {
    if (!targets.has("flux")) return;
    const fluxName = fluxKustomizationName(namespace, name);
    wiring.set(
      `flux/${fluxName}.yaml`,
      new FluxKustomizationChart(scope, chartId({ namespace, name }, "flux"), {
        settings,
        namespace,
        cluster: name,
      }),
    );
  };
  for (const plans of byDirectory(plan.clusters)) {
    const scope = scopeFor();
    const files = new Map<string, Chart>();
    for (const cluster of plans) {
      const charts =
        cluster.kind === "bpa"
          ? addBpaClusterCharts(scope, cluster, settings)
          : addSipClusterCharts(scope, cluster, settings);
      // BPA and SIP component files have different names, so a shared directory holds both.
      for (const [file, chart] of charts) files.set(file, chart);
    }
    if (files.size === 0) continue;
    const { key, namespace, name } = plans[0]!;
    clusters.push({ key, plans, directory: clusterDirectory(namespace, name), files });
    addFlux(scope, namespace, name);
  }
  for (const retired of plan.retired) {
    const scope = scopeFor();
    const { key, namespace, name } = retired;
    const files = new Map<string, Chart>([
      [
        "bmh-labels.yaml",
        new BmhLabelsChart(scope, chartId(retired, "bmh-labels"), {
          cluster: retired,
          labelJob: labelJobProps(settings),
        }),
      ],
    ]);
    clusters.push({ key, plans: [], retired, directory: clusterDirectory(namespace, name), files });
    addFlux(scope, namespace, name);
  }
  return { clusters, wiring };
}

/** A cluster's directory, relative to `rendered/` (SPEC §4). */
function clusterDirectory(namespace: string, name: string): string {
  return `clusters/${namespace}/${name}`;
}

/** Plans grouped by cluster directory (`namespace/name`), in plan order. */
function byDirectory(plans: readonly ClusterRender[]): ClusterRender[][] {
  const groups = new Map<string, ClusterRender[]>();
  for (const plan of plans) {
    const group = groups.get(plan.key);
    if (group) group.push(plan);
    else groups.set(plan.key, [plan]);
  }
  return [...groups.values()];
}
