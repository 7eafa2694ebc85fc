import { Chart } from "cdk8s";
import { KubeObject } from "./kube-object.ts";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import { kudRoles, type InventoryNode } from "../synth/hosts-ini.ts";
import { bpaObjectNames } from "../synth/names.ts";
import type { BpaRender } from "../synth/plan/render-plan.ts";
import type { Package } from "../synth/model/bpa.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import {
  NOBODY,
  SSH_KEY_ITEM,
  sshKeyVolume,
  SYNC_WAVES,
  clusterChartProps,
  clusterLabels,
  hashedJob,
  kubeconfigSecretName,
  nobodyPodSecurityContext,
  unprivilegedContainerSecurityContext,
  waveAnnotations,
} from "./metadata.ts";

/** Props of {@link SoftwareChart}: the cluster, its Software CR, and the site settings the Job uses. */
export interface SoftwareChartProps {
  /** The cluster's plan: the hosts to install on. */
  readonly cluster: BpaRender;
  /** The packages to install. */
  readonly software: NonNullable<BpaRender["software"]>;
  /** The software installer's image. */
  readonly images: Pick<SiteSettings["images"], "softwareInstaller">;
  /** Name of the Secret holding the SSH private key (`id_rsa`) the Job logs in with. */
  readonly sshKeySecret: SiteSettings["sshKeySecret"];
  /** Pull policy, hostNetwork and backoffLimit of the Job. */
  readonly job: SiteSettings["job"];
}

/** Where the Job mounts the ConfigMap with the script and its data files. */
const SOFTWARE_DIR = "/opt/metalsynth/software";
/** Where the Job mounts the installer's kubeconfig Secret, only to wait for it (see the volume). */
const KUD_DONE_DIR = "/run/metalsynth/kud-done";
/** Where the Job mounts the SSH key Secret. */
const SSH_DIR = "/opt/metalsynth/ssh";

/**
 * The script the software Job runs, identical for every cluster: hosts and packages are data files
 * beside it, one item per line, and each item becomes exactly one argument. The paths can be moved
 * with environment variables so tests can run it against a fake `ssh`; the Job sets none.
 */
export const INSTALL_PACKAGES_SCRIPT = `#!/bin/sh
# Installs a Software CR's Debian packages on its cluster's hosts (metalsynth, SPEC 4.1).
# Nothing from a CR is parsed as code here: every host and package is read as data and passed on
# as exactly one argument.
set -eu

data=\${SOFTWARE_DATA_DIR:-${SOFTWARE_DIR}}
key=\${SSH_KEY_FILE:-${SSH_DIR}/${SSH_KEY_ITEM}}
failed=0

refuse() {
  printf 'refusing %s: %s is not %s\\n' "$1" "$2" "$3" >&2
  exit 2
}

# check_lines <file> package|host
# ssh joins its arguments into one command line that the remote shell parses again, so packages are
# held to the Debian name[=version] alphabet (and single-quoted below) and hosts to IP characters,
# all before the first connection: a bad line changes no host. Synth validated them already.
check_lines() {
  while IFS= read -r item || [ -n "$item" ]; do
    [ -n "$item" ] || continue
    if [ "$2" = package ]; then
      case $item in -* | *[!A-Za-z0-9.+:=~-]*) refuse "$1" "$item" "a Debian name[=version]" ;; esac
    else
      case $item in *[!0-9A-Fa-f.:]*) refuse "$1" "$item" "an IP address" ;; esac
    fi
  done <"$data/$1"
}

remote() {
  target=$1
  shift
  # Host keys are not pinned (upstream BPA ignored them too): the hosts were provisioned moments ago.
  ssh -n -i "$key" -o BatchMode=yes -o ConnectTimeout=30 -o StrictHostKeyChecking=no \\
    -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "root@$target" "$@"
}

# install_role <role> <hosts file> <packages file>
install_role() {
  role=$1
  hosts=$data/$2
  packages=$data/$3
  set --
  while IFS= read -r package || [ -n "$package" ]; do
    if [ -n "$package" ]; then set -- "$@" "'$package'"; fi
  done <"$packages"
  [ "$#" -gt 0 ] || return 0
  while IFS= read -r host || [ -n "$host" ]; do
    [ -n "$host" ] || continue
    printf '%s: installing %s %s package(s)\\n' "$host" "$#" "$role"
    if remote "$host" apt-get update && remote "$host" DEBIAN_FRONTEND=noninteractive apt-get install -y -- "$@"; then
      printf '%s: done\\n' "$host"
    else
      printf '%s: installing %s packages failed\\n' "$host" "$role" >&2
      failed=1
    fi
  done <"$hosts"
}

check_lines master-packages package
check_lines worker-packages package
check_lines masters host
check_lines workers host
# Every host is tried; the Job fails at the end if any host failed.
install_role master masters master-packages
install_role worker workers worker-packages
exit "$failed"
`;

// The alphabet the script accepts; synth's package rules are stricter. Checked here too so a bug
// upstream of the chart fails the render instead of producing a Job that refuses to run.
const PACKAGE_PART = /^[A-Za-z0-9][A-Za-z0-9.+:~-]*$/;

/**
 * The Software CR's installer (docs/contract.md §4.1): ConfigMap `<cluster>-software` with the package lists,
 * the host lists and the install script, and Job `software-<cluster>-<hash8>` that runs
 * `apt-get install -y -- name[=version]…` on every master and worker over SSH with the site's key.
 * Masters get the master packages, workers the worker packages, a host in both roles both; a
 * cluster without workers installs the worker packages on its masters (they are its workers).
 */
export class SoftwareChart extends Chart {
  /** `software-<cluster>-<hash8>`: changes whenever the packages, hosts or settings change. */
  readonly jobName: string;

  constructor(scope: Construct, id: string, props: SoftwareChartProps) {
    const { cluster, software, images, sshKeySecret, job } = props;
    super(scope, id, clusterChartProps(cluster));

    const name = cluster.name;
    const configMapName = bpaObjectNames(name).software;
    const annotations = waveAnnotations(SYNC_WAVES.software);
    const roles = kudRoles(cluster.masters, cluster.workers);
    const data = {
      "install-packages.sh": INSTALL_PACKAGES_SCRIPT,
      "master-packages": packageLines(software.masterPackages),
      "worker-packages": packageLines(software.workerPackages),
      masters: addressLines(roles.masters),
      workers: addressLines(roles.workers),
    };

    const jobSpec: k8s.JobSpec = {
      // No ttlSecondsAfterFinished: the GitOps agent would re-create the Job and install again.
      backoffLimit: job.backoffLimit,
      template: {
        metadata: { labels: clusterLabels(name) },
        spec: {
          automountServiceAccountToken: false,
          hostNetwork: job.hostNetwork,
          restartPolicy: "Never",
          securityContext: {
            ...nobodyPodSecurityContext(),
            // Makes the 0400 root-owned key group-readable (0440) for nobody; OpenSSH checks the mode
            // only of keys owned by the user running it.
            fsGroup: NOBODY,
          },
          containers: [
            {
              name: "install-packages",
              image: images.softwareInstaller,
              imagePullPolicy: job.imagePullPolicy,
              // A file, not `sh -c`: the script is static and reads every cluster value as data.
              command: ["/bin/sh", `${SOFTWARE_DIR}/install-packages.sh`],
              // ssh wants a home; nobody's does not exist.
              env: [{ name: "HOME", value: "/tmp" }],
              securityContext: unprivilegedContainerSecurityContext(),
              resources: {
                requests: { cpu: k8s.Quantity.fromString("50m"), memory: k8s.Quantity.fromString("64Mi") },
              },
              volumeMounts: [
                { name: "software", mountPath: SOFTWARE_DIR, readOnly: true },
                { name: "ssh-key", mountPath: SSH_DIR, readOnly: true },
                { name: "tmp", mountPath: "/tmp" },
                { name: "kud-done", mountPath: KUD_DONE_DIR, readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: "software", configMap: { name: configMapName } },
            sshKeyVolume(sshKeySecret),
            { name: "tmp", emptyDir: {} },
            // The gate that orders this Job after the installer under any GitOps agent (Flux has no
            // sync waves): the kubelet does not start a pod until its Secret volumes exist, and the
            // kubeconfig Secret exists only once KUD has succeeded. Mode 0000: the file is never read.
            {
              name: "kud-done",
              secret: {
                secretName: kubeconfigSecretName(name),
                defaultMode: 0,
                items: [{ key: "value", path: "admin.conf" }],
              },
            },
          ],
        },
      },
    };

    const hashed = hashedJob("software", cluster, jobSpec, { [configMapName]: data });
    this.jobName = hashed.name;
    new KubeObject(
      this,
      "configmap",
      k8s.KubeConfigMap.manifest({ metadata: { name: configMapName, annotations }, data }),
    );
    new KubeObject(this, "job", { ...hashed.manifest, metadata: { name: hashed.name, annotations } });
  }
}

/** One `name[=version]` per line, in CR order. */
function packageLines(packages: readonly Package[]): string {
  return packages
    .map(({ name, version }) => {
      for (const part of version === undefined ? [name] : [name, version]) {
        if (!PACKAGE_PART.test(part))
          throw new Error(`software: ${JSON.stringify(part)} is not a Debian package name or version`);
      }
      return `${version === undefined ? name : `${name}=${version}`}\n`;
    })
    .join("");
}

/** One IP per line. */
function addressLines(nodes: readonly InventoryNode[]): string {
  return nodes.map((node) => `${node.ip}\n`).join("");
}
