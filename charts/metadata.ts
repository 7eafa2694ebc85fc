import type { ChartProps } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import { hash8 } from "../synth/content-hash.ts";

/** Label on every object metalsynth renders: tooling can tell generated objects from hand-made ones. */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** Label naming the cluster an object belongs to. */
export const CLUSTER_LABEL = "metalsynth.io/cluster";
/** The SSH private key's key in the `settings.sshKeySecret` Secret (upstream BPA's `ssh-key-secret`). */
export const SSH_KEY_ITEM = "id_rsa";
/**
 * The uid and gid of `nobody`, which non-root containers run as: it exists in practically every base
 * image, and tools such as OpenSSH refuse to run as a uid without a passwd entry.
 */
export const NOBODY = 65534;
/** Argo CD's ordering annotation (docs/contract.md §4). */
const SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave";

/**
 * Argo CD sync waves per component (docs/contract.md §4): BMH labels first, then the SIP services, then the KUD
 * installer (with the ConfigMaps it and its consumers read), then the software installer.
 */
export const SYNC_WAVES = { bmhLabels: "-1", services: "0", installer: "1", software: "2" } as const;

/** One of {@link SYNC_WAVES}. */
export type SyncWave = (typeof SYNC_WAVES)[keyof typeof SYNC_WAVES];

/** The labels every object of `cluster` carries. */
export function clusterLabels(cluster: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: "metalsynth", [CLUSTER_LABEL]: cluster };
}

/**
 * The annotations every object of a component carries: its wave, and `Delete=false`, so deleting its
 * cluster's Argo CD Application (its directory left Git) leaves it in the cluster as decision 0008
 * wants; only the cluster's Allocation and CRs, which carry neither, leave with it (decision 0039).
 */
export function waveAnnotations(wave: SyncWave): Record<string, string> {
  return { [SYNC_WAVE_ANNOTATION]: wave, "argocd.argoproj.io/sync-options": "Delete=false" };
}

/**
 * Props of a chart holding one cluster's component: the CR's namespace on every object (never
 * `default` unless the CR is there: upstream BPA hard-coded it, a bug), the common labels, and no
 * construct-path hashes in names, since every object gets an explicit, reviewable name.
 */
export function clusterChartProps(cluster: {
  readonly namespace: string;
  readonly name: string;
}): ChartProps {
  return {
    namespace: cluster.namespace,
    labels: clusterLabels(cluster.name),
    disableResourceNameHashes: true,
  };
}

/** Longest name usable as a label value, which the Job controller copies a Job's name into. */
const MAX_JOB_NAME = 63;

/** A Job's name and manifest from {@link hashedJob}. */
export interface HashedJob {
  /** `<prefix>-<cluster>-<hash8>`. */
  readonly name: string;
  /** `apiVersion`, `kind` and `spec` as Kubernetes JSON (`KubeJob.manifest`): what the hash covers. */
  readonly manifest: { readonly apiVersion: string; readonly kind: string; readonly spec: unknown };
}

/**
 * A Job named `<prefix>-<cluster>-<hash8>` (docs/contract.md §4.1). Jobs are immutable, so the hash covers
 * everything the Job runs with: its namespace, its spec, and the data of the ConfigMaps it mounts,
 * which are updated in place under fixed names. The Job controller puts the name into pod labels,
 * which hold at most 63 characters, so a long cluster name is shortened; the content hash keeps it
 * unique. A chart renders the manifest as it is (`new KubeObject(this, id, { ...manifest, metadata })`):
 * a `KubeJob` would convert the spec to Kubernetes JSON a second time, a tenth of a large site's
 * render (decision 0019), for the same object.
 */
export function hashedJob(
  prefix: string,
  cluster: { readonly namespace: string; readonly name: string },
  spec: k8s.JobSpec,
  configMaps: Readonly<Record<string, Readonly<Record<string, string>>>>,
): HashedJob {
  const manifest: HashedJob["manifest"] = k8s.KubeJob.manifest({ spec });
  const hash = hash8({ namespace: cluster.namespace, job: manifest, configMaps });
  const room = MAX_JOB_NAME - prefix.length - hash.length - 2;
  return { name: `${prefix}-${cluster.name.slice(0, room).replace(/-+$/, "")}-${hash}`, manifest };
}

/**
 * The pod security context of a pod whose containers all run as `nobody`, with the runtime's default
 * seccomp profile.
 */
export function nobodyPodSecurityContext(): k8s.PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: NOBODY,
    runAsGroup: NOBODY,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

/**
 * A container security context that grants nothing: no privilege escalation, every capability
 * dropped, a read-only root filesystem. Callers add the user when the pod does not set it.
 */
export function unprivilegedContainerSecurityContext(): k8s.SecurityContext {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } };
}

/**
 * The SSH key volume both Jobs use: a reference to the site's key Secret, only its `id_rsa` item,
 * mode 0400. The key never leaves the cluster, and a Secret without `id_rsa` fails the pod visibly
 * instead of running without credentials.
 */
export function sshKeyVolume(secretName: string) {
  return {
    name: "ssh-key",
    secret: { secretName, defaultMode: 0o400, items: [{ key: SSH_KEY_ITEM, path: SSH_KEY_ITEM }] },
  };
}

/** The Secret the KUD Job's last step writes, Cluster API style: `<cluster>-kubeconfig`, key `value`. */
export function kubeconfigSecretName(cluster: string): string {
  return `${cluster}-kubeconfig`;
}

/**
 * The construct id of a cluster's component chart: `<namespace>.<cluster>.<component>`. Unique in an
 * App holding a whole site, since namespaces and cluster names can't contain dots but can contain
 * dashes (`a-b`/`c` and `a`/`b-c` must not meet).
 */
export function chartId(
  cluster: { readonly namespace: string; readonly name: string },
  component: string,
): string {
  return `${cluster.namespace}.${cluster.name}.${component}`;
}
