import { Chart } from "cdk8s";
import { KubeObject } from "./kube-object.ts";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import { hostsIni } from "../synth/hosts-ini.ts";
import { bpaObjectNames, type BpaObjectNames } from "../synth/names.ts";
import type { BpaRender } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { toYaml } from "../synth/codec/yaml-output.ts";
import {
  SSH_KEY_ITEM,
  sshKeyVolume,
  SYNC_WAVES,
  clusterChartProps,
  clusterLabels,
  hashedJob,
  kubeconfigSecretName,
  unprivilegedContainerSecurityContext,
  waveAnnotations,
} from "./metadata.ts";

/** Props of {@link KudInstallerChart}: the cluster, and the site settings the installer uses. */
export interface KudInstallerChartProps {
  /** The cluster's plan; its Provisioning supplies the KUD plugins and the pod subnet. */
  readonly cluster: BpaRender;
  /** The installer's image and the kubectl image of the step that stores the kubeconfig. */
  readonly images: Pick<SiteSettings["images"], "kudInstaller" | "kubectl">;
  /** Name of the Secret holding the SSH private key (`id_rsa`) KUD logs in with. */
  readonly sshKeySecret: SiteSettings["sshKeySecret"];
  /** Pull policy, hostNetwork, privileged and backoffLimit of the Job. */
  readonly job: SiteSettings["job"];
}

/** Where KUD's installer looks for a cluster's hosts.ini and writes its artifacts (upstream layout). */
const MULTI_CLUSTER_DIR = "/opt/kud/multi-cluster";
/**
 * Label upstream BPA puts on its KUD Job, valued with the cluster name: tools written for BPA select
 * the Job by it (`kubectl get jobs -l cluster=<name>`), and BPA's controller test asserts it.
 */
const BPA_JOB_CLUSTER_LABEL = "cluster";
/** Field manager of the server-side apply that stores the kubeconfig. */
const KUBECONFIG_FIELD_MANAGER = "metalsynth-kud";

/** The kubectl step's working directory: its kustomization plus the installer's artifacts below it. */
const KUBECONFIG_DIR = "/kubeconfig";
/** Where kubectl finds its in-cluster credentials (client-go's fixed path). */
const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The KUD installer of a BPA cluster (docs/contract.md §4.1): hosts.ini in a ConfigMap, the installer Job, and the
 * least-privilege identity its second step uses to store the cluster's kubeconfig as a Secret.
 * Installer as init container, then `kubectl apply --server-side -k`, no shell (decision 0006).
 */
export class KudInstallerChart extends Chart {
  /** `kud-<cluster>-<hash8>`: changes whenever anything the Job runs with changes. */
  readonly jobName: string;

  constructor(scope: Construct, id: string, props: KudInstallerChartProps) {
    const { cluster } = props;
    super(scope, id, clusterChartProps(cluster));
    const names = bpaObjectNames(cluster.name);
    const kubeconfigSecret = kubeconfigSecretName(cluster.name);
    const annotations = waveAnnotations(SYNC_WAVES.installer);
    const hostsIniData = { "hosts.ini": hostsIni(cluster.masters, cluster.workers) };
    const kustomizationData = {
      "kustomization.yaml": kubeconfigKustomization(cluster.namespace, cluster.name, kubeconfigSecret),
    };

    const hashed = hashedJob("kud", cluster, kudJobSpec(props, names), {
      [names.hostsIni]: hostsIniData,
      [names.kubeconfigKustomization]: kustomizationData,
    });
    this.jobName = hashed.name;

    const configMap = (configMapId: string, name: string, data: Record<string, string>) =>
      new KubeObject(
        this,
        configMapId,
        k8s.KubeConfigMap.manifest({ metadata: { name, annotations }, data }),
      );
    configMap("hosts-ini", names.hostsIni, hostsIniData);
    configMap("kubeconfig-kustomization", names.kubeconfigKustomization, kustomizationData);
    addKubeconfigWriter(this, {
      name: names.installer,
      namespace: cluster.namespace,
      kubeconfigSecret,
      annotations,
    });
    // The label is metadata, outside the hash: adding it renames no Job and re-runs no installer.
    new KubeObject(this, "job", {
      ...hashed.manifest,
      metadata: { name: hashed.name, annotations, labels: { [BPA_JOB_CLUSTER_LABEL]: cluster.name } },
    });
  }
}

/** The Job's spec: the installer as init container, then the step that stores the kubeconfig. */
function kudJobSpec(props: KudInstallerChartProps, names: BpaObjectNames): k8s.JobSpec {
  const { job } = props;
  return {
    // No ttlSecondsAfterFinished: Argo CD / Flux would re-create a garbage-collected Job from Git
    // and run the installer again.
    backoffLimit: job.backoffLimit,
    template: {
      metadata: { labels: clusterLabels(props.cluster.name) },
      spec: {
        serviceAccountName: names.installer,
        // The installer never talks to the API server, so the token is projected into the kubectl
        // step only (the same three files the kubelet would mount, for client-go's in-cluster config).
        automountServiceAccountToken: false,
        hostNetwork: job.hostNetwork,
        restartPolicy: "Never",
        securityContext: { seccompProfile: { type: "RuntimeDefault" } },
        initContainers: [installerContainer(props)],
        containers: [storeKubeconfigContainer(props)],
        volumes: [
          { name: "multi-cluster", emptyDir: {} },
          { name: "hosts-ini", configMap: { name: names.hostsIni } },
          sshKeyVolume(props.sshKeySecret),
          { name: "kubeconfig-kustomization", configMap: { name: names.kubeconfigKustomization } },
          { name: "tmp", emptyDir: {} },
          KUBE_API_ACCESS_VOLUME,
        ],
      },
    },
  };
}

/** KUD's installer: kubespray over SSH to the cluster's hosts, from hosts.ini and the site's key. */
function installerContainer(props: KudInstallerChartProps): k8s.Container {
  const { cluster, images, job } = props;
  const { plugins, podSubnet } = cluster.provisioning;
  return {
    name: "kud-installer",
    image: images.kudInstaller,
    imagePullPolicy: job.imagePullPolicy,
    // The image's working directory holds KUD's `installer`, as upstream's `./installer` relied on.
    command: ["./installer"],
    args: [
      "--cluster",
      cluster.name,
      ...(plugins.length > 0 ? ["--plugins", ...plugins] : []),
      ...(podSubnet === undefined ? [] : ["--network", podSubnet]),
    ],
    // KUD runs kubespray as root inside the container: it reads /root/.ssh/id_rsa and writes its
    // inventory, logs and artifacts under /opt/kud and /root, so neither non-root nor a read-only
    // root filesystem fits. It needs no privileges on the node running the pod (upstream ran it
    // privileged): all its work happens over SSH on the cluster's hosts, and hostNetwork is only
    // there to reach them. `privileged` stays a site setting for installers that do need it.
    securityContext: {
      runAsUser: 0,
      runAsNonRoot: false,
      privileged: job.privileged,
      // The API server rejects allowPrivilegeEscalation: false together with privileged: true.
      ...(job.privileged ? {} : { allowPrivilegeEscalation: false }),
      readOnlyRootFilesystem: false,
    },
    resources: {
      requests: { cpu: k8s.Quantity.fromString("500m"), memory: k8s.Quantity.fromString("1Gi") },
    },
    volumeMounts: [
      { name: "multi-cluster", mountPath: MULTI_CLUSTER_DIR },
      {
        name: "hosts-ini",
        mountPath: `${MULTI_CLUSTER_DIR}/${cluster.name}/hosts.ini`,
        subPath: "hosts.ini",
        readOnly: true,
      },
      // Only the key file: /root/.ssh stays writable for known_hosts. Mode 0400 replaces upstream's
      // `cp -r /.ssh /root/; chmod -R 600` shell prologue.
      { name: "ssh-key", mountPath: `/root/.ssh/${SSH_KEY_ITEM}`, subPath: SSH_KEY_ITEM, readOnly: true },
    ],
  };
}

/** The second step: `kubectl apply --server-side -k` of the kustomization that makes the kubeconfig Secret. */
function storeKubeconfigContainer(props: KudInstallerChartProps): k8s.Container {
  const { cluster, images, job } = props;
  return {
    name: "store-kubeconfig",
    image: images.kubectl,
    imagePullPolicy: job.imagePullPolicy,
    command: ["kubectl"],
    args: [
      "apply",
      // Create-or-update, authorised by the Secret's name (decision 0006).
      "--server-side",
      `--field-manager=${KUBECONFIG_FIELD_MANAGER}`,
      "--force-conflicts",
      "--cache-dir=/tmp/kube-cache",
      `--kustomize=${KUBECONFIG_DIR}`,
    ],
    // Root without capabilities: admin.conf is written by the root installer and may be owner-only,
    // so only uid 0 can read it; with every capability dropped, uid 0 gets no further.
    securityContext: { runAsUser: 0, runAsNonRoot: false, ...unprivilegedContainerSecurityContext() },
    resources: {
      requests: { cpu: k8s.Quantity.fromString("50m"), memory: k8s.Quantity.fromString("64Mi") },
    },
    volumeMounts: [
      {
        name: "kubeconfig-kustomization",
        mountPath: `${KUBECONFIG_DIR}/kustomization.yaml`,
        subPath: "kustomization.yaml",
        readOnly: true,
      },
      {
        name: "multi-cluster",
        mountPath: `${KUBECONFIG_DIR}/artifacts`,
        subPath: `${cluster.name}/artifacts`,
        readOnly: true,
      },
      { name: "tmp", mountPath: "/tmp" },
      { name: "kube-api-access", mountPath: SERVICE_ACCOUNT_DIR, readOnly: true },
    ],
  };
}

/** The service account token, cluster CA and namespace the kubelet would mount, for the kubectl step alone. */
const KUBE_API_ACCESS_VOLUME: k8s.Volume = {
  name: "kube-api-access",
  projected: {
    sources: [
      { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      {
        downwardApi: {
          items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
        },
      },
    ],
  },
};

/** What {@link addKubeconfigWriter} needs. */
interface KubeconfigWriterProps {
  /** Name of the ServiceAccount, Role and RoleBinding (`kud-<cluster>`). */
  readonly name: string;
  /** The cluster's namespace, the ServiceAccount's. */
  readonly namespace: string;
  /** The one Secret the identity may write. */
  readonly kubeconfigSecret: string;
  /** The component's annotations. */
  readonly annotations: Record<string, string>;
}

/**
 * The identity the kubectl step runs as: a ServiceAccount with no token mounted by default, and a
 * Role that may create and update the kubeconfig Secret alone.
 */
function addKubeconfigWriter(scope: Construct, props: KubeconfigWriterProps): void {
  const { name, namespace, kubeconfigSecret, annotations } = props;
  new KubeObject(
    scope,
    "service-account",
    k8s.KubeServiceAccount.manifest({ metadata: { name, annotations }, automountServiceAccountToken: false }),
  );
  new KubeObject(
    scope,
    "role",
    k8s.KubeRole.manifest({
      metadata: { name, annotations },
      rules: [
        {
          apiGroups: [""],
          resources: ["secrets"],
          resourceNames: [kubeconfigSecret],
          // A plain create can't be limited by name; server-side apply's PATCH can (decision 0006).
          verbs: ["create", "get", "patch", "update"],
        },
      ],
    }),
  );
  new KubeObject(
    scope,
    "role-binding",
    k8s.KubeRoleBinding.manifest({
      metadata: { name, annotations },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    }),
  );
}

/**
 * The kustomization the kubectl step applies: a Secret `<cluster>-kubeconfig` whose key `value` holds
 * admin.conf (the Cluster API convention), with the fixed name (no content-hash suffix) that
 * consumers look up.
 */
function kubeconfigKustomization(namespace: string, cluster: string, secretName: string): string {
  return toYaml({
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    namespace,
    secretGenerator: [
      {
        name: secretName,
        type: "Opaque",
        files: ["value=artifacts/admin.conf"],
        options: { disableNameSuffixHash: true, labels: clusterLabels(cluster) },
      },
    ],
  });
}
