/**
 * A small site for the trust-boundary fuzz (issue #21): one SIPCluster with all four services over
 * five hosts with networkData Secrets, and one BPA cluster (Provisioning + Software) over two hosts
 * pinned by MAC. Every value of it that can reach a rendered text file is a field of
 * {@link SiteValues}, so the fuzz can replace any of them and {@link plannedReadings} can say what
 * the readers of the rendered files must find. The counts ask for every host of each role, so a
 * site that plans at all plans exactly these hosts.
 */
import { parseAllDocuments, stringify } from "yaml";
import { DEFAULT_SETTINGS } from "../../synth/schema/settings.ts";
import { TEST_CA } from "./auth.ts";

/** A host of the site as the fuzz sees it: its BareMetalHost name and its address. */
export interface SiteHost {
  readonly name: string;
  /** The address: networkData `ip_address` (SIP hosts) or the NIC's `ip` (BPA hosts). */
  readonly ip: string;
}

/** A SIP host: also its BMC address, which the jump host's hosts table lists. */
export interface SipHost extends SiteHost {
  readonly bmc: string;
}

/** A BPA host: also the MAC of its NIC, which the Provisioning CR names. */
export interface BpaHost extends SiteHost {
  readonly mac: string;
}

/** A Software package, `name` or `name` at `version`. */
export interface SitePackage {
  readonly name: string;
  readonly version?: string;
}

/** The values of the auth service: one client, one GitHub connector, one static user and binding. */
export interface AuthValues {
  readonly image: string;
  /** `clusterIP`: the issuer's host. */
  readonly address: string;
  readonly certificateAuthority: string;
  readonly caSecret: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly connectorId: string;
  readonly connectorName: string;
  /** The GitHub connector's `clientID`, a value of its free-form config. */
  readonly connectorClientId: string;
  /** The Secret and key its `clientSecret` comes from. */
  readonly connectorSecret: { readonly name: string; readonly key: string };
  readonly userEmail: string;
  readonly userName: string;
  /** The user's group, bound in the tenant to {@link clusterRole}. */
  readonly group: string;
  readonly clusterRole: string;
  /** The prefix of both the username and the groups. */
  readonly prefix: string;
  readonly passwordSecret: { readonly name: string; readonly key: string };
}

/** Every value of the site that reaches a rendered file. */
export interface SiteValues {
  /** `metadata.namespace` of every BareMetalHost and networkData Secret. */
  readonly hostNamespace: string;
  /** The ControlPlane hosts (three) and the Worker hosts (two) of the SIPCluster. */
  readonly controlPlane: readonly SipHost[];
  readonly workers: readonly SipHost[];
  /** The label value the SIP roles select by, on the hosts and in the selector alike. */
  readonly controlPlaneFlavor: string;
  readonly workerFlavor: string;
  /** The network id of the address in the networkData Secrets and the services' `nodeInterfaceId`. */
  readonly interfaceId: string;
  readonly sipNamespace: string;
  readonly sipName: string;
  readonly loadBalancerImage: string;
  readonly jumpHostImage: string;
  readonly sshAuthorizedKeys: readonly string[];
  readonly nodeSshPrivateKeys: string;
  /** The Provisioning's (and Software's) namespace, and its `cluster` label and name. */
  readonly bpaNamespace: string;
  readonly cluster: string;
  /** The node labels of the master and the worker, and the hosts they are pinned to by MAC. */
  readonly masterLabel: string;
  readonly workerLabel: string;
  readonly master: BpaHost;
  readonly worker: BpaHost;
  /** The MACs the Provisioning names: the hosts' own, unless the fuzz changed one side only. */
  readonly masterMac: string;
  readonly workerMac: string;
  readonly kudPlugins: readonly string[];
  readonly masterPackages: readonly SitePackage[];
  /**
   * Labels and annotations of the SIPCluster and the Provisioning besides the `cluster` label: each
   * cluster's `specs.yaml` carries them to the API server, whose client (kubectl) must read them back.
   */
  readonly crLabels: Readonly<Record<string, string>>;
  readonly crAnnotations: Readonly<Record<string, string>>;
  /** The SIPCluster's auth service (issue #39): what reaches Dex, the API server's file and RBAC. */
  readonly auth: AuthValues;
  /** Site settings (metalsynth.yaml). */
  readonly sshKeySecret: string;
  readonly kudInstallerImage: string;
  readonly haproxyImage: string;
}

/** Two ed25519 public keys (of throwaway keys that exist nowhere else). */
export const SITE_KEYS = [
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM8u0Z4+88F1dyoQt/UfAgSmyZCbWngnlNSbqbHOvluv ops@site-a",
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDHXQiN/ZLNvrabC0XxRI4mkS4Cd1FYaXDmKX5n9N+BH oncall@site-a",
] as const;

/** The site before the fuzz changes anything: every value valid, every reader content. */
export const BASELINE: SiteValues = {
  hostNamespace: "metal3",
  controlPlane: [
    { name: "cp-1", ip: "10.41.0.11", bmc: "redfish+https://10.20.0.11/redfish/v1/Systems/1" },
    { name: "cp-2", ip: "10.41.0.12", bmc: "redfish+https://10.20.0.12/redfish/v1/Systems/1" },
    { name: "cp-3", ip: "fd00:41::13", bmc: "ipmi://10.20.0.13:623" },
  ],
  workers: [
    { name: "wk-1", ip: "10.41.0.21", bmc: "redfish+https://10.20.0.21/redfish/v1/Systems/1" },
    { name: "wk-2", ip: "10.41.0.22", bmc: "ipmi://10.20.0.22:623" },
  ],
  controlPlaneFlavor: "control-plane",
  workerFlavor: "worker",
  interfaceId: "oam-ipv4",
  sipNamespace: "edge-sip",
  sipName: "tenant-a",
  loadBalancerImage: "haproxy:2.3.2",
  jumpHostImage: "quay.io/airshipit/jump-host:v2.1.0",
  sshAuthorizedKeys: SITE_KEYS,
  nodeSshPrivateKeys: "tenant-a-ssh-keys",
  bpaNamespace: "edge-a",
  cluster: "cluster-east",
  masterLabel: "master-1",
  workerLabel: "worker-1",
  master: { name: "node-01", ip: "10.10.110.21", mac: "00:c6:14:04:61:01" },
  worker: { name: "node-02", ip: "10.10.110.22", mac: "00:c6:14:04:61:02" },
  masterMac: "00:c6:14:04:61:01",
  workerMac: "00:c6:14:04:61:02",
  kudPlugins: ["multus", "ovn4nfv"],
  masterPackages: [{ name: "htop" }, { name: "jq", version: "1.6-2.1ubuntu3" }],
  crLabels: { team: "edge-ops" },
  crAnnotations: { "metalsynth.io/note": "racked in row 4" },
  auth: {
    image: "ghcr.io/dexidp/dex:v2.45.1",
    address: "10.41.0.5",
    certificateAuthority: TEST_CA,
    caSecret: "tenant-a-auth-ca",
    clientId: "kubectl",
    redirectUri: "http://localhost:8000",
    connectorId: "github",
    connectorName: "GitHub",
    connectorClientId: "3f9c2e7a4b1d5e6f0a8b",
    connectorSecret: { name: "tenant-a-github-oauth", key: "client-secret" },
    userEmail: "break-glass@site-a.example.com",
    userName: "Break glass",
    group: "tenant-a-admins",
    clusterRole: "cluster-admin",
    prefix: "oidc:",
    passwordSecret: { name: "tenant-a-auth-users", key: "break-glass" },
  },
  sshKeySecret: "ssh-key-secret",
  kudInstallerImage: "integratedcloudnative/bpa-operator-kud:v0.4.0",
  haproxyImage: "haproxy:2.3.2",
};

/** The load balancer's worker ports (a range of two). */
export const WORKER_PORTS = [30100, 30101] as const;
/** The port of the control-plane load balancer's backends. */
export const API_SERVER_PORT = 6443;
/** The auth service's NodePort, the issuer's port. */
export const AUTH_NODE_PORT = 30556;

/** The site's input files, relative path → text, as a person (or `kubectl get -o yaml`) writes them. */
export function siteFiles(values: SiteValues): Map<string, string> {
  const sipHosts = [
    ...values.controlPlane.map((host, index) => ({ host, flavor: values.controlPlaneFlavor, index })),
    ...values.workers.map((host, index) => ({ host, flavor: values.workerFlavor, index: index + 3 })),
  ];
  const bmhs = [
    ...sipHosts.map(({ host, flavor, index }) => ({
      apiVersion: "metal3.io/v1alpha1",
      kind: "BareMetalHost",
      metadata: {
        name: host.name,
        namespace: values.hostNamespace,
        labels: { "vino.airshipit.org/flavor": flavor },
      },
      spec: {
        online: true,
        bmc: { address: host.bmc, credentialsName: `bmc-secret-${index}` },
        bootMACAddress: `02:00:00:00:00:${String(index + 10)}`,
        networkData: { name: `networkdata-${index}`, namespace: values.hostNamespace },
      },
      status: {
        provisioning: { state: "provisioned" },
        hardware: {
          cpu: { count: 16 },
          ramMebibytes: 65536,
          nics: [{ name: "eno1", mac: `02:00:00:00:00:${String(index + 10)}`, ip: `172.22.0.${index + 10}` }],
        },
      },
    })),
    ...[values.master, values.worker].map((host) => ({
      apiVersion: "metal3.io/v1alpha1",
      kind: "BareMetalHost",
      metadata: { name: host.name, namespace: values.hostNamespace },
      spec: { online: true, bootMACAddress: host.mac },
      status: {
        provisioning: { state: "provisioned" },
        hardware: {
          cpu: { count: 32 },
          ramMebibytes: 131072,
          nics: [{ name: "ens1f0", mac: host.mac, ip: host.ip }],
        },
      },
    })),
  ];
  // Half the Secrets hold base64 JSON in `data`, half YAML in `stringData`, as sites have both.
  const secrets = sipHosts.map(({ host, index }) => {
    const networkData = {
      links: [{ id: "bond0", type: "bond", bond_links: ["eno1"] }],
      networks: [{ id: values.interfaceId, type: "ipv4", link: "bond0", ip_address: host.ip }],
    };
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: `networkdata-${index}`,
        namespace: values.hostNamespace,
        labels: { "metalsynth.io/network-data": "true" },
      },
      type: "Opaque",
      ...(index % 2 === 0
        ? { data: { networkData: Buffer.from(JSON.stringify(networkData)).toString("base64") } }
        : { stringData: { networkData: yamlDocuments([networkData]) } }),
    };
  });
  const role = (flavor: string, active: number, standby: number) => ({
    labelSelector: { matchLabels: { "vino.airshipit.org/flavor": flavor } },
    count: { active, standby },
  });
  const sipCluster = {
    apiVersion: "airship.airshipit.org/v1",
    kind: "SIPCluster",
    metadata: {
      name: values.sipName,
      namespace: values.sipNamespace,
      labels: values.crLabels,
      annotations: values.crAnnotations,
    },
    spec: {
      nodes: {
        ControlPlane: role(values.controlPlaneFlavor, 2, values.controlPlane.length - 2),
        Worker: role(values.workerFlavor, 1, values.workers.length - 1),
      },
      services: {
        loadBalancerControlPlane: [
          { image: values.loadBalancerImage, nodeInterfaceId: values.interfaceId, nodePort: 30443 },
        ],
        loadBalancerWorker: [
          {
            image: values.loadBalancerImage,
            nodeInterfaceId: values.interfaceId,
            nodePortRange: { start: WORKER_PORTS[0], end: WORKER_PORTS[1] },
          },
        ],
        jumpHost: [
          {
            image: values.jumpHostImage,
            nodeInterfaceId: values.interfaceId,
            nodePort: 30022,
            sshAuthorizedKeys: values.sshAuthorizedKeys,
            nodeSSHPrivateKeys: values.nodeSshPrivateKeys,
          },
        ],
        auth: [
          {
            image: values.auth.image,
            clusterIP: values.auth.address,
            nodePort: AUTH_NODE_PORT,
            caSecret: values.auth.caSecret,
            certificateAuthority: values.auth.certificateAuthority,
            clients: [{ id: values.auth.clientId, redirectURIs: [values.auth.redirectUri] }],
            connectors: [
              {
                type: "github",
                id: values.auth.connectorId,
                name: values.auth.connectorName,
                config: { clientID: values.auth.connectorClientId },
                secretKeyRefs: { clientSecret: values.auth.connectorSecret },
              },
            ],
            staticUsers: [
              {
                email: values.auth.userEmail,
                username: values.auth.userName,
                groups: [values.auth.group],
                passwordHash: values.auth.passwordSecret,
              },
            ],
            claimMappings: {
              username: { prefix: values.auth.prefix },
              groups: { prefix: values.auth.prefix },
            },
            roleBindings: [{ group: values.auth.group, clusterRole: values.auth.clusterRole }],
          },
        ],
      },
    },
  };
  const provisioning = {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: {
      name: values.cluster,
      namespace: values.bpaNamespace,
      labels: { cluster: values.cluster, ...values.crLabels },
      annotations: values.crAnnotations,
    },
    spec: {
      masters: [{ [values.masterLabel]: { "mac-address": values.masterMac } }],
      workers: [{ [values.workerLabel]: { "mac-address": values.workerMac } }],
      KUDPlugins: values.kudPlugins,
      PodSubnet: "10.244.64.0/18",
    },
  };
  const software = {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Software",
    metadata: {
      name: `${values.cluster}-software`,
      namespace: values.bpaNamespace,
      labels: { cluster: values.cluster },
    },
    spec: {
      masterSoftware: values.masterPackages.map((item) =>
        item.version === undefined ? item.name : { [item.name]: { version: item.version } },
      ),
      workerSoftware: [],
    },
  };
  const settings = {
    apiVersion: "metalsynth.io/v1alpha1",
    kind: "SiteSettings",
    images: { kudInstaller: values.kudInstallerImage, haproxy: values.haproxyImage },
    sshKeySecret: values.sshKeySecret,
  };
  return new Map([
    ["metalsynth.yaml", yamlDocuments([settings])],
    ["inventory/hosts.yaml", yamlDocuments(bmhs)],
    ["inventory/networkdata.yaml", yamlDocuments(secrets)],
    ["specs/sipcluster.yaml", yamlDocuments([sipCluster])],
    ["specs/bpa.yaml", yamlDocuments([provisioning, software])],
  ]);
}

/**
 * `objects` as a multi-document YAML file, checked to read back as the same objects: a value the
 * fuzz puts in must reach metalsynth as it is, or a failure would be the writer's, not metalsynth's.
 */
function yamlDocuments(objects: readonly unknown[]): string {
  // The library writes blank-only lines (" \n") as a block scalar that loses their spaces: such a
  // site is written with every multi-line string double-quoted instead.
  for (const options of [{}, { blockQuote: false }]) {
    const text = objects.map((object) => stringify(object, options)).join("---\n");
    const back = parseAllDocuments(text);
    const read = Array.isArray(back) ? back.map((document) => document.toJS() as unknown) : [];
    if (JSON.stringify(read) === JSON.stringify(objects)) return text;
  }
  throw new Error(`the site's YAML does not read back as written:\n${JSON.stringify(objects)}`);
}

/** What each reader must find in the rendered files of a site that synth accepted. */
export interface PlannedReadings {
  /** `clusters/<ns>/<name>/` of each cluster. */
  readonly sipDirectory: string;
  readonly bpaDirectory: string;
  /** Backend → servers (name → `address:port`), for each load balancer's haproxy.cfg. */
  readonly controlPlaneBackends: ReadonlyMap<string, ReadonlyMap<string, string>>;
  readonly workerBackends: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** ssh_config host → the address `ssh -G` must connect to; also the hosts table's rows. */
  readonly sshHosts: readonly SipHost[];
  readonly authorizedKeys: readonly string[];
  /** The kubespray groups of hosts.ini: group → node labels, and node label → address. */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly nodeAddresses: Readonly<Record<string, string>>;
  readonly kudPlugins: readonly string[];
  /** The Software ConfigMap's line files: file → lines. */
  readonly softwareLines: Readonly<Record<string, readonly string[]>>;
  /** Image of each Deployment the SIP services run, by rendered file. */
  readonly images: Readonly<Record<string, string>>;
  /** Labels and annotations kubectl must read on the SIPCluster and the Provisioning of `specs.yaml`. */
  readonly crLabels: Readonly<Record<string, string>>;
  readonly crAnnotations: Readonly<Record<string, string>>;
  /** What Dex, the tenant API server's file and the tenant's RBAC must say. */
  readonly auth: PlannedAuth;
}

/** What the auth service's readers must find. */
export interface PlannedAuth {
  readonly issuer: string;
  readonly clients: readonly { readonly id: string; readonly redirectURIs: readonly string[] }[];
  readonly connector: { readonly id: string; readonly clientId: string; readonly redirectUri: string };
  /** The ID token claims of the static user, by the password grant. */
  readonly user: { readonly email: string; readonly name: string; readonly groups: readonly string[] };
  readonly certificateAuthority: string;
  readonly usernamePrefix: string;
  readonly groupsPrefix: string;
  /** ClusterRole → the groups (prefixed) bound to it. */
  readonly bindings: Readonly<Record<string, readonly string[]>>;
}

/** What the readers must find when synth renders `values` (it plans every host of every role). */
export function plannedReadings(values: SiteValues): PlannedReadings {
  const servers = (hosts: readonly SiteHost[], port: number) =>
    new Map(hosts.map((host) => [host.name, `${host.ip}:${port}`]));
  const masters = [values.masterLabel];
  const workers = [values.workerLabel];
  return {
    sipDirectory: `clusters/${values.sipNamespace}/${values.sipName}`,
    bpaDirectory: `clusters/${values.bpaNamespace}/${values.cluster}`,
    controlPlaneBackends: new Map([
      ["kube-apiserver-backend", servers(values.controlPlane, API_SERVER_PORT)],
    ]),
    workerBackends: new Map(
      WORKER_PORTS.map((port) => [`port-${port}-backend`, servers(values.workers, port)]),
    ),
    sshHosts: [...values.controlPlane, ...values.workers],
    authorizedKeys: values.sshAuthorizedKeys,
    groups: {
      "kube-master": masters,
      "kube-node": workers,
      etcd: masters,
      "ovn-central": masters,
      "ovn-controller": workers,
      virtlet: workers,
    },
    nodeAddresses: { [values.masterLabel]: values.master.ip, [values.workerLabel]: values.worker.ip },
    kudPlugins: values.kudPlugins,
    softwareLines: {
      "master-packages": values.masterPackages.map((item) =>
        item.version === undefined ? item.name : `${item.name}=${item.version}`,
      ),
      masters: [values.master.ip],
      "worker-packages": [],
      workers: [values.worker.ip],
    },
    // An empty image is unset, as in upstream SIP: the site's default for the service (decision 0031).
    images: {
      "loadbalancer-controlplane.yaml": values.loadBalancerImage || values.haproxyImage,
      "loadbalancer-worker.yaml": values.loadBalancerImage || values.haproxyImage,
      "jumphost.yaml": values.jumpHostImage || DEFAULT_SETTINGS.images.jumpHost,
      "auth.yaml": values.auth.image || DEFAULT_SETTINGS.images.auth,
    },
    crLabels: values.crLabels,
    crAnnotations: values.crAnnotations,
    auth: plannedAuth(values.auth),
  };
}

/** What the auth service of `auth` must be read as: the issuer on its address, everything as written. */
function plannedAuth(auth: AuthValues): PlannedAuth {
  const host = auth.address.includes(":") ? `[${auth.address}]` : auth.address;
  const issuer = `https://${host}:${AUTH_NODE_PORT}`;
  return {
    issuer,
    clients: [{ id: auth.clientId, redirectURIs: [auth.redirectUri] }],
    connector: { id: auth.connectorId, clientId: auth.connectorClientId, redirectUri: `${issuer}/callback` },
    user: { email: auth.userEmail, name: auth.userName, groups: [auth.group] },
    // The CA as the door keeps it: its CERTIFICATE blocks, each ending in one newline.
    certificateAuthority: [
      ...auth.certificateAuthority.matchAll(/-----BEGIN CERTIFICATE-----[^]*?-----END CERTIFICATE-----/g),
    ]
      .map((block) => `${block[0].replace(/\r\n/g, "\n")}\n`)
      .join(""),
    usernamePrefix: auth.prefix,
    groupsPrefix: auth.prefix,
    bindings: { [auth.clusterRole]: [`${auth.prefix}${auth.group}`] },
  };
}
