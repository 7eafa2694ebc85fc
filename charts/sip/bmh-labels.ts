import { ApiObject, Chart } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import { SIP_LABELS } from "../../synth/inventory/bmh.ts";
import type { Host } from "../../synth/inventory/host.ts";
import { compareText } from "../../synth/issue.ts";
import { labelJobName, labelRoleName } from "../../synth/names.ts";
import type { SipRender } from "../../synth/plan/render-plan.ts";
import {
  CLUSTER_LABEL,
  clusterLabels,
  nobodyPodSecurityContext,
  SYNC_WAVES,
  unprivilegedContainerSecurityContext,
  waveAnnotations,
} from "../metadata.ts";

/** The image that runs `kubectl label` for Argo CD, and how it is pulled. */
export interface LabelJobProps {
  readonly image: string;
  readonly imagePullPolicy: string;
}

/** Props of {@link BmhLabelsChart}. */
export interface BmhLabelsChartProps {
  /**
   * The SIPCluster's plan: its members get the SIP labels, its released hosts lose them. A retired
   * SIPCluster (gone from the site) has released hosts only.
   */
  readonly cluster: Pick<SipRender, "namespace" | "name" | "released"> & Partial<Pick<SipRender, "members">>;
  /** The Job that sets the labels under Argo CD and when `rendered/` is applied by hand (decision 0015). */
  readonly labelJob: LabelJobProps;
}

/**
 * How the GitOps agents treat a label patch (decisions 0008 and 0015). Flux applies it server-side
 * and, with `ssa: Merge`, without first taking over the fields kubectl set, which it would then drop.
 * Argo CD skips it (`hook: Skip`): its server-side apply runs kubectl's client-side-apply migration,
 * which no sync option turns off and which would drop the spec of a BMH made by `kubectl apply`;
 * the label Job does Argo CD's part. Nothing may ever prune or delete the BMH behind a patch.
 */
export const BMH_PATCH_ANNOTATIONS = {
  "argocd.argoproj.io/compare-options": "IgnoreExtraneous",
  "argocd.argoproj.io/hook": "Skip",
  "argocd.argoproj.io/sync-options": "ServerSideApply=true,Validate=false,Prune=false,Delete=false",
  "kustomize.toolkit.fluxcd.io/prune": "disabled",
  "kustomize.toolkit.fluxcd.io/ssa": "Merge",
} as const;

/** Objects only Argo CD acts on: Flux's kustomize-controller leaves them alone. */
const ARGO_CD_ONLY = { "kustomize.toolkit.fluxcd.io/reconcile": "disabled" } as const;

/** A host's patch: the labels it gets, or none when it is released. */
interface HostPatch {
  readonly host: Host;
  readonly labels?: Record<string, string>;
}

/**
 * The SIP ownership labels of the live BareMetalHosts (SPEC §4.2), written two ways that change the
 * labels and nothing else, whoever created the host:
 *
 * - one partial `BareMetalHost` per member, in the host's own namespace, with
 *   `sip.airshipit.org/cluster-namespace`, `cluster-name` and `node-type` (standby hosts are labelled
 *   like active ones, as upstream SIP did); a released host gets a partial object without labels, so
 *   server-side apply removes the ones it set. Flux applies these.
 * - a Job that runs `kubectl label` for the same hosts (and removes the labels of released ones), with
 *   a ServiceAccount allowed to patch exactly those BareMetalHosts: an Argo CD Sync hook, and what
 *   sets the labels when `rendered/` is applied by hand. Flux leaves it alone.
 *
 * The patches carry `metalsynth.io/cluster` but not `app.kubernetes.io/managed-by`: a patch owns
 * three labels of an object someone else created (decision 0009).
 */
export class BmhLabelsChart extends Chart {
  constructor(scope: Construct, id: string, props: BmhLabelsChartProps) {
    const { cluster } = props;
    // No chart-wide namespace or labels: each patch names its BMH's namespace and its own labels.
    super(scope, id, { disableResourceNameHashes: true });
    const patches = hostPatches(cluster);
    patches.forEach(({ host, labels }, index) => {
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
    this.addLabelJob(cluster, patches, props.labelJob);
  }

  /**
   * The Argo CD (and by-hand) side: a Sync hook Job in the cluster's namespace, one `kubectl label`
   * container per BMH namespace and label set, and RBAC allowing get and patch of exactly the hosts it labels. The
   * RBAC objects are ordinary resources of the hook's wave: Argo CD applies a wave kind by kind,
   * ServiceAccounts and Roles before Jobs, so they exist when the hook runs.
   */
  private addLabelJob(
    cluster: BmhLabelsChartProps["cluster"],
    patches: readonly HostPatch[],
    job: LabelJobProps,
  ) {
    const name = labelJobName(cluster.name);
    const metadata = (namespace: string, extra: Record<string, string> = {}) => ({
      name,
      namespace,
      labels: clusterLabels(cluster.name),
      annotations: { ...waveAnnotations(SYNC_WAVES.bmhLabels), ...ARGO_CD_ONLY, ...extra },
    });
    new k8s.KubeServiceAccount(this, "sa", {
      metadata: metadata(cluster.namespace),
      automountServiceAccountToken: false,
    });

    const byNamespace = new Map<string, HostPatch[]>();
    for (const patch of patches) {
      byNamespace.set(patch.host.namespace, [...(byNamespace.get(patch.host.namespace) ?? []), patch]);
    }
    // A Role in each BMH namespace, named after the cluster's namespace too: one BMH namespace
    // serves SIPClusters of many namespaces.
    const roleName = labelRoleName(cluster.namespace, cluster.name);
    for (const [namespace, hosts] of byNamespace) {
      const roleMetadata = { ...metadata(namespace), name: roleName };
      new k8s.KubeRole(this, `role-${namespace}`, {
        metadata: roleMetadata,
        rules: [
          {
            apiGroups: ["metal3.io"],
            resources: ["baremetalhosts"],
            resourceNames: hosts.map(({ host }) => host.name),
            verbs: ["get", "patch"],
          },
        ],
      });
      new k8s.KubeRoleBinding(this, `rolebinding-${namespace}`, {
        metadata: roleMetadata,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
        subjects: [{ kind: "ServiceAccount", name, namespace: cluster.namespace }],
      });
    }

    const containers: k8s.Container[] = [];
    for (const [namespace, hosts] of byNamespace) {
      const groups = new Map<string, { arguments: string[]; hosts: string[] }>();
      for (const { host, labels } of hosts) {
        // `key=value` sets a label, `key-` removes it; a released host loses every label a member has.
        const labelArguments = labels
          ? Object.entries(labels).map(([key, value]) => `${key}=${value}`)
          : MEMBER_LABEL_KEYS.map((key) => `${key}-`);
        const group = labelArguments.join(" ");
        const entry = groups.get(group) ?? { arguments: labelArguments, hosts: [] };
        entry.hosts.push(host.name);
        groups.set(group, entry);
      }
      for (const group of groups.values()) {
        containers.push({
          name: `label-${containers.length}`,
          image: job.image,
          imagePullPolicy: job.imagePullPolicy,
          command: ["kubectl"],
          args: [
            "label",
            "--overwrite",
            `--namespace=${namespace}`,
            "--cache-dir=/tmp/kube-cache",
            "baremetalhost",
            ...group.hosts,
            ...group.arguments,
          ],
          securityContext: unprivilegedContainerSecurityContext(),
          resources: {
            requests: { cpu: k8s.Quantity.fromString("10m"), memory: k8s.Quantity.fromString("32Mi") },
          },
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
        });
      }
    }
    new k8s.KubeJob(this, "job", {
      metadata: metadata(cluster.namespace, {
        "argocd.argoproj.io/hook": "Sync",
        "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
      }),
      spec: {
        backoffLimit: 3,
        template: {
          metadata: { labels: clusterLabels(cluster.name) },
          spec: {
            serviceAccountName: name,
            automountServiceAccountToken: true,
            restartPolicy: "Never",
            securityContext: nobodyPodSecurityContext(),
            containers,
            volumes: [{ name: "tmp", emptyDir: {} }],
          },
        },
      },
    });
  }
}

/** The labels a member host of `cluster` carries for `role`. */
function memberLabels(cluster: { readonly namespace: string; readonly name: string }, role: string) {
  return {
    [CLUSTER_LABEL]: cluster.name,
    [SIP_LABELS.namespace]: cluster.namespace,
    [SIP_LABELS.name]: cluster.name,
    [SIP_LABELS.nodeType]: role,
  };
}

/** The keys of {@link memberLabels}: what a released host loses. */
const MEMBER_LABEL_KEYS = [CLUSTER_LABEL, SIP_LABELS.namespace, SIP_LABELS.name, SIP_LABELS.nodeType];

/** Each host's patch, by `namespace/name`; a host released and chosen again is a member. */
function hostPatches(cluster: BmhLabelsChartProps["cluster"]): HostPatch[] {
  const patches = new Map<string, HostPatch>();
  for (const host of cluster.released) patches.set(host.id, { host });
  for (const member of cluster.members ?? []) {
    patches.set(member.host.id, { host: member.host, labels: memberLabels(cluster, member.role) });
  }
  return [...patches.values()].sort((a, b) => compareText(a.host.id, b.host.id));
}
