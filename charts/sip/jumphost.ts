import { Chart } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import type { AuthorizedKey, ImageReference } from "../../synth/checked.ts";
import type { SipRender } from "../../synth/plan/render-plan.ts";
import type { SiteSettings } from "../../synth/schema/settings.ts";
import { SYNC_WAVES, clusterChartProps, waveAnnotations } from "../metadata.ts";
import { SERVICE_NAME_PREFIXES, serviceObjectName } from "../../synth/names.ts";
import { servedHosts, serviceWorkload, type ServedHost } from "./workload.ts";

/** Props of {@link JumpHostChart}. */
export interface JumpHostChartProps {
  /** The SIPCluster's plan; its `jumpHost` services are rendered. */
  readonly cluster: SipRender;
  /** `images.jumpHost` is the image of a service that names none. */
  readonly settings: SiteSettings;
}

/** One `spec.services.jumpHost[]` entry of a SIPCluster. */
type JumpHostService = NonNullable<SipRender["sip"]["services"]["jumpHost"]>[number];

/**
 * Upstream SIP's jump host layout (airshipit/sip `pkg/services/jumphost.go` and its image): operators
 * log in as `ubuntu`, whose `authorized_keys` sshd reads; SIP's data lives under `/etc/opt/sip`.
 */
const JUMP_HOST_PATHS = {
  authorizedKeys: "/home/ubuntu/.ssh/authorized_keys",
  // The system-wide client config, not ~/.ssh/config as upstream: it applies to every login, and
  // OpenSSH reports identity files missing from it only at debug level (see IDENTITY_FILES).
  sshConfig: "/etc/ssh/ssh_config",
  hosts: "/etc/opt/sip/hosts",
  nodeSshKeys: "/etc/opt/sip/ssh-private-keys",
  bmcCredentials: "/etc/opt/sip/bmc",
} as const;

/**
 * Key names of the `nodeSSHPrivateKeys` Secret that ssh_config offers as identities. metalsynth
 * never reads a Secret, so it cannot list the keys the way upstream SIP did at run time; OpenSSH has
 * no wildcard for `IdentityFile`. These are upstream's sample key (`key`) and OpenSSH's own default
 * names; a key under any other name is mounted too and usable with `ssh -i`.
 */
const IDENTITY_FILES = ["key", "id_ed25519", "id_ecdsa", "id_rsa"] as const;

/** The `ubuntu` user's group in upstream's image (`useradd -m ubuntu`): it may read the key files. */
const LOGIN_GROUP = 1000;
/** Metal3's BMC credentials Secret keys. */
const BMC_SECRET_KEYS = ["username", "password"] as const;

/**
 * sshd runs as root (it switches to the user who logs in) and binds port 22; these are the only
 * privileges it uses of the runtime's defaults: switching user and group, the privilege-separation
 * chroot, handing the pty to the user, signalling the session on logout, and the audit record of a
 * login. `NET_RAW`, `MKNOD`, `SETFCAP`, `SETPCAP` and `FSETID` are dropped.
 */
const SSHD_CAPABILITIES = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "KILL",
  "NET_BIND_SERVICE",
  "SETGID",
  "SETUID",
  "SYS_CHROOT",
];

/**
 * A SIPCluster's SSH jump hosts (docs/contract.md §4.2): per `jumpHost` service, ConfigMap `jumphost-<cluster>`
 * (`-<index>` from the second on) with `authorized_keys`, `ssh_config` and the hosts table, a
 * Deployment of the jump host image, and a NodePort Service 22 → `nodePort`.
 *
 * Every member is listed, standby hosts included: the jump host is how operators reach and
 * power-cycle spares too. Private keys are mounted from their Secrets by reference only:
 * `nodeSSHPrivateKeys` as a whole, and each host's BMC credentials (`username`, `password`) under
 * `<bmc dir>/<host>/`. A pod can mount only Secrets of its own namespace, so the BMC Secrets are
 * looked up by the BMH's `credentialsName` in the SIPCluster's namespace and are optional: upstream
 * SIP copied their values into a Secret of its own, which would put them in Git here. Replicate them
 * into the SIPCluster's namespace to enable power management; without them the jump host still
 * serves SSH.
 */
export class JumpHostChart extends Chart {
  constructor(scope: Construct, id: string, props: JumpHostChartProps) {
    const { cluster, settings } = props;
    super(scope, id, clusterChartProps(cluster));
    (cluster.sip.services.jumpHost ?? []).forEach((service, index) => {
      const name = serviceObjectName(SERVICE_NAME_PREFIXES.jumpHost, cluster.name, index);
      const hosts = servedHosts(cluster, service.nodeInterfaceId);
      serviceWorkload(this, {
        name,
        app: "jumphost",
        cluster,
        annotations: waveAnnotations(SYNC_WAVES.services),
        configData: {
          authorized_keys: authorizedKeys(service.sshAuthorizedKeys ?? []),
          hosts: hostsTable(hosts),
          ssh_config: sshConfig(name, cluster.key, hosts),
        },
        // One pod: an interactive host where sessions, shell history and known_hosts stay put.
        replicas: 1,
        podSpec: () => jumpHostPod(service, service.image ?? settings.images.jumpHost, name, hosts),
        ports: [{ name: "ssh", port: 22, nodePort: service.nodePort }],
      });
    });
  }
}

/** One key per line, as sshd reads them; each key is one line already (an `AuthorizedKey`). */
function authorizedKeys(keys: readonly AuthorizedKey[]): string {
  return keys.map((key) => `${key}\n`).join("");
}

/**
 * The hosts table (`/etc/opt/sip/hosts`): JSON like upstream's, which its tools read with `jq`, with
 * every member's name, BareMetalHost, role, address on the service's interface, BMC address and the
 * directory its BMC credentials are mounted in (never the credentials).
 */
function hostsTable(hosts: readonly ServedHost[]): string {
  const rows = hosts.map(({ member, name, ip }) => ({
    name,
    bareMetalHost: member.host.id,
    role: member.role,
    standby: member.standby,
    ip,
    ...(member.host.bmc && {
      bmc: {
        address: member.host.bmc.address,
        ...(member.host.bmc.credentialsName !== undefined && {
          credentials: `${JUMP_HOST_PATHS.bmcCredentials}/${name}`,
        }),
      },
    }),
  }));
  return `${JSON.stringify(rows, null, 2)}\n`;
}

/**
 * ssh_config: `ssh <host>` reaches each member by its address on the service's interface (so it works
 * without the pod's /etc/hosts too), with the node keys as identities.
 */
function sshConfig(name: string, cluster: string, hosts: readonly ServedHost[]): string {
  const lines = [`# ${name} (SIPCluster ${cluster}): written by metalsynth (SPEC 4.2), do not edit.`];
  for (const host of hosts) lines.push(`Host ${host.name}`, `  HostName ${host.ip}`, "");
  lines.push(
    "Host *",
    ...IDENTITY_FILES.map((file) => `  IdentityFile ${JUMP_HOST_PATHS.nodeSshKeys}/${file}`),
  );
  return `${lines.join("\n")}\n`;
}

function jumpHostPod(
  service: JumpHostService,
  image: ImageReference,
  configMap: string,
  hosts: readonly ServedHost[],
): k8s.PodSpec {
  const ssh: k8s.TcpSocketAction = { port: k8s.IntOrString.fromString("ssh") };
  const withCredentials = hosts.flatMap((host) =>
    host.member.host.bmc?.credentialsName === undefined
      ? []
      : [{ name: host.name, secret: host.member.host.bmc.credentialsName }],
  );
  // Key files are root-owned, mode 0440, group LOGIN_GROUP (fsGroup): the login user can read them,
  // and OpenSSH accepts a key with group access when the key's owner is someone else.
  const secretMode = 0o440;
  return {
    automountServiceAccountToken: false,
    securityContext: { fsGroup: LOGIN_GROUP, seccompProfile: { type: "RuntimeDefault" } },
    hostAliases: hostAliases(hosts),
    containers: [
      {
        name: "jumphost",
        image,
        // Upstream's image is a general-purpose login host: sshd writes its runtime state and the
        // login records, and users write to their home, so the root filesystem stays writable.
        securityContext: {
          runAsUser: 0,
          runAsNonRoot: false,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: false,
          capabilities: { drop: ["ALL"], add: SSHD_CAPABILITIES },
        },
        // `bmc.proxy: false` (the default) keeps BMC traffic off any proxy the image configures.
        // Upstream meant to set this but assigned it to a copy of the container.
        ...(service.bmc?.proxy === true
          ? {}
          : {
              env: [
                { name: "NO_PROXY", value: "*" },
                { name: "no_proxy", value: "*" },
              ],
            }),
        ports: [{ name: "ssh", containerPort: 22 }],
        readinessProbe: { tcpSocket: ssh, initialDelaySeconds: 5, periodSeconds: 10 },
        livenessProbe: { tcpSocket: ssh, initialDelaySeconds: 15, periodSeconds: 20 },
        resources: {
          requests: { cpu: k8s.Quantity.fromString("50m"), memory: k8s.Quantity.fromString("64Mi") },
          limits: { memory: k8s.Quantity.fromString("512Mi") },
        },
        volumeMounts: [
          {
            name: "config",
            mountPath: JUMP_HOST_PATHS.authorizedKeys,
            subPath: "authorized_keys",
            readOnly: true,
          },
          { name: "config", mountPath: JUMP_HOST_PATHS.sshConfig, subPath: "ssh_config", readOnly: true },
          { name: "config", mountPath: JUMP_HOST_PATHS.hosts, subPath: "hosts", readOnly: true },
          { name: "node-ssh-keys", mountPath: JUMP_HOST_PATHS.nodeSshKeys, readOnly: true },
          ...(withCredentials.length === 0
            ? []
            : [{ name: "bmc-credentials", mountPath: JUMP_HOST_PATHS.bmcCredentials, readOnly: true }]),
        ],
      },
    ],
    volumes: [
      // sshd's StrictModes refuses an authorized_keys that others may write; 0444 is read-only for all.
      { name: "config", configMap: { name: configMap, defaultMode: 0o444 } },
      { name: "node-ssh-keys", secret: { secretName: service.nodeSSHPrivateKeys, defaultMode: secretMode } },
      ...(withCredentials.length === 0
        ? []
        : [
            {
              name: "bmc-credentials",
              projected: {
                defaultMode: secretMode,
                sources: withCredentials.map((credentials) => ({
                  secret: {
                    name: credentials.secret,
                    optional: true,
                    items: BMC_SECRET_KEYS.map((key) => ({ key, path: `${credentials.name}/${key}` })),
                  },
                })),
              },
            },
          ]),
    ],
  };
}

/**
 * One `hostAliases` entry per address, naming every host that has it: the API server keys the list
 * by `ip`, so server-side apply (Flux, Argo CD) refuses two entries with the same address, which two
 * hosts sharing a service address (the upstream SIP sample's do) would otherwise give.
 */
function hostAliases(hosts: readonly ServedHost[]): k8s.HostAlias[] {
  const byAddress = new Map<string, string[]>();
  for (const host of hosts) byAddress.set(host.ip, [...(byAddress.get(host.ip) ?? []), host.name]);
  return [...byAddress].map(([ip, hostnames]) => ({ ip, hostnames }));
}
