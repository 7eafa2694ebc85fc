import { ApiObject, Chart } from "cdk8s";
import type { Construct } from "constructs";
import { SIP_LABELS } from "../../synth/inventory/bmh.ts";
import type { Host } from "../../synth/inventory/host.ts";
import { compareText } from "../../synth/issue.ts";
import type { SipClusterPlan } from "../../synth/plan/model.ts";
import { CLUSTER_LABEL, SYNC_WAVES, waveAnnotations } from "../metadata.ts";

/** Props of {@link BmhLabelsChart}. */
export interface BmhLabelsChartProps {
  /**
   * The SIPCluster's plan: its members get the SIP labels, its released hosts lose them. A retired
   * SIPCluster (gone from the site) has released hosts only.
   */
  readonly cluster: Pick<SipClusterPlan, "namespace" | "name" | "released"> &
    Partial<Pick<SipClusterPlan, "members">>;
}

/**
 * How the GitOps agents must treat a label patch: apply it server-side as a partial object (it has no
 * spec, so client-side validation would refuse it), and never delete the BareMetalHost behind it, not
 * when the patch leaves Git (`Prune=false`, Flux `prune: disabled`) and not when the Argo CD
 * Application goes (`Delete=false`, decision 0008). A patch that left Git still carries Argo CD's
 * tracking id on the live BMH, so Argo CD would show the Application OutOfSync ("requires pruning")
 * for good; `IgnoreExtraneous`, which Argo CD documents for use with `Prune=false`, keeps such a BMH
 * out of the sync status.
 */
export const BMH_PATCH_ANNOTATIONS = {
  "argocd.argoproj.io/compare-options": "IgnoreExtraneous",
  "argocd.argoproj.io/sync-options": "ServerSideApply=true,Validate=false,Prune=false,Delete=false",
  "kustomize.toolkit.fluxcd.io/prune": "disabled",
} as const;

/**
 * The SIP ownership labels as server-side-apply patches of the live BareMetalHosts (SPEC §4.2): one
 * partial `BareMetalHost` per member, in the host's own namespace, with
 * `sip.airshipit.org/cluster-namespace`, `cluster-name` and `node-type` (the role; standby hosts are
 * labelled like active ones, as upstream SIP did). A host the cluster released gets a partial object
 * without labels for one generation: applying it makes the field manager give up the labels it set,
 * so they are removed; after that the host leaves Git and, being unprunable, is left alone.
 *
 * The patches carry `metalsynth.io/cluster` like every other object, but not
 * `app.kubernetes.io/managed-by`: a patch owns three labels of an object someone else created, and
 * that label claims the whole object. Overwriting it would break the real owner (Helm refuses to
 * upgrade a release whose objects say `managed-by` something else than `Helm`). A released host's
 * patch carries no labels at all, so the cluster label goes with the SIP labels.
 */
export class BmhLabelsChart extends Chart {
  constructor(scope: Construct, id: string, props: BmhLabelsChartProps) {
    const { cluster } = props;
    // No chart-wide namespace or labels: each patch names its BMH's namespace and its own labels.
    super(scope, id, { disableResourceNameHashes: true });
    // A released host's patch has no labels; a host released and chosen again is a member.
    const patches = new Map<string, { host: Host; labels?: Record<string, string> }>();
    for (const host of cluster.released) patches.set(host.id, { host });
    for (const member of cluster.members ?? []) {
      patches.set(member.host.id, {
        host: member.host,
        labels: {
          [CLUSTER_LABEL]: cluster.name,
          [SIP_LABELS.namespace]: cluster.namespace,
          [SIP_LABELS.name]: cluster.name,
          [SIP_LABELS.nodeType]: member.role,
        },
      });
    }
    [...patches.values()]
      .sort((a, b) => compareText(a.host.id, b.host.id))
      .forEach(({ host, labels }, index) => {
        new ApiObject(this, `bmh-${index}`, {
          apiVersion: "metal3.io/v1alpha1",
          kind: "BareMetalHost",
          metadata: {
            name: host.name,
            namespace: host.namespace,
            ...(labels && { labels }),
            annotations: { ...waveAnnotations(SYNC_WAVES.bmhLabels), ...BMH_PATCH_ANNOTATIONS },
          },
        });
      });
  }
}
