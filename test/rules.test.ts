import { clusterKey } from "../synth/cluster-key.ts";
import { beforeAll, describe, expect, it } from "vitest";
import { Inventory } from "../synth/inventory/inventory.ts";
import { buildInventory } from "../synth/inventory/load.ts";
import { renderPlan } from "../synth/plan/render-plan.ts";
import { DEFAULT_SETTINGS } from "../synth/schema/settings.ts";
import { renderSite } from "../gitops/render.ts";
import { RULES } from "../synth/rule-catalogue.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock } from "../synth/model/lock.ts";
import { makeBmh, makeHost, networkDataSecret } from "./builders/inventory.ts";
import { evaluateYaml, rulesAndPaths, rulesInventory } from "./harness.ts";

let inventory: Inventory;
beforeAll(async () => {
  inventory = await rulesInventory();
});

/** A Provisioning in namespace edge-a with the given spec body (indented YAML under `spec:`). */
function provisioning(spec: string, labels = "cluster: alpha", name = "alpha"): string {
  return `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: ${name}
  namespace: edge-a
  labels:
    ${labels}
spec:
${spec}`;
}

const oneMaster = `  masters:
    - master-1:
        mac-address: 00:c6:14:04:61:b3
`;

function sip(body: string, name = "tenant"): string {
  return `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata:
  name: ${name}
  namespace: edge
spec:
${body}`;
}

const sipNodes = `  nodes:
    ControlPlane:
      labelSelector:
        matchLabels:
          vino.airshipit.org/flavor: control-plane
      topologyKey: vino.airshipit.org/rack
      count:
        active: 1
        standby: 1
`;

const ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@site";

describe("valid input passes every rule", () => {
  it.each([
    ["a master by MAC", provisioning(oneMaster)],
    [
      "MAC in upper case and dashes",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00-C6-14-04-61-B3\n`),
    ],
    ["Cisco-dotted MAC", provisioning(`  masters:\n    - master-1:\n        mac-address: 00c6.1404.61b3\n`)],
    [
      "a master with resources it has",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        cpu: 16\n        memory: 64Gi\n`,
      ),
    ],
    [
      // Kubernetes' quantity grammar allows a leading or trailing decimal point; it was refused.
      "memory with a leading decimal point",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: .5Gi\n`,
      ),
    ],
    [
      "memory in bytes",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: 68719476736\n`,
      ),
    ],
    [
      "a host in both roles",
      provisioning(`${oneMaster}  workers:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n`),
    ],
    ["a null worker entry", provisioning(`${oneMaster}  workers:\n    - master-1:\n`)],
    [
      "resource-only worker with SR-IOV",
      provisioning(`${oneMaster}  workers:\n    - worker-1:\n        cpu: 32\n        sriov: true\n`),
    ],
    [
      "plugins and pod subnet",
      provisioning(`${oneMaster}  KUDPlugins: [multus, ovn4nfv]\n  PodSubnet: 10.244.64.0/18\n`),
    ],
    ["IPv6 pod subnet", provisioning(`${oneMaster}  PodSubnet: fd00:10:244::/56\n`)],
    [
      "software with pinned packages",
      `${provisioning(oneMaster)}---
apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata: {name: alpha-sw, namespace: edge-a, labels: {cluster: alpha}}
spec:
  masterSoftware: [htop, {jq: {version: "1.5+dfsg-1ubuntu0.1"}}, {ethtool: {version: "1:5.16-1"}}]
  workerSoftware: [curl]
`,
    ],
    [
      "cluster glue",
      `${provisioning(oneMaster)}---
apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata: {name: alpha, namespace: edge-a, labels: {cluster: alpha}}
spec: {provisioningCR: alpha}
`,
    ],
    [
      "a SIPCluster",
      sip(
        `${sipNodes}  services:\n    jumpHost:\n      - image: jump:1\n        nodeInterfaceId: oam-ipv4\n        nodePort: 30022\n        sshAuthorizedKeys: ["${ED25519}"]\n        nodeSSHPrivateKeys: tenant-ssh\n`,
      ),
    ],
    [
      'a SIP load balancer with image: "" (unset, as upstream SIP reads it; issue #21 case 16)',
      sip(
        `${sipNodes}  services:\n    loadBalancerControlPlane:\n      - {image: "", nodeInterfaceId: oam-ipv4, nodePort: 30443}\n`,
      ),
    ],
    [
      "a kind: List wrapper",
      `apiVersion: v1\nkind: List\nitems:\n  - ${provisioning(oneMaster).replace(/\n/g, "\n    ")}\n`,
    ],
    [
      "labels and annotations the API server accepts (issue #35)",
      provisioning(
        oneMaster,
        'cluster: alpha\n    app.kubernetes.io/part-of: "yes"\n  annotations:\n    Example.COM/Note: "free text: any"',
      ),
    ],
  ])("%s", (_name, yaml) => {
    expect(evaluateYaml(yaml, inventory).all).toEqual([]);
  });
});

describe("each rule reports its id at the field path", () => {
  it.each([
    [
      "schema",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        hardware: {arch: ppc64le}\n`,
      ),
      "spec.masters[0].master-1.hardware.arch",
      /x86_64|aarch64/,
    ],
    [
      "schema",
      provisioning(`${oneMaster}  mastrs: []\n`),
      "spec.mastrs",
      /unknown field "mastrs" \(did you mean masters\?\)/,
    ],
    [
      "schema",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        cpu: many\n`,
      ),
      "spec.masters[0].master-1.cpu",
      /expected number, found "many"/,
    ],
    [
      "schema",
      provisioning(
        `  masters:\n    - master-1: {mac-address: 00:c6:14:04:61:b3}\n      master-2: {mac-address: 00:c6:14:04:61:c0}\n`,
      ),
      "spec.masters[0]",
      /exactly one key/,
    ],
    [
      "schema",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        sriov: true\n`,
      ),
      "spec.masters[0].master-1.sriov",
      /unknown field "sriov"/,
    ],
    [
      "cluster-label",
      provisioning(oneMaster, "owner: c1"),
      "metadata.labels",
      /needs label "cluster: <name>"/,
    ],
    [
      "cluster-label",
      provisioning(oneMaster, "cluster: Cluster_A"),
      "metadata.labels.cluster",
      /did you mean "cluster-a"/,
    ],
    [
      "no-masters",
      provisioning(`  workers:\n    - worker-1:\n        cpu: 8\n`),
      "spec",
      /at least one entry/,
    ],
    [
      "node-label",
      provisioning(`  masters:\n    - Master_1:\n        mac-address: 00:c6:14:04:61:b3\n`),
      "spec.masters[0].Master_1",
      /not a DNS-1123 label/,
    ],
    [
      "node-label",
      provisioning(`  masters:\n    - ungrouped:\n        mac-address: 00:c6:14:04:61:b3\n`),
      "spec.masters[0].ungrouped",
      /the name of a group of hosts.ini/,
    ],
    [
      "node-label",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n  workers:\n    - etcd:\n        mac-address: 00:c6:14:04:61:c0\n`,
      ),
      "spec.workers[0].etcd",
      /the name of a group of hosts.ini/,
    ],
    [
      "node-label-duplicate",
      provisioning(`${oneMaster}    - master-1:\n        mac-address: 00:c6:14:04:61:c0\n`),
      "spec.masters[1].master-1",
      /already used by master "master-1"/,
    ],
    [
      "node-label-duplicate",
      provisioning(`${oneMaster}  workers:\n    - master-1:\n        mac-address: 00:c6:14:04:61:c0\n`),
      "spec.workers[0].master-1",
      /different host/,
    ],
    [
      "node-ref",
      provisioning(`${oneMaster}  workers:\n    - master-9:\n`),
      "spec.workers[0].master-9",
      /no such master/,
    ],
    [
      "mac-format",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61\n`),
      "spec.masters[0].master-1.mac-address",
      /is not a MAC address/,
    ],
    [
      "mac-format",
      provisioning(`  masters:\n    - master-1:\n        mac-address: "00:c6-14:04:61:b3"\n`),
      "spec.masters[0].master-1.mac-address",
      /is not a MAC address .*\(use one separator, ':' or '-', throughout\)/,
    ],
    [
      // The CRD pattern refuses it on kubectl apply, so validate must too.
      "mac-format",
      provisioning(`  masters:\n    - master-1:\n        mac-address: "00:c6:14:04:61:b3 "\n`),
      "spec.masters[0].master-1.mac-address",
      /"00:c6:14:04:61:b3 " is not a MAC address .*\(remove the whitespace around it\)/,
    ],
    [
      "mac-duplicate",
      provisioning(`${oneMaster}    - master-2:\n        mac-address: 00:C6:14:04:61:B3\n`),
      "spec.masters[1].master-2.mac-address",
      /already the MAC of master "master-1"/,
    ],
    [
      "name-invalid",
      provisioning(oneMaster).replace("namespace: edge-a", 'namespace: "../../x"'),
      "metadata.namespace",
      /"..\/..\/x" is not a namespace: expected a DNS-1123 label/,
    ],
    [
      "name-invalid",
      provisioning(oneMaster).replace("namespace: edge-a", "namespace: Edge_A"),
      "metadata.namespace",
      /"Edge_A" is not a namespace/,
    ],
    [
      "name-invalid",
      sip(sipNodes, '"../../../etc"'),
      "metadata.name",
      /"..\/..\/..\/etc" is not a SIPCluster name: expected a DNS-1123 subdomain/,
    ],
    [
      "name-invalid",
      provisioning(oneMaster, "cluster: alpha", "Alpha"),
      "metadata.name",
      /"Alpha" is not a Provisioning name/,
    ],
    [
      "metadata-invalid",
      provisioning(oneMaster, 'cluster: alpha\n    team: "team a"'),
      "metadata.labels.team",
      /label "team" has value "team a", expected a label value: .* \(did you mean "team-a"\?\)/,
    ],
    [
      "metadata-invalid",
      sip(sipNodes).replace("  namespace: edge\n", '  namespace: edge\n  annotations:\n    "my note": x\n'),
      'metadata.annotations["my note"]',
      /annotation key "my note" is not a qualified name/,
    ],
    [
      "mac-unknown",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b2\n`),
      "spec.masters[0].master-1.mac-address",
      /matches no BareMetalHost \(closest: 00:c6:14:04:61:b3 on metal3\/node-01\)/,
    ],
    [
      "ip-missing",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:e0\n`),
      "spec.masters[0].master-1.mac-address",
      /no usable IP address; NICs with an IPv4: 00:c6:14:04:61:e1 \(eno2, 10.0.0.14\)/,
    ],
    [
      // Every role, unlike upstream BPA, which checked only the masters' addresses.
      "ip-missing",
      provisioning(`${oneMaster}  workers:\n    - worker-1:\n        mac-address: 00:c6:14:04:61:e0\n`),
      "spec.workers[0].worker-1.mac-address",
      /NIC 00:c6:14:04:61:e0 of host metal3\/node-04 has no usable IP address/,
    ],
    [
      "cpu-insufficient",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        cpu: 20\n`),
      "spec.masters[0].master-1.cpu",
      /has 16 CPUs, 20 requested/,
    ],
    [
      "memory-insufficient",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: 96Gi\n`,
      ),
      "spec.masters[0].master-1.memory",
      /has 64Gi memory, 96Gi requested/,
    ],
    [
      "memory-format",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: 64\n`,
      ),
      "spec.masters[0].master-1.memory",
      /ambiguous/,
    ],
    [
      "memory-format",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: 4096\n`,
      ),
      "spec.masters[0].master-1.memory",
      /4096 bytes \(4Ki\), less than any host has.*did you mean 4096Mi\?/,
    ],
    [
      // Kubernetes refuses spaces around a quantity; metalsynth trimmed them and read 64Gi.
      "memory-format",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: "64Gi "\n`,
      ),
      "spec.masters[0].master-1.memory",
      /"64Gi " has spaces around it, which a Kubernetes quantity can't; write "64Gi"/,
    ],
    [
      "memory-format",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: -8Gi\n`,
      ),
      "spec.masters[0].master-1.memory",
      /"-8Gi" is negative/,
    ],
    [
      // It said "matches none of the allowed shapes", not what to write.
      "schema",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        memory: 1.5\n`,
      ),
      "spec.masters[0].master-1.memory",
      /expected a quantity such as "64Gi" or "4096Mi", or a whole number of bytes, found 1\.5 \(did you mean "1\.5Gi"\?\)/,
    ],
    [
      // It said "found a map".
      "schema",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        cpu: !!binary aGVsbG8=\n`,
      ),
      "spec.masters[0].master-1.cpu",
      /expected number, found binary data \(!!binary\)/,
    ],
    [
      "sriov-missing",
      provisioning(
        `${oneMaster}  workers:\n    - worker-1:\n        mac-address: 00:c6:14:04:61:f0\n        qat: false\n        sriov: true\n    - worker-2:\n        mac-address: 00:c6:14:04:61:d0\n`,
      ),
      "spec.workers[0].worker-1.sriov",
      /is not SR-IOV capable: it is not labelled feature.metalsynth.io\/sriov: "true"$/,
    ],
    [
      "qat-missing",
      provisioning(
        `${oneMaster}  workers:\n    - worker-1:\n        mac-address: 00:c6:14:04:61:c0\n        qat: true\n`,
      ),
      "spec.workers[0].worker-1.qat",
      /is not QAT capable: it is not labelled feature.metalsynth.io\/qat: "true"$/,
    ],
    [
      "arch-mismatch",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        hardware: {arch: aarch64}\n`,
      ),
      "spec.masters[0].master-1.hardware.arch",
      /^host metal3\/node-01 is x86_64, aarch64 requested$/,
    ],
    [
      "cpu-model-mismatch",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        hardware: {cpuModel: EPYC}\n`,
      ),
      "spec.masters[0].master-1.hardware.cpuModel",
      /^host metal3\/node-01 has CPU model "Intel\(R\) Xeon\(R\) Gold 5118 CPU @ 2.30GHz", which does not contain "epyc"$/,
    ],
    [
      "cpu-flags-missing",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        hardware: {cpuFlags: [AES, avx512f]}\n`,
      ),
      "spec.masters[0].master-1.hardware.cpuFlags",
      /^host metal3\/node-01 lacks CPU flags avx512f \(asked for aes avx512f\)$/,
    ],
    [
      "nic-speed-insufficient",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        hardware: {nicSpeedGbps: 25}\n`,
      ),
      "spec.masters[0].master-1.hardware.nicSpeedGbps",
      /^host metal3\/node-01's fastest NIC is 10 Gbps, 25 Gbps requested$/,
    ],
    [
      "disk-insufficient",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:b3\n        hardware: {disk: {minSizeGibibytes: 400, rotational: false}}\n`,
      ),
      "spec.masters[0].master-1.hardware.disk",
      /^host metal3\/node-01 has no solid-state disk of ≥ 400Gi \(its disks: 240Gi solid-state, 4Ti rotational\)$/,
    ],
    [
      "host-claimed",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:62:10\n`),
      "spec.masters[0].master-1.mac-address",
      /already belongs to edge\/other-sip/,
    ],
    [
      // Another CR of the site names the same host: the first cluster key keeps it (decision 0004).
      "host-claimed",
      `${provisioning(oneMaster)}---\n${provisioning(oneMaster, "cluster: beta", "beta")}`,
      "spec.masters[0].master-1.mac-address",
      /already requested by mac-address for cluster edge-a\/alpha in Provisioning edge-a\/alpha/,
    ],
    [
      "no-fit",
      provisioning(`${oneMaster}  workers:\n    - worker-1:\n        cpu: 200\n`),
      "spec.workers[0].worker-1",
      /0\/12 hosts fit: 9 fewer than 200 CPUs, 1 claimed by other clusters, 1 no hardware details, 1 serves another node of this cluster/,
    ],
    [
      "plugin-name",
      provisioning(`${oneMaster}  KUDPlugins: [Multus_CNI]\n`),
      "spec.KUDPlugins[0]",
      /not a KUD plugin name/,
    ],
    [
      "pod-subnet",
      provisioning(`${oneMaster}  PodSubnet: 10.244.0.0/33\n`),
      "spec.PodSubnet",
      /longer than 32 bits/,
    ],
    [
      "pod-subnet",
      provisioning(`${oneMaster}  PodSubnet: 10.244.1.0/16\n`),
      "spec.PodSubnet",
      /did you mean 10.244.0.0\/16/,
    ],
    [
      "unsupported",
      provisioning(oneMaster, "cluster: alpha\n    cluster-type: virtlet-vm"),
      "metadata.labels.cluster-type",
      /virtlet VM clusters are not supported/,
    ],
    [
      "secret-inline",
      provisioning(oneMaster).replace("  labels:", '  annotations:\n    note: "password=hunter2"\n  labels:'),
      "metadata.annotations.note",
      /password assignment/,
    ],
    [
      "secret-inline",
      provisioning(oneMaster).replace(
        "  labels:",
        "  annotations:\n    key: |\n      -----BEGIN OPENSSH PRIVATE KEY-----\n      abc\n  labels:",
      ),
      "metadata.annotations.key",
      /private key/,
    ],
    [
      "selector-invalid",
      sip(
        `  nodes:\n    Worker:\n      labelSelector:\n        matchExpressions:\n          - {key: flavor, operator: Near, values: [a]}\n      count: {active: 1}\n`,
      ),
      "spec.nodes.Worker.labelSelector.matchExpressions[0].operator",
      /Near/,
    ],
    [
      "sip-cluster-name",
      sip(sipNodes, "t".repeat(64)),
      "metadata.name",
      /64 characters; the sip\.airshipit\.org\/cluster-name label on its hosts holds at most 63/,
    ],
    [
      "sip-cluster-name",
      sip(sipNodes, "tenant.a"),
      "metadata.name",
      /"tenant\.a" is not a DNS-1123 label: .* it names the cluster's Services, which take no '\.'/,
    ],
    [
      "topology-key",
      sip(sipNodes.replace("topologyKey: vino.airshipit.org/rack", "topologyKey: rack key")),
      "spec.nodes.ControlPlane.topologyKey",
      /name part of "rack key" must consist of alphanumerics/,
    ],
    [
      // A key no candidate host carries would silently constrain nothing.
      "topology-key",
      sip(sipNodes.replace("topologyKey: vino.airshipit.org/rack", "topologyKey: vino.airshipit.org/rak")),
      "spec.nodes.ControlPlane.topologyKey",
      /no host matching the labelSelector \(3 hosts\) carries label "vino.airshipit.org\/rak", so it would constrain nothing \(did you mean vino.airshipit.org\/rack\?\)/,
    ],
    [
      "node-port",
      sip(
        `${sipNodes}  services:\n    loadBalancerControlPlane:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 8080}\n`,
      ),
      "spec.services.loadBalancerControlPlane[0].nodePort",
      /outside the NodePort range/,
    ],
    [
      "node-port",
      sip(
        `${sipNodes}  services:\n    loadBalancerWorker:\n      - {nodeInterfaceId: oam-ipv4, nodePortRange: {start: 30200, end: 30100}}\n`,
      ),
      "spec.services.loadBalancerWorker[0].nodePortRange",
      /reversed/,
    ],
    [
      "node-port",
      sip(
        `${sipNodes}  services:\n    loadBalancerWorker:\n      - {nodeInterfaceId: oam-ipv4, nodePortRange: {start: 30000, end: 30200}}\n`,
      ),
      "spec.services.loadBalancerWorker[0].nodePortRange",
      /at most 100/,
    ],
    [
      "node-port",
      sip(
        `${sipNodes}  services:\n    loadBalancerControlPlane:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30100}\n    loadBalancerWorker:\n      - {nodeInterfaceId: oam-ipv4, nodePortRange: {start: 30095, end: 30105}}\n`,
      ),
      "spec.services.loadBalancerWorker[0].nodePortRange",
      /already used by another service/,
    ],
    [
      // Two SIPClusters of the site on one NodePort: the later key is told which one has it.
      "node-port",
      `${sip(`${sipNodes}  services:\n    loadBalancerControlPlane:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30100}\n`)}---\n${sip(
        "  nodes: {}\n  services:\n    loadBalancerControlPlane:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30100}\n",
        "zeta",
      )}`,
      "spec.services.loadBalancerControlPlane[0].nodePort",
      /nodePort 30100 is already used by SIPCluster\/edge\/tenant/,
    ],
    [
      "ssh-key",
      sip(
        `${sipNodes}  services:\n    jumpHost:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30022, nodeSSHPrivateKeys: k, sshAuthorizedKeys: [not-a-key]}\n`,
      ),
      "spec.services.jumpHost[0].sshAuthorizedKeys[0]",
      /not an OpenSSH public key/,
    ],
    [
      "ssh-key",
      sip(
        `${sipNodes}  services:\n    jumpHost:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30022, nodeSSHPrivateKeys: k, sshAuthorizedKeys: ["ssh-rsa ${ED25519.split(" ")[1]}"]}\n`,
      ),
      "spec.services.jumpHost[0].sshAuthorizedKeys[0]",
      /does not contain a ssh-rsa key/,
    ],
    [
      "ssh-key",
      sip(
        `${sipNodes}  services:\n    jumpHost:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30022, nodeSSHPrivateKeys: k, sshAuthorizedKeys: ["${ED25519}\\ncommand=\\"sh -c id\\" ${ED25519}"]}\n`,
      ),
      "spec.services.jumpHost[0].sshAuthorizedKeys[0]",
      /holds a line break or another control character: an authorized_keys entry is exactly one line/,
    ],
    [
      "schema",
      sip(
        `${sipNodes}  services:\n    loadBalancerControlPlane:\n      - {image: "haproxy:2.3.2 --evil", nodeInterfaceId: oam-ipv4, nodePort: 30443}\n`,
      ),
      "spec.services.loadBalancerControlPlane[0].image",
      /"haproxy:2.3.2 --evil" is not an image reference/,
    ],
    [
      "schema",
      sip(
        `${sipNodes}  services:\n    loadBalancerControlPlane:\n      - {nodeInterfaceId: "oam-ipv4\\nserver evil 6.6.6.6", nodePort: 30443}\n`,
      ),
      "spec.services.loadBalancerControlPlane[0].nodeInterfaceId",
      /"oam-ipv4\\nserver evil 6.6.6.6" is not a network id or interface name/,
    ],
    [
      "name-invalid",
      sip(
        `${sipNodes}  services:\n    jumpHost:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30022, nodeSSHPrivateKeys: Tenant_Keys}\n`,
      ),
      "spec.services.jumpHost[0].nodeSSHPrivateKeys",
      /"Tenant_Keys" is not a Secret name/,
    ],
    [
      "no-fit",
      sip(sipNodes.replace("standby: 1", "standby: 2")),
      "spec.nodes.ControlPlane",
      /needs 3 hosts \(active 1 \+ standby 2\), found 2: 2\/12 hosts fit: 9 not matching the labelSelector, 1 same vino.airshipit.org\/rack as a chosen host/,
    ],
    [
      "no-fit",
      sip(
        `${sipNodes}  services:\n    loadBalancerControlPlane:\n      - {nodeInterfaceId: storage-ipv4, nodePort: 30443}\n`,
      ),
      "spec.nodes.ControlPlane",
      /found 0: 0\/12 hosts fit: 9 not matching the labelSelector, 3 no IP on interface storage-ipv4/,
    ],
    [
      "unknown-kind",
      "apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisoning\nmetadata: {name: x}\nspec: {}\n",
      "kind",
      /did you mean Provisioning/,
    ],
    [
      "unknown-kind",
      "apiVersion: bpa.akraino.org/v1\nkind: Provisioning\nmetadata: {name: x}\nspec: {}\n",
      "kind",
      /must have apiVersion bpa.akraino.org\/v1alpha1/,
    ],
    [
      "duplicate-object",
      `${provisioning(oneMaster)}---\n${provisioning(oneMaster)}`,
      "metadata.name",
      /already defined at specs\/test.yaml:1/,
    ],
    [
      "cluster-ref",
      `${provisioning(oneMaster)}---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Cluster\nmetadata: {name: alpha, namespace: edge-a, labels: {cluster: alpha}}\nspec: {provisioningCR: alfa}\n`,
      "spec.provisioningCR",
      /no Provisioning "alfa" in namespace edge-a \(found: alpha\)/,
    ],
    [
      "cluster-ref",
      "apiVersion: bpa.akraino.org/v1alpha1\nkind: Software\nmetadata: {name: sw, namespace: edge-a, labels: {cluster: beta}}\nspec: {masterSoftware: [htop]}\n",
      "metadata.labels.cluster",
      /no Provisioning for cluster edge-a\/beta/,
    ],
    [
      "package-name",
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Software\nmetadata: {name: sw, namespace: edge-a, labels: {cluster: alpha}}\nspec: {masterSoftware: ["vim; rm -rf /"]}\n---\n' +
        provisioning(oneMaster),
      "spec.masterSoftware[0]",
      /not a Debian package name/,
    ],
    [
      "package-version",
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Software\nmetadata: {name: sw, namespace: edge-a, labels: {cluster: alpha}}\nspec: {masterSoftware: [{jq: {version: "1.6 $(reboot)"}}]}\n---\n' +
        provisioning(oneMaster),
      "spec.masterSoftware[0].jq.version",
      /not a Debian version/,
    ],
  ])("%s (case %#)", (rule, yaml, path, message) => {
    const issues = evaluateYaml(yaml, inventory).all.filter((found) => found.severity === "error");
    expect(rulesAndPaths(issues)).toEqual([`${rule} ${path}`]);
    expect(issues[0]?.message).toMatch(message);
    expect(issues[0]?.source?.file).toBe("specs/test.yaml");
  });
});

describe("warnings", () => {
  it.each([
    [
      "host-not-ready",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:62:00\n`),
      "spec.masters[0].master-1",
      /provisioning state "ready"/,
    ],
    [
      "resources-unknown",
      provisioning(`  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:f0\n        cpu: 4\n`),
      "spec.masters[0].master-1.cpu",
      /no hardware details/,
    ],
    [
      "resources-unknown",
      provisioning(
        `  masters:\n    - master-1:\n        mac-address: 00:c6:14:04:61:f0\n        memory: 8Gi\n`,
      ),
      "spec.masters[0].master-1.memory",
      /no hardware details; can't check memory: 8Gi/,
    ],
    [
      // treasuremap's SIPClusters set it (SIP's CRD of that release requires it); it was "unknown field".
      "field-ignored",
      sip(
        `${sipNodes}  services:\n    loadBalancerWorker:\n      - {nodeInterfaceId: oam-ipv4, nodePort: 30001, nodePortRange: {start: 30002, end: 30011}}\n`,
      ),
      "spec.services.loadBalancerWorker[0].nodePort",
      /nodePort 30001 is ignored, as SIP ignores it: a worker load balancer listens on nodePortRange/,
    ],
  ])("%s (case %#)", (rule, yaml, path, message) => {
    const issues = evaluateYaml(yaml, inventory).all;
    expect(rulesAndPaths(issues)).toEqual([`${rule} ${path}`]);
    expect(issues[0]?.severity).toBe("warning");
    expect(issues[0]?.message).toMatch(message);
  });
});

describe("host-claimed by the rendered/ lock", () => {
  it("reports a MAC entry for a host the lock gives another cluster of the site", () => {
    const lock: Lock = {
      entries: [
        {
          host: "metal3/node-01",
          cluster: clusterKey("edge-a", "beta"),
          kind: "bpa",
          role: "master",
          node: "master-1",
        },
      ],
    };
    const yaml = `${provisioning(oneMaster)}---\n${provisioning(
      `  masters:\n    - master-1:\n        cpu: 8\n`,
      "cluster: beta",
      "beta",
    )}`;
    const issues = evaluateYaml(yaml, inventory, lock).all.filter((found) => found.severity === "error");
    expect(issues.map((found) => `${found.rule} ${found.object} ${found.path}`)).toEqual([
      "host-claimed Provisioning/edge-a/alpha spec.masters[0].master-1.mac-address",
    ]);
    expect(issues[0]?.message).toMatch(
      /already belongs to edge-a\/beta: recorded for edge-a\/beta in rendered\/metalsynth.lock.yaml/,
    );
  });
});

describe("YAML merge keys, which kubectl and the webhook's clients accept (issue #35)", () => {
  const master =
    "    - master-1: &node\n        mac-address: 00:c6:14:04:61:b3\n        cpu: 16\n        memory: 64Gi\n";
  const expanded = provisioning(
    `  masters:\n${master}  workers:\n    - worker-1:\n        mac-address: 00:c6:14:04:61:c0\n        cpu: 16\n        memory: 64Gi\n`,
  );
  const merged = (mac: string) =>
    provisioning(
      `  masters:\n${master}  workers:\n    - worker-1:\n        <<: *node\n        mac-address: ${mac}\n`,
    );

  it("validates a Provisioning with a merge key like its expanded form", () => {
    const plain = evaluateYaml(expanded, inventory);
    const viaMerge = evaluateYaml(merged("00:c6:14:04:61:c0"), inventory);
    expect(plain.all).toEqual([]);
    expect(viaMerge.all).toEqual([]);
    expect(viaMerge.plan.lock).toEqual(plain.plan.lock);
  });

  it("reports a finding in merged content at the line it is written on", () => {
    // The worker's size merged into the master: master-1's host has 16 CPUs, not 32.
    const yaml = provisioning(
      "  workers:\n    - worker-1: &big\n        mac-address: 00:c6:14:04:61:c0\n        cpu: 32\n" +
        "  masters:\n    - master-1:\n        <<: *big\n        mac-address: 00:c6:14:04:61:b3\n",
    );
    const issues = evaluateYaml(yaml, inventory).all;
    expect(issues.map((found) => `${found.rule} ${found.path} ${found.source?.line}`)).toEqual([
      "cpu-insufficient spec.masters[0].master-1.cpu 12",
    ]);
  });
});

describe("a host set aside at load (issue #21 case 18, decision 0031)", () => {
  // Metal3's demo hosts repeat a MAC; one host's name would write a server line into haproxy.cfg.
  const bad = buildInventory(
    [
      makeBmh({ name: "demo-a", bootMac: "00:00:00:00:aa:01" }),
      makeBmh({ name: "demo-b", bootMac: "00:00:00:00:aa:01" }),
      makeBmh({ name: "a-node\n      server evil 6.6.6.6:6443", bootMac: "00:00:00:00:aa:02" }),
      makeBmh({ name: "good", bootMac: "00:c6:14:04:61:b3" }),
    ].map((value, index) => ({
      value,
      source: { file: "inventory/hosts.yaml", line: index + 1, column: 1 },
    })),
  ).inventory;

  it.each([
    [
      "inventory-invalid",
      "00:00:00:00:aa:01",
      /BareMetalHost "metal3\/demo-a" \(inventory\/hosts.yaml:1\), which is set aside: MAC/,
    ],
    ["name-invalid", "00:00:00:00:aa:02", /which is set aside: metadata.name "a-node\\n/],
  ])("refuses a CR that names it by MAC with %s", (rule, mac, message) => {
    const yaml = provisioning(`  masters:\n    - master-1:\n        mac-address: ${mac}\n`);
    const issues = evaluateYaml(yaml, bad).all.filter((found) => found.severity === "error");
    expect(rulesAndPaths(issues)).toEqual([`${rule} spec.masters[0].master-1.mac-address`]);
    expect(issues[0]?.message).toMatch(message);
  });

  it("renders a cluster that does not touch it", () => {
    const { plan, issues } = evaluateYaml(provisioning(oneMaster), bad);
    expect(issues.filter((found) => found.severity === "error")).toEqual([]);
    expect(renderPlan(plan, issues)?.clusters.map((cluster) => cluster.key)).toEqual(["edge-a/alpha"]);
  });
});

describe("a networkData address carrying an haproxy server line (issue #21 case 1)", () => {
  const injected = {
    ...(networkDataSecret("a-cp-networkdata", "metal3", 1, false) as { stringData: unknown }),
    stringData: {
      networkData: JSON.stringify({
        networks: [
          { id: "oam-ipv4", type: "ipv4", ip_address: "10.41.0.11:6443 check\n    server evil 6.6.6.6" },
        ],
      }),
    },
  };
  const hosts = buildInventory(
    [
      makeBmh({ name: "a-cp", labels: { flavor: "cp" }, networkData: { name: "a-cp-networkdata" } }),
      makeBmh({ name: "b-cp", labels: { flavor: "cp" }, networkData: { name: "b-cp-networkdata" } }),
      injected,
      networkDataSecret("b-cp-networkdata", "metal3", 2, false),
    ].map((value, index) => ({
      value,
      source: { file: "inventory/hosts.yaml", line: index + 1, column: 1 },
    })),
  );
  const tenant = sip(
    "  nodes:\n    ControlPlane:\n      labelSelector: {matchLabels: {flavor: cp}}\n      count: {active: 1}\n" +
      '  services:\n    loadBalancerControlPlane:\n      - {image: "", nodeInterfaceId: oam-ipv4, nodePort: 30443}\n',
  );

  it("sets the host aside, chooses the other one, and never writes the line", async () => {
    expect(hosts.issues.map((found) => [found.rule, found.severity, found.host])).toEqual([
      ["address-invalid", "warning", "metal3/a-cp"],
    ]);
    const { plan, issues } = evaluateYaml(tenant, hosts.inventory);
    expect(issues.filter((found) => found.severity === "error")).toEqual([]);
    const ready = renderPlan(plan, issues);
    expect(ready?.clusters.flatMap((cluster) => (cluster.kind === "sip" ? cluster.members : []))).toEqual([
      expect.objectContaining({ host: expect.objectContaining({ id: "metal3/b-cp" }) }),
    ]);
    const { files } = await renderSite(ready!, DEFAULT_SETTINGS, { workers: 0 });
    const text = [...files.values()].join("\n");
    expect(text).toContain("server b-cp 32.68.0.2:6443");
    expect(text).toContain("image: haproxy:2.3.2");
    expect(text).not.toContain("evil");
  });
});

describe("host-claimed despite the rendered/ lock", () => {
  const alphaLock: Lock = {
    entries: [
      {
        host: "metal3/node-01",
        cluster: clusterKey("edge-a", "alpha"),
        kind: "bpa",
        role: "master",
        node: "master-1",
      },
    ],
  };
  /** The rules inventory with node-01 labelled for SIPCluster `namespace/name`. */
  const labelled = (namespace: string, name: string) =>
    new Inventory(
      inventory.hosts.map((host) =>
        host.id === "metal3/node-01" ? { ...host, sipOwner: { namespace, name, nodeType: "Worker" } } : host,
      ),
    );

  it.each([
    ["without the lock", EMPTY_LOCK],
    ["with the lock giving the host to alpha", alphaLock],
  ])("reports a MAC entry for a host labelled for a SIPCluster the site never managed, %s", (_, lock) => {
    const issues = evaluateYaml(provisioning(oneMaster), labelled("other", "tenant-z"), lock).all;
    expect(issues.map((found) => `${found.rule} ${found.object} ${found.path}`)).toEqual([
      "host-claimed Provisioning/edge-a/alpha spec.masters[0].master-1.mac-address",
    ]);
    expect(issues[0]?.message).toMatch(/labelled for SIPCluster other\/tenant-z/);
  });

  it("keeps the lock's word over SIP labels of a cluster the lock holds hosts for", () => {
    const lock: Lock = {
      entries: [
        ...alphaLock.entries,
        { host: "metal3/node-02", cluster: clusterKey("edge", "tenant"), kind: "sip", role: "ControlPlane" },
      ],
    };
    const yaml = `${provisioning(oneMaster)}---\n${sip(sipNodes)}`;
    const issues = evaluateYaml(yaml, labelled("edge", "tenant"), lock).all;
    expect(issues.filter((found) => found.rule === "host-claimed")).toEqual([]);
  });
});

describe("the catalogue", () => {
  it("has the docs/contract.md §2 rule ids with their severities", () => {
    const warnings = Object.entries(RULES)
      .filter(([, rule]) => rule.severity === "warning")
      .map(([id]) => id);
    expect(warnings.sort()).toEqual([
      "bmc-duplicate",
      "field-ignored",
      "host-not-ready",
      "inventory-unmatched",
      "ip-duplicate",
      "no-objects",
      "resources-unknown",
    ]);
    for (const id of [
      "schema",
      "cluster-label",
      "no-masters",
      "node-label-duplicate",
      "mac-format",
      "mac-duplicate",
      "mac-unknown",
      "ip-missing",
      "host-claimed",
      "cpu-insufficient",
      "memory-insufficient",
      "sriov-missing",
      "qat-missing",
      "arch-mismatch",
      "cpu-model-mismatch",
      "cpu-flags-missing",
      "nic-speed-insufficient",
      "disk-insufficient",
      "no-fit",
      "plugin-name",
      "pod-subnet",
      "package-name",
      "package-version",
      "selector-invalid",
      "topology-key",
      "sip-cluster-name",
      "node-port",
      "ssh-key",
      "secret-inline",
      "unsupported",
      "name-invalid",
      "address-invalid",
    ]) {
      expect(RULES).toHaveProperty(id);
    }
  });
});

describe("one mistake, one finding", () => {
  const software = `apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata: {name: alpha-sw, namespace: edge-a, labels: {cluster: alpha}}
spec: {masterSoftware: [htop]}
`;
  const glue = `apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata: {name: alpha, namespace: edge-a, labels: {cluster: alpha}}
spec: {provisioningCR: alpha, softwareCR: alpha-sw}
`;

  it("reports a Provisioning's schema error alone, not also as a missing Provisioning on its Software and Cluster", () => {
    const yaml = [provisioning(`${oneMaster}  mastrs: []\n`), software, glue].join("---\n");
    expect(rulesAndPaths(evaluateYaml(yaml, inventory).all)).toEqual(["schema spec.mastrs"]);
  });

  it("still reports a Software whose cluster has no Provisioning at all", () => {
    expect(rulesAndPaths(evaluateYaml(software, inventory).all)).toEqual([
      "cluster-ref metadata.labels.cluster",
    ]);
  });
});

describe("hosts not inspected yet", () => {
  const BOOT = "00:c6:14:04:70:00";
  /** A BareMetalHost registered but not inspected: a boot MAC, no status at all. */
  const fresh = makeHost({
    name: "fresh",
    nics: [],
    macs: [BOOT],
    bootMac: BOOT,
    cpus: undefined,
    memoryBytes: undefined,
    provisioningState: undefined,
  });
  const master = (mac: string) => provisioning(`  masters:\n    - master-1:\n        mac-address: ${mac}\n`);
  const errors = (yaml: string) =>
    evaluateYaml(yaml, new Inventory([...inventory.hosts, fresh])).all.filter(
      (found) => found.severity === "error",
    );

  it("says the host of a boot MAC has not been inspected, instead of only that its NIC has no IP", () => {
    const issues = errors(master(BOOT));
    expect(rulesAndPaths(issues)).toEqual(["ip-missing spec.masters[0].master-1.mac-address"]);
    expect(issues[0]?.message).toMatch(
      /host metal3\/fresh has not been inspected yet \(no hardware details, no NIC IPs\)/,
    );
  });

  it("says a host without status has no provisioning state yet, not that its state is unknown", () => {
    const warnings = evaluateYaml(master(BOOT), new Inventory([...inventory.hosts, fresh])).all.filter(
      (found) => found.rule === "host-not-ready",
    );
    expect(warnings.map((found) => found.message)).toEqual([
      "host metal3/fresh has no provisioning state yet (no status: not inspected or provisioned); KUD needs an installed OS (provisioned or externally provisioned)",
    ]);
  });

  it("says an unknown MAC may belong to a host not inspected yet", () => {
    const issues = errors(master("00:c6:14:04:70:01"));
    expect(rulesAndPaths(issues)).toEqual(["mac-unknown spec.masters[0].master-1.mac-address"]);
    expect(issues[0]?.message).toMatch(
      /matches no BareMetalHost \(closest: 00:c6:14:04:70:00 on metal3\/fresh\); 1 host has not been inspected yet, so its NICs are unknown: metal3\/fresh/,
    );
  });
});
