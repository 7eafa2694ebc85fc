import { ApiObject, Chart, type ApiObjectProps } from "cdk8s";
import { ALLOCATION_FILE, SPECS_FILE } from "../synth/plan/allocation.ts";
import type { Construct } from "constructs";
import type { RetiredSipCluster } from "../synth/plan/model.ts";
import type { DnsLabel } from "../synth/checked.ts";
import type { ClusterRender, RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { clusterDirectoryName } from "../synth/names.ts";
import { ArgoApplicationSetChart, FluxKustomizationChart } from "./gitops-wiring.ts";
import { addBpaClusterCharts } from "./index.ts";
import { chartId } from "./metadata.ts";
import { addSipClusterCharts, BmhLabelsChart, labelJobProps } from "./sip/index.ts";

/** The charts of one cluster directory, by file name inside it. */
export interface ClusterCharts {
  /** `namespace/cluster`. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** The plans rendered into it: a BPA cluster, a SIPCluster, or both when they share a name. */
  readonly plans: readonly ClusterRender[];
  /** A SIPCluster gone from the site, whose directory only removes its hosts' labels. */
  readonly retired?: RetiredSipCluster;
  /** `clusters/<namespace>/<cluster>`, relative to `rendered/`. */
  readonly directory: string;
  readonly files: ReadonlyMap<string, Chart>;
  /** Its Flux Kustomization by path in `rendered/`, when the site asks for Flux. */
  readonly wiring: ReadonlyMap<string, Chart>;
}

/** Every chart of a site: the cluster directories, and the GitOps wiring by path in `rendered/`. */
export interface SiteCharts {
  readonly clusters: readonly ClusterCharts[];
  readonly wiring: ReadonlyMap<string, Chart>;
}

/**
 * Adds the charts of a whole site plan (docs/contract.md §4) and returns them all: what `npx cdk8s synth` puts
 * into its one App. `scopeFor` says where each group of charts goes, as in {@link clusterDirectoryCharts}.
 */
export function addSiteCharts(
  plan: Pick<RenderPlan, "clusters" | "retired" | "allocations" | "specs">,
  settings: SiteSettings,
  scopeFor: () => Construct,
): SiteCharts {
  const clusters: ClusterCharts[] = [];
  const wiring = new Map(addSiteWiringCharts(scopeFor(), settings));
  for (const cluster of clusterDirectoryCharts(plan, settings, scopeFor)) {
    clusters.push(cluster);
    for (const [file, chart] of cluster.wiring) wiring.set(file, chart);
  }
  return { clusters, wiring };
}

/** The wiring of the whole site by path in `rendered/`: the Argo CD ApplicationSet, when asked for. */
export function addSiteWiringCharts(scope: Construct, settings: SiteSettings): Map<string, Chart> {
  const wiring = new Map<string, Chart>();
  if (settings.gitops.targets.includes("argocd"))
    wiring.set("argocd/applicationset.yaml", new ArgoApplicationSetChart(scope, "argocd", { settings }));
  return wiring;
}

/**
 * Adds the charts of the cluster directories of a plan (docs/contract.md §4), one directory at a time, each into
 * the scope `scopeFor` gives it: every directory of `clusters` in plan order with its Flux wiring,
 * then those of the retired SIPClusters. Lazy, so synth can give each directory an App of its own and
 * serialise it before the next is built: cdk8s resolves dependencies App-wide on each chart's
 * synthesis, so one App for a large site is quadratic, and Apps kept until the end hold the whole
 * site's construct trees (decision 0019). Chart ids carry the namespace and cluster, so they are
 * unique in one App too. A part of a plan renders as its directories do in the whole, as long as it
 * holds every plan of each directory it has.
 */
export function* clusterDirectoryCharts(
  plan: Pick<RenderPlan, "clusters" | "retired" | "allocations" | "specs">,
  settings: SiteSettings,
  scopeFor: () => Construct,
): Generator<ClusterCharts, void, undefined> {
  const flux = (
    scope: Construct,
    namespace: DnsLabel,
    name: DnsLabel,
    files: ReadonlyMap<string, Chart>,
  ): Map<string, Chart> => {
    if (!settings.gitops.targets.includes("flux")) return new Map();
    const labels = files.get("bmh-labels.yaml");
    const jobs = labels && isBmhLabelsChart(labels) ? [labels.job] : [];
    const chart = new FluxKustomizationChart(scope, chartId({ namespace, name }, "flux"), {
      settings,
      namespace,
      cluster: name,
      jobs,
    });
    return new Map([[`flux/${clusterDirectoryName(namespace, name)}.yaml`, chart]]);
  };
  const git = {
    allocations: new Map<string, object>(plan.allocations.map(({ key, object }) => [key, object])),
    specs: new Map<string, readonly object[]>(plan.specs.map(({ key, documents }) => [key, documents])),
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
    addGitCharts(scope, plans[0]!, git, files);
    const directory = clusterDirectory(namespace, name);
    yield { key, namespace, name, plans, directory, files, wiring: flux(scope, namespace, name, files) };
  }
  for (const retired of plan.retired) {
    const scope = scopeFor();
    const { key, namespace, name } = retired;
    const labels = new BmhLabelsChart(scope, chartId(retired, "bmh-labels"), {
      cluster: retired,
      labelJob: labelJobProps(settings),
    });
    const files = new Map<string, Chart>([["bmh-labels.yaml", labels]]);
    addGitCharts(scope, retired, git, files);
    yield {
      key,
      namespace,
      name,
      plans: [],
      retired,
      directory: clusterDirectory(namespace, name),
      files,
      wiring: flux(scope, namespace, name, files),
    };
  }
}

/**
 * Adds what Git knows of a cluster to its directory's files (decision 0039): its Allocation, when the
 * lock has entries for it, and its own CRs, when it has any.
 */
function addGitCharts(
  scope: Construct,
  cluster: { readonly key: string; readonly namespace: string; readonly name: string },
  plan: {
    readonly allocations: ReadonlyMap<string, object>;
    readonly specs: ReadonlyMap<string, readonly object[]>;
  },
  files: Map<string, Chart>,
): void {
  const allocation = plan.allocations.get(cluster.key);
  if (allocation !== undefined)
    files.set(ALLOCATION_FILE, new DocumentsChart(scope, chartId(cluster, "allocation"), [allocation]));
  const documents = plan.specs.get(cluster.key) ?? [];
  if (documents.length > 0)
    files.set(SPECS_FILE, new DocumentsChart(scope, chartId(cluster, "specs"), documents));
}

/** A chart of documents synth made itself (`synth/plan/allocation.ts`), written as they are. */
class DocumentsChart extends Chart {
  constructor(scope: Construct, id: string, documents: readonly object[]) {
    super(scope, id, { disableResourceNameHashes: true });
    documents.forEach((document, index) => new VerbatimObject(this, `document-${index}`, document));
  }
}

/**
 * An object written exactly as given. cdk8s would sort its keys and drop its nulls, and a null is
 * meaningful in a CR (`- worker-1:` is "the same host as master-1").
 */
class VerbatimObject extends ApiObject {
  readonly #document: object;

  constructor(scope: Construct, id: string, document: object) {
    super(scope, id, document as ApiObjectProps);
    this.#document = document;
  }

  override toJson(): object {
    return this.#document;
  }
}

/**
 * Whether `chart` renders a `bmh-labels.yaml`. A type guard: TypeScript does not narrow a `Chart`
 * by `instanceof` here.
 */
function isBmhLabelsChart(chart: Chart): chart is BmhLabelsChart {
  return chart instanceof BmhLabelsChart;
}

/** A cluster's directory, relative to `rendered/` (docs/contract.md §4). */
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
