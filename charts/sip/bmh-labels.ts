import { Chart } from "cdk8s";
import { KubeObject } from "../kube-object.ts";
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
  hashedJob,
  nobodyPodSecurityContext,
  SYNC_WAVES,
  unprivilegedContainerSecurityContext,
  waveAnnotations,
} from "../metadata.ts";

/** The image that runs the label script (it needs `/bin/sh` and `kubectl`), and how it is pulled. */
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
  /** The Job that sets the labels under both GitOps agents and by hand (decision 0040). */
  readonly labelJob: LabelJobProps;
}

/**
 * The exit code of the label script when the only trouble is a host that is not in the cluster: the
 * Job fails at once (`podFailurePolicy`), since running again cannot bring a deleted host back.
 * Any other failure exits 1 and the Job retries.
 */
export const MISSING_HOST_EXIT_CODE = 3;

/**
 * The label script, fixed: what it works on comes only as arguments, `NAMESPACE HOST... -- LABEL...`
 * (`key=value` sets a label, `key-` removes it). It labels every host that exists and says which do
 * not, and fails only after trying them all. Host names are DNS subdomains (checked at the door), so
 * splitting them on spaces with globbing off (`set -f`) gives back exactly the names. `kubectl get
 * --ignore-not-found` prints nothing for a missing host and fails for anything else (no access, no
 * API server), which must not read as "missing".
 */
export const LABEL_SCRIPT = `set -f
namespace=$1
shift
hosts=
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  hosts="$hosts $1"
  shift
done
shift
missing=0
failed=0
for host in $hosts; do
  if ! found=$(kubectl get baremetalhost "$host" --namespace="$namespace" --ignore-not-found --output=name --cache-dir=/tmp/kube-cache); then
    failed=1
  elif [ -z "$found" ]; then
    echo "BareMetalHost $namespace/$host not found: not labelled; deleted since the inventory snapshot?" >&2
    missing=1
  elif ! kubectl label baremetalhost "$host" "$@" --overwrite --namespace="$namespace" --cache-dir=/tmp/kube-cache; then
    failed=1
  fi
done
if [ "$failed" = 1 ]; then exit 1; fi
if [ "$missing" = 1 ]; then exit ${MISSING_HOST_EXIT_CODE}; fi
`;

/** A host's labels, or none when it is released. */
interface HostLabelChange {
  readonly host: Host;
  readonly labels?: Record<string, string>;
}

/**
 * The SIP ownership labels of the live BareMetalHosts (docs/contract.md §4.2, decisions 0015 and 0040): a Job
 * runs {@link LABEL_SCRIPT}, which labels each member with `sip.airshipit.org/cluster-namespace`,
 * `cluster-name` and `node-type` (standby hosts are labelled like active ones, as upstream SIP did)
 * and removes them from each released host, by `kubectl label`: a merge patch of `metadata.labels`
 * that changes nothing else, whoever created the host, and never creates one. A ServiceAccount may
 * get and patch exactly those BareMetalHosts. Both GitOps agents apply the Job as it is: Flux like
 * any object (its name is a hash of what it does, so a new label set is a new Job), Argo CD as a
 * PostSync hook, so a failing Job shows in the sync status without holding back the cluster's
 * services. No partial BareMetalHost is rendered: applying one creates the host when it is gone.
 */
export class BmhLabelsChart extends Chart {
  /** The label Job, `namespace` and `name`: Flux's Kustomization checks its health (decision 0040). */
  readonly job: { readonly namespace: string; readonly name: string };

  constructor(scope: Construct, id: string, props: BmhLabelsChartProps) {
    const { cluster } = props;
    // No chart-wide namespace: the RBAC lives in each BMH namespace, the Job in the cluster's.
    super(scope, id, { disableResourceNameHashes: true });
    this.job = {
      namespace: cluster.namespace,
      name: this.addLabelJob(cluster, hostLabelChanges(cluster), props.labelJob),
    };
  }

  /**
   * The Job in the cluster's namespace, one container per BMH namespace and label set, and RBAC
   * allowing get and patch of exactly the hosts it labels. The RBAC objects are ordinary resources
   * of wave -1, so under Argo CD they exist long before the PostSync hook runs; Flux applies them
   * with the Job, whose pod retries until its access is there. Returns the Job's name.
   */
  private addLabelJob(
    cluster: BmhLabelsChartProps["cluster"],
    changes: readonly HostLabelChange[],
    job: LabelJobProps,
  ): string {
    const name = labelJobName(cluster.name);
    const annotations = waveAnnotations(SYNC_WAVES.bmhLabels);
    const metadata = (namespace: string) => ({
      name,
      namespace,
      labels: clusterLabels(cluster.name),
      annotations,
    });
    new KubeObject(
      this,
      "sa",
      k8s.KubeServiceAccount.manifest({
        metadata: metadata(cluster.namespace),
        automountServiceAccountToken: false,
      }),
    );

    const byNamespace = new Map<string, HostLabelChange[]>();
    for (const change of changes) {
      byNamespace.set(change.host.namespace, [...(byNamespace.get(change.host.namespace) ?? []), change]);
    }
    // A Role in each BMH namespace, named after the cluster's namespace too: one BMH namespace
    // serves SIPClusters of many namespaces.
    const roleName = labelRoleName(cluster.namespace, cluster.name);
    for (const [namespace, hosts] of byNamespace) {
      const roleMetadata = { ...metadata(namespace), name: roleName };
      new KubeObject(
        this,
        `role-${namespace}`,
        k8s.KubeRole.manifest({
          metadata: roleMetadata,
          rules: [
            {
              apiGroups: ["metal3.io"],
              resources: ["baremetalhosts"],
              resourceNames: hosts.map(({ host }) => host.name),
              verbs: ["get", "patch"],
            },
          ],
        }),
      );
      new KubeObject(
        this,
        `rolebinding-${namespace}`,
        k8s.KubeRoleBinding.manifest({
          metadata: roleMetadata,
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
          subjects: [{ kind: "ServiceAccount", name, namespace: cluster.namespace }],
        }),
      );
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
          // `$0` names the script in the shell's own messages.
          command: ["/bin/sh", "-c", LABEL_SCRIPT, "bmh-labels"],
          args: [namespace, ...group.hosts, "--", ...group.arguments],
          securityContext: unprivilegedContainerSecurityContext(),
          resources: {
            requests: { cpu: k8s.Quantity.fromString("10m"), memory: k8s.Quantity.fromString("32Mi") },
          },
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
        });
      }
    }
    const spec: k8s.JobSpec = {
      backoffLimit: 3,
      podFailurePolicy: {
        rules: [
          {
            action: "FailJob",
            onExitCodes: { operator: "In", values: [MISSING_HOST_EXIT_CODE] },
            // Required, though empty, by the schema of Kubernetes 1.26 and 1.27, which validate it.
            onPodConditions: [],
          },
        ],
      },
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
    };
    const hashed = hashedJob("bmh-labels", cluster, spec, {});
    new KubeObject(this, "job", {
      ...hashed.manifest,
      metadata: {
        name: hashed.name,
        namespace: cluster.namespace,
        labels: clusterLabels(cluster.name),
        annotations: { ...annotations, ...ARGO_CD_HOOK },
      },
    });
    return hashed.name;
  }
}

/**
 * The label Job under Argo CD: a PostSync hook, run once every object of the Sync phase is applied
 * and healthy, so its failure marks the sync Failed but holds nothing back. A new run replaces the
 * previous one of the same name; a run that succeeded is removed, one that failed stays for its log.
 */
const ARGO_CD_HOOK = {
  "argocd.argoproj.io/hook": "PostSync",
  "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded",
} as const;

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

/** Each host's label change, by `namespace/name`; a host released and chosen again is a member. */
function hostLabelChanges(cluster: BmhLabelsChartProps["cluster"]): HostLabelChange[] {
  const changes = new Map<string, HostLabelChange>();
  for (const host of cluster.released) changes.set(host.id, { host });
  for (const member of cluster.members ?? []) {
    changes.set(member.host.id, { host: member.host, labels: memberLabels(cluster, member.role) });
  }
  return [...changes.values()].sort((a, b) => compareText(a.host.id, b.host.id));
}
