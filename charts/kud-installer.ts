import { Chart } from "cdk8s";
import { KubeObject } from "./kube-object.ts";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import { hostsIni } from "../synth/hosts-ini.ts";
import { bpaObjectNames } from "../synth/names.ts";
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
    const { cluster, images, sshKeySecret, job } = props;
    super(scope, id, clusterChartProps(cluster));
    const { provisioning } = cluster;

    const name = cluster.name;
    const clusterDir = `${MULTI_CLUSTER_DIR}/${name}`;
    const names = bpaObjectNames(name);
    const hostsConfigMap = names.hostsIni;
    const kustomizationConfigMap = names.kubeconfigKustomization;
    const kubeconfigSecret = kubeconfigSecretName(name);
    const identity = names.installer;
    const annotations = waveAnnotations(SYNC_WAVES.installer);

    const hostsConfigMapData = {
      "hosts.ini": hostsIni(cluster.masters, cluster.workers),
    };
    const kustomizationData = {
      "kustomization.yaml": kubeconfigKustomization(cluster.namespace, name, kubeconfigSecret),
    };

    const installer: k8s.Container = {
      name: "kud-installer",
      image: images.kudInstaller,
      imagePullPolicy: job.imagePullPolicy,
      // The image's working directory holds KUD's `installer`, as upstream's `./installer` relied on.
      command: ["./installer"],
      args: [
        "--cluster",
        name,
        ...(provisioning.plugins.length > 0 ? ["--plugins", ...provisioning.plugins] : []),
        ...(provisioning.podSubnet === undefined ? [] : ["--network", provisioning.podSubnet]),
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
        { name: "hosts-ini", mountPath: `${clusterDir}/hosts.ini`, subPath: "hosts.ini", readOnly: true },
        // Only the key file: /root/.ssh stays writable for known_hosts. Mode 0400 replaces upstream's
        // `cp -r /.ssh /root/; chmod -R 600` shell prologue.
        { name: "ssh-key", mountPath: `/root/.ssh/${SSH_KEY_ITEM}`, subPath: SSH_KEY_ITEM, readOnly: true },
      ],
    };

    const storeKubeconfig: k8s.Container = {
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
          subPath: `${name}/artifacts`,
          readOnly: true,
        },
        { name: "tmp", mountPath: "/tmp" },
        { name: "kube-api-access", mountPath: SERVICE_ACCOUNT_DIR, readOnly: true },
      ],
    };

    const jobSpec: k8s.JobSpec = {
      // No ttlSecondsAfterFinished: Argo CD / Flux would re-create a garbage-collected Job from Git
      // and run the installer again.
      backoffLimit: job.backoffLimit,
      template: {
        metadata: { labels: clusterLabels(name) },
        spec: {
          serviceAccountName: identity,
          // The installer never talks to the API server, so the token is projected into the kubectl
          // step only (the same three files the kubelet would mount, for client-go's in-cluster config).
          automountServiceAccountToken: false,
          hostNetwork: job.hostNetwork,
          restartPolicy: "Never",
          securityContext: { seccompProfile: { type: "RuntimeDefault" } },
          initContainers: [installer],
          containers: [storeKubeconfig],
          volumes: [
            { name: "multi-cluster", emptyDir: {} },
            { name: "hosts-ini", configMap: { name: hostsConfigMap } },
            sshKeyVolume(sshKeySecret),
            { name: "kubeconfig-kustomization", configMap: { name: kustomizationConfigMap } },
            { name: "tmp", emptyDir: {} },
            {
              name: "kube-api-access",
              projected: {
                sources: [
                  { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
                  { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                  {
                    downwardApi: {
                      items: [
                        {
                          path: "namespace",
                          fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" },
                        },
                      ],
                    },
                  },
                ],
              },
            },
          ],
        },
      },
    };

    const hashed = hashedJob("kud", cluster, jobSpec, {
      [hostsConfigMap]: hostsConfigMapData,
      [kustomizationConfigMap]: kustomizationData,
    });
    this.jobName = hashed.name;

    new KubeObject(
      this,
      "hosts-ini",
      k8s.KubeConfigMap.manifest({
        metadata: { name: hostsConfigMap, annotations },
        data: hostsConfigMapData,
      }),
    );
    new KubeObject(
      this,
      "kubeconfig-kustomization",
      k8s.KubeConfigMap.manifest({
        metadata: { name: kustomizationConfigMap, annotations },
        data: kustomizationData,
      }),
    );
    new KubeObject(
      this,
      "service-account",
      k8s.KubeServiceAccount.manifest({
        metadata: { name: identity, annotations },
        automountServiceAccountToken: false,
      }),
    );
    new KubeObject(
      this,
      "role",
      k8s.KubeRole.manifest({
        metadata: { name: identity, annotations },
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
      this,
      "role-binding",
      k8s.KubeRoleBinding.manifest({
        metadata: { name: identity, annotations },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: identity },
        subjects: [{ kind: "ServiceAccount", name: identity, namespace: cluster.namespace }],
      }),
    );
    // The label is metadata, outside the hash: adding it renames no Job and re-runs no installer.
    new KubeObject(this, "job", {
      ...hashed.manifest,
      metadata: { name: hashed.name, annotations, labels: { [BPA_JOB_CLUSTER_LABEL]: name } },
    });
  }
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
