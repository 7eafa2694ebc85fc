import { describe, expect, it } from "vitest";
import { parseDocuments } from "../codec/read-documents.ts";
import { siteModel } from "../site/model.ts";
import { readResources } from "../site/resources.ts";

/** The `name-clash` findings of a site made of `yaml`, as `rule path object` and messages. */
function nameClashes(yaml: string): { found: string[]; messages: string[] } {
  const { documents } = parseDocuments("specs/test.yaml", yaml);
  const { resources } = readResources(documents);
  const clashes = siteModel(resources).issues.filter((found) => found.rule === "name-clash");
  return {
    found: clashes.map((found) => `${found.rule} ${found.path} ${found.object ?? ""}`),
    messages: clashes.map((found) => found.message),
  };
}

function provisioning(namespace: string, cluster: string): string {
  return `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: ${cluster}, namespace: ${namespace}, labels: {cluster: ${cluster}}}
spec:
  masters:
    - master-1: {mac-address: "00:c6:14:04:61:b3"}
`;
}

function software(namespace: string, cluster: string): string {
  return `apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata: {name: ${cluster}-software, namespace: ${namespace}, labels: {cluster: ${cluster}}}
spec:
  masterSoftware: [htop]
`;
}

/** A SIPCluster without nodes, with one service of each kind `services` names. */
function sip(namespace: string, name: string, services: string[] = []): string {
  const service = {
    loadBalancerControlPlane: "{nodeInterfaceId: oam-ipv4, nodePort: 0}",
    loadBalancerWorker: "{nodeInterfaceId: oam-ipv4, nodePortRange: {start: 30000, end: 30001}}",
    jumpHost: "{nodeInterfaceId: oam-ipv4, nodePort: 0, sshAuthorizedKeys: [], nodeSSHPrivateKeys: keys}",
    auth: "{clusterIP: 10.41.0.5, nodePort: 30556, tlsSecret: tls, staticUsers: [{email: a@example.com, passwordHash: {name: users, key: a}}], roleBindings: [{group: a, clusterRole: view}]}",
  } as Record<string, string>;
  const lines = services.map((kind) => `    ${kind}: [${service[kind]}]`).join("\n");
  return `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  nodes: {}
${services.length > 0 ? `  services:\n${lines}\n` : ""}`;
}

const site = (...objects: string[]) => objects.join("---\n");

/** Two SIPCluster names of 63 characters whose label Job names shorten to one hash (found by search). */
const HASH_TWINS = [`${"t".repeat(55)}-00019hm`, `${"t".repeat(55)}-00021se`] as const;

describe("name-clash: sites whose clusters render distinct names", () => {
  it.each([
    // Issue #21 case 4: one Flux file and Application name on main.
    [
      "edge-a/cluster-east and edge/a-cluster-east",
      site(provisioning("edge-a", "cluster-east"), provisioning("edge", "a-cluster-east")),
    ],
    // Issue #21 case 4: one label Role and RoleBinding in metal3 on main.
    [
      "SIPClusters edge-sip/tenant-a and a-edge-sip/tenant",
      site(sip("edge-sip", "tenant-a"), sip("a-edge-sip", "tenant")),
    ],
    [
      "a Provisioning and a SIPCluster of one cluster",
      site(provisioning("edge", "x"), software("edge", "x"), sip("edge", "x", ["jumpHost"])),
    ],
    [
      "a cluster x and a cluster x-1 with two services each",
      site(sip("edge", "x", ["jumpHost"]), sip("edge", "x-1", ["jumpHost"])),
    ],
    [
      "long SIPCluster names that share a start",
      site(sip("edge", `${"t".repeat(55)}-0000001`), sip("edge", `${"t".repeat(55)}-0000002`)),
    ],
    [
      // Issue #39: auth-<c>, authentication-config-<c> and tenant-rbac-<c> never meet across tenants.
      "SIPClusters authentication-config-x and x, config-x and x-tls, all with an auth service",
      site(
        sip("edge", "x", ["auth"]),
        sip("edge", "authentication-config-x", ["auth"]),
        sip("edge", "entication-config-x", ["auth"]),
        sip("edge", "x-tls", ["auth"]),
        sip("edge", "rbac-x", ["auth"]),
      ),
    ],
    [
      "clusters of one name in two namespaces",
      site(provisioning("a", "x"), provisioning("b", "x"), sip("a", "y"), sip("b", "y")),
    ],
  ])("%s", (_, yaml) => {
    expect(nameClashes(yaml).found).toEqual([]);
  });
});

describe("name-clash: sites whose clusters would share an object", () => {
  it.each([
    [
      // The contract fixes both names: <cluster>-configmap and loadbalancer-controlplane-<name>.
      "the address book of a BPA cluster and a SIP load balancer",
      site(
        provisioning("edge", "loadbalancer-controlplane-x"),
        sip("edge", "x-configmap", ["loadBalancerControlPlane"]),
      ),
      "name-clash metadata.name SIPCluster/edge/x-configmap",
      /^cluster edge\/x-configmap would render ConfigMap edge\/loadbalancer-controlplane-x-configmap, which Provisioning edge\/loadbalancer-controlplane-x \(cluster edge\/loadbalancer-controlplane-x\) renders too/,
    ],
    [
      "a Software's ConfigMap and a jump host, reported on the later cluster's Software",
      site(
        provisioning("edge", "jumphost-x"),
        software("edge", "jumphost-x"),
        sip("edge", "x-software", ["jumpHost"]),
      ),
      "name-clash metadata.name SIPCluster/edge/x-software",
      /ConfigMap edge\/jumphost-x-software, which Software edge\/jumphost-x-software \(cluster edge\/jumphost-x\)/,
    ],
    [
      "a BPA cluster later than the SIPCluster it meets",
      site(provisioning("edge", "loadbalancer-worker-a"), sip("edge", "a-hosts-ini", ["loadBalancerWorker"])),
      "name-clash metadata.labels.cluster Provisioning/edge/loadbalancer-worker-a",
      /would render ConfigMap edge\/loadbalancer-worker-a-hosts-ini, which SIPCluster edge\/a-hosts-ini/,
    ],
    [
      // Issue #39: the contract fixes both names: <cluster>-configmap and tenant-rbac-<name>.
      "the address book of a BPA cluster and a tenant's RBAC ConfigMap",
      site(provisioning("edge", "tenant-rbac-x"), sip("edge", "x-configmap", ["auth"])),
      "name-clash metadata.name SIPCluster/edge/x-configmap",
      /would render ConfigMap edge\/tenant-rbac-x-configmap, which Provisioning edge\/tenant-rbac-x/,
    ],
    [
      "two long SIPCluster names shortened to one hash",
      site(sip("edge", HASH_TWINS[0]), sip("edge", HASH_TWINS[1])),
      `name-clash metadata.name SIPCluster/edge/${HASH_TWINS[1]}`,
      /would render Role and RoleBinding bmh-labels-t{43}-f09ba615-edge in each BareMetalHost namespace, ServiceAccount edge\/bmh-labels-t{43}-f09ba615, which SIPCluster edge\/t{55}-00019hm/,
    ],
  ])("%s", (_, yaml, found, message) => {
    const clashes = nameClashes(yaml);
    expect(clashes.found).toEqual([found]);
    expect(clashes.messages[0]).toMatch(message);
  });
});
