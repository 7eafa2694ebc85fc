import type { DnsLabel } from "../synth/checked.ts";
import { Chart } from "cdk8s";
import { KubeObject } from "./kube-object.ts";
import type { Construct } from "constructs";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { clusterDirectoryName, MAX_LABEL_NAME } from "../synth/names.ts";
import { CLUSTER_LABEL, MANAGED_BY_LABEL, clusterLabels } from "./metadata.ts";

/** Props of {@link ArgoApplicationSetChart}. */
export interface ArgoApplicationSetChartProps {
  readonly settings: SiteSettings;
}

/**
 * `rendered/argocd/applicationset.yaml` (docs/contract.md §4): one Application per
 * `<pathPrefix>/<namespace>/<cluster>` directory, named as its Flux Kustomization is
 * ({@link clusterDirectoryName}), whose synced objects outlive it (decision 0008).
 */
export class ArgoApplicationSetChart extends Chart {
  constructor(scope: Construct, id: string, props: ArgoApplicationSetChartProps) {
    const { argocd, pathPrefix } = props.settings.gitops;
    super(scope, id, { namespace: argocd.namespace, labels: { [MANAGED_BY_LABEL]: "metalsynth" } });
    const segment = pathPrefix.split("/").length;
    const namespaceSegment = `{{ index .path.segments ${segment} }}`;
    new KubeObject(this, "applicationset", {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "ApplicationSet",
      metadata: { name: "metalsynth-clusters" },
      spec: {
        goTemplate: true,
        // A path that does not have the expected depth is an error, not an Application named "-".
        goTemplateOptions: ["missingkey=error"],
        generators: [
          {
            git: {
              repoURL: argocd.repoURL,
              revision: argocd.revision,
              directories: [{ path: `${pathPrefix}/*/*` }],
            },
          },
        ],
        // A directory gone from Git deletes its Application with what it synced, so the cluster's
        // Allocation and CRs leave with it; everything else is marked Delete=false (waveAnnotations)
        // and stays, as decision 0008 wants (decision 0039).
        syncPolicy: { preserveResourcesOnDeletion: false },
        template: {
          metadata: {
            name: applicationName(segment),
            finalizers: [ARGO_RESOURCES_FINALIZER],
            labels: { [MANAGED_BY_LABEL]: "metalsynth", [CLUSTER_LABEL]: "{{ .path.basename }}" },
          },
          spec: {
            project: argocd.project,
            source: { repoURL: argocd.repoURL, targetRevision: argocd.revision, path: "{{ .path.path }}" },
            destination: { server: argocd.destinationServer, namespace: namespaceSegment },
            syncPolicy: {
              automated: { prune: true, selfHeal: true },
              syncOptions: ["ApplyOutOfSyncOnly=true"],
            },
          },
        },
      },
    });
  }
}

/** The finalizer that makes deleting an Argo CD Application delete what it synced. */
const ARGO_RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io";

/** Props of {@link FluxKustomizationChart}. */
export interface FluxKustomizationChartProps {
  readonly settings: SiteSettings;
  /** The cluster directory's namespace and name. */
  readonly namespace: DnsLabel;
  readonly cluster: DnsLabel;
  /**
   * Jobs whose failure the Kustomization reports (`healthChecks`): the SIP label Job, which fails
   * on a host deleted since the inventory snapshot after everything else is applied (decision 0040).
   */
  readonly jobs?: readonly { readonly namespace: string; readonly name: string }[];
}

/**
 * `rendered/flux/<name>.yaml` (docs/contract.md §4, {@link clusterDirectoryName}): the Flux Kustomization of one cluster
 * directory, after the site's `dependsOn`; the objects carry the order inside it (decision 0008).
 */
export class FluxKustomizationChart extends Chart {
  constructor(scope: Construct, id: string, props: FluxKustomizationChartProps) {
    const { settings, namespace, cluster, jobs = [] } = props;
    const { flux, pathPrefix } = settings.gitops;
    super(scope, id, { namespace: flux.namespace, labels: clusterLabels(cluster) });
    new KubeObject(this, "kustomization", {
      apiVersion: "kustomize.toolkit.fluxcd.io/v1",
      kind: "Kustomization",
      metadata: { name: clusterDirectoryName(namespace, cluster) },
      spec: {
        interval: flux.interval,
        path: `./${pathPrefix}/${namespace}/${cluster}`,
        prune: true,
        sourceRef: flux.sourceRef,
        ...(flux.dependsOn.length > 0 ? { dependsOn: flux.dependsOn } : {}),
        ...(jobs.length > 0
          ? { healthChecks: jobs.map((job) => ({ apiVersion: "batch/v1", kind: "Job", ...job })) }
          : {}),
      },
    });
  }
}

/**
 * {@link clusterDirectoryName} as a go template over the git directory generator's path, with the
 * sprig functions ApplicationSets offer: the namespace joined with `.` when it has a dash and
 * with `-` otherwise, and a name of 63 characters or more shortened to its first 54, `-`
 * and the first 8 hex digits of its SHA-256. `segment` is the index of the namespace in the
 * directory's path.
 */
export function applicationName(segment: number): string {
  const kept = MAX_LABEL_NAME - 9;
  return [
    `{{- $ns := index .path.segments ${segment} -}}`,
    `{{- $name := printf "%s%s%s" $ns (ternary "." "-" (contains "-" $ns)) .path.basename -}}`,
    `{{- if lt (len $name) ${MAX_LABEL_NAME} }}{{ $name }}{{ else -}}`,
    `{{ regexReplaceAll "[.]$" (trunc ${kept} $name) "-" }}-{{ trunc 8 (sha256sum $name) }}{{ end -}}`,
  ].join("");
}
