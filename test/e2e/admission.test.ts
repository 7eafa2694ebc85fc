/**
 * docs/contract.md §5 and §9 on a real API server: the CRDs install and explain themselves, deploy/metalsynth.yaml
 * is accepted, and the webhook — run from this clone with `--from-cluster`, as its ServiceAccount —
 * makes `kubectl apply` refuse bad CRs of every kind with metalsynth's message, admit good ones, show
 * warnings, and handle `--dry-run=server`, UPDATE and DELETE. Its informers follow BareMetalHosts,
 * their status, networkData Secrets and an API server restart.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  eventually,
  installCrds,
  kubectlFor,
  must,
  readObjects,
  type KubeObject,
  type Kubectl,
} from "./support/kube.ts";
import {
  deployObjects,
  installWebhookRbac,
  inventoryNamespaces,
  loadInventory,
  registerWebhook,
  startWebhook,
  WEBHOOK_USER,
  writeStatus,
  type RunningWebhook,
} from "./support/webhook.ts";

const EXAMPLE = path.join(REPO, "examples", "site");

/** A Provisioning in edge-a with one master, by MAC and optional resources. */
function provisioning(name: string, master: Record<string, unknown>): string {
  return stringify({
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: { name, namespace: "edge-a", labels: { cluster: name } },
    spec: { masters: [{ "master-1": master }] },
  });
}

describe("the CRDs and the deployment on a real API server", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  beforeAll(async () => {
    plane = await startControlPlane(inject("e2eBinDir"));
    kubectl = kubectlFor(plane.kubeconfig);
    await installCrds(kubectl);
  });
  afterAll(async () => plane?.stop());

  it("installs deploy/crds.yaml: kubectl explain shows the schema, kubectl get the printer columns", async () => {
    // The API server publishes each new CRD's OpenAPI schema a moment after it is Established, one
    // CRD at a time, so every field explained here is waited for on its own.
    const explain = async (field: string) => {
      await eventually(
        async () => (await kubectl(["explain", field])).code === 0,
        30_000,
        `the schema of ${field} published`,
      );
      return must(kubectl, ["explain", field]);
    };
    const explained = await explain("provisionings.spec.masters");
    expect(explained).toMatch(/DESCRIPTION:/);
    expect(explained.length).toBeGreaterThan(200);
    expect(await explain("sipclusters.spec.nodes")).toMatch(/DESCRIPTION:/);

    await ensureNamespaces(kubectl, ["edge-a"]);
    await must(
      kubectl,
      ["apply", "-f", "-"],
      provisioning("columns", { "mac-address": "3c:fd:fe:13:f8:b8" }),
    );
    const table = await must(kubectl, ["get", "provisionings", "-n", "edge-a"]);
    const crd = (await readObjects([path.join(REPO, "deploy", "crds.yaml")])).find(
      (object) => object.metadata.name === "provisionings.bpa.akraino.org",
    );
    const published =
      (crd?.spec as { versions: { additionalPrinterColumns?: { name: string; priority?: number }[] }[] })
        .versions[0]?.additionalPrinterColumns ?? [];
    // Those of priority 0; the rest are -o wide's.
    const columns = published
      .filter((column) => (column.priority ?? 0) === 0)
      .map((column) => column.name.toUpperCase());
    expect(columns.length).toBeGreaterThan(0);
    for (const column of columns) expect(table.split("\n")[0]).toContain(column);
    const wide = await must(kubectl, ["get", "provisionings", "-n", "edge-a", "-o", "wide"]);
    for (const column of published) expect(wide.split("\n")[0]).toContain(column.name.toUpperCase());
  });

  it("refuses, in the API server, a MAC the CRD's pattern rejects", async () => {
    await ensureNamespaces(kubectl, ["edge-a"]);
    const result = await kubectl(
      ["apply", "-f", "-"],
      provisioning("bad-pattern", { "mac-address": "not-a-mac" }),
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/spec\.masters\[0\]\.master-1\.mac-address/);
  });

  it("accepts deploy/metalsynth.yaml (server-side dry run; cert-manager's Issuer and Certificate excepted)", async () => {
    // cert-manager's CRDs are not installed here: its Issuer and Certificate are checked against
    // cert-manager's schema by the unit tests (@kubernetes-models/cert-manager) instead.
    const objects = (await deployObjects()).filter(
      (object) => !object.apiVersion.startsWith("cert-manager.io/"),
    );
    expect(objects.map((object) => object.kind)).toEqual(
      expect.arrayContaining([
        "Namespace",
        "Deployment",
        "Service",
        "ValidatingWebhookConfiguration",
        "CustomResourceDefinition",
      ]),
    );
    // A dry run creates nothing, so the namespace the other objects live in must exist already, and
    // so must the inventory namespaces, which hold the Roles for Secrets (Metal3 makes them).
    await ensureNamespaces(kubectl, await inventoryNamespaces());
    await must(
      kubectl,
      ["apply", "-f", "-"],
      stringify(objects.find((object) => object.kind === "Namespace")),
    );
    await must(
      kubectl,
      ["apply", "--server-side", "--dry-run=server", "-f", "-"],
      objects.map((object) => stringify(object)).join("---\n"),
    );
  });
});

describe("the webhook, from a clone, registered with a real API server", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let webhook: RunningWebhook;
  let inventory: KubeObject[];

  beforeAll(async () => {
    plane = await startControlPlane(inject("e2eBinDir"), { users: [WEBHOOK_USER] });
    kubectl = kubectlFor(plane.kubeconfig);
    await installCrds(kubectl);
    await installWebhookRbac(kubectl);
    inventory = await readObjects(filesUnder(path.join(EXAMPLE, "inventory")));
    await ensureNamespaces(kubectl, ["metal3", "edge-a", "edge-sip"]);
    await loadInventory(kubectl, inventory);
    webhook = await startWebhook(plane);
    await registerWebhook(kubectl, webhook);
  });
  afterAll(async () => {
    await webhook?.stop();
    await plane?.stop();
  });

  it("admits the example site's CRs", async () => {
    const result = await kubectl(["apply", "-R", "-f", path.join(EXAMPLE, "specs")]);
    // kubectl applies one file after the other: a Software or Cluster may come before the webhook
    // has seen the Provisioning it names, which warns and does not refuse (decision 0011).
    for (const line of result.stderr.split("\n").filter(Boolean)) {
      expect(line).toMatch(/^Warning: .*\(not refused: it may be applied next\)$/);
    }
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/provisioning\.bpa\.akraino\.org\/cluster-east created/);
    expect(result.stdout).toMatch(/sipcluster\.airship\.airshipit\.org\/tenant-a created/);
  });

  it("refuses a Provisioning with metalsynth's message, every error with its field path", async () => {
    const result = await kubectl(
      ["apply", "-f", "-"],
      provisioning("typo", { "mac-address": "b8:ce:f6:79:e4:c0", cpu: 512 }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'admission webhook "provisioning.metalsynth.io" denied the request: spec.masters[0].master-1.mac-address: b8:ce:f6:79:e4:c0 matches no BareMetalHost (closest: b8:ce:f6:79:ea:c0 on metal3/r03-node-04)',
    );
  });

  it("refuses a Software, a Cluster and a SIPCluster with the webhook of their kind", async () => {
    const software = stringify({
      apiVersion: "bpa.akraino.org/v1alpha1",
      kind: "Software",
      metadata: { name: "bad-software", namespace: "edge-a", labels: { cluster: "cluster-east" } },
      spec: { masterSoftware: ["curl;reboot"] },
    });
    const cluster = stringify({
      apiVersion: "bpa.akraino.org/v1alpha1",
      kind: "Cluster",
      metadata: { name: "bad-cluster", namespace: "edge-a", labels: { cluster: "Not_A_Label" } },
      spec: { provisioningCR: "cluster-east" },
    });
    const sip = stringify({
      apiVersion: "airship.airshipit.org/v1",
      kind: "SIPCluster",
      metadata: { name: "bad-sip", namespace: "edge-sip" },
      spec: {
        nodes: {
          ControlPlane: {
            labelSelector: { matchLabels: { nope: "nope" } },
            count: { active: 1, standby: 0 },
          },
        },
        services: {},
      },
    });
    for (const [kind, manifest] of [
      ["software", software],
      ["cluster", cluster],
      ["sipcluster", sip],
    ] as const) {
      const result = await kubectl(["apply", "-f", "-"], manifest);
      expect(result.code, kind).toBe(1);
      expect(result.stderr, kind).toContain(`admission webhook "${kind}.metalsynth.io" denied the request: `);
    }
  });

  it("shows warnings and admits", async () => {
    const notReady = inventory.find(
      (object) =>
        object.kind === "BareMetalHost" &&
        (object.status as { provisioning?: { state?: string } } | undefined)?.provisioning?.state ===
          "available",
    );
    expect(notReady, "the example inventory has a host not provisioned yet").toBeDefined();
    const mac = (notReady?.spec as { bootMACAddress: string }).bootMACAddress;
    const result = await kubectl(["apply", "-f", "-"], provisioning("warned", { "mac-address": mac }));
    expect(result.stderr).toMatch(
      /^Warning: spec\.masters\[0\]\.master-1: host metal3\/\S+ is in provisioning state "available"/m,
    );
    expect(result.code, result.stderr).toBe(0);
    await must(kubectl, ["delete", "provisioning", "warned", "-n", "edge-a"]);
  });

  it("reviews --dry-run=server like any request, and UPDATE against the object it replaces; DELETE is allowed", async () => {
    const bad = provisioning("cluster-west", { "mac-address": "b8:ce:f6:79:e4:c0" });
    const dryRun = await kubectl(["apply", "--dry-run=server", "-f", "-"], bad);
    expect(dryRun.code).toBe(1);
    expect(dryRun.stderr).toContain("denied the request");

    // An UPDATE of cluster-west (applied with the site) to a MAC no host has is refused…
    const update = await kubectl(["apply", "-f", "-"], bad);
    expect(update.code).toBe(1);
    expect(update.stderr).toMatch(/error when (applying patch|patching)/);
    // …and re-applying the site's own cluster-west, unchanged or with a label, is not in conflict with itself.
    const same = await kubectl([
      "apply",
      "-f",
      path.join(EXAMPLE, "specs", "cluster-west", "provisioning.yaml"),
    ]);
    expect(same.code, same.stderr).toBe(0);
    await must(kubectl, ["label", "provisioning", "cluster-west", "-n", "edge-a", "reviewed=yes"]);

    const deleted = await kubectl(["delete", "provisioning", "cluster-west", "-n", "edge-a"]);
    expect(deleted.code, deleted.stderr).toBe(0);
    await must(kubectl, ["apply", "-f", path.join(EXAMPLE, "specs", "cluster-west", "provisioning.yaml")]);
  });

  it("follows a BareMetalHost added and its status changed, each within 2 s", async () => {
    // A host nobody has registered yet: its MAC is unknown until it is.
    const host = {
      apiVersion: "metal3.io/v1alpha1",
      kind: "BareMetalHost",
      metadata: { name: "r09-node-01", namespace: "metal3" },
      spec: {
        online: true,
        bootMACAddress: "02:00:00:09:01:01",
        bmc: { address: "ipmi://10.9.0.1", credentialsName: "r09-node-01-bmc" },
      },
    };
    const wanted = provisioning("late", { "mac-address": "02:00:00:09:01:02", cpu: 16 });
    const answer = async () => (await kubectl(["apply", "--dry-run=server", "-f", "-"], wanted)).stderr;
    expect(await answer()).toContain("matches no BareMetalHost");
    // By its boot MAC the host is known as soon as it is registered, not yet inspected.
    const byBootMac = provisioning("early", { "mac-address": "02:00:00:09:01:01" });
    const bootAnswer = async () =>
      (await kubectl(["apply", "--dry-run=server", "-f", "-"], byBootMac)).stderr;
    expect(await bootAnswer()).toContain("matches no BareMetalHost");

    await must(kubectl, ["apply", "-f", "-"], stringify(host));
    await eventually(
      async () => {
        const text = await bootAnswer();
        return !text.includes("matches no BareMetalHost") && text.includes("has not been inspected");
      },
      2_000,
      "BareMetalHost added seen",
    );
    const nic = (mac: string, ip: string) => ({ name: "eno1", mac, ip, speedGbps: 25 });
    // Inspected: the NIC with the MAC appears, but the host has only 8 CPUs.
    await writeStatus(kubectl, host as KubeObject, {
      provisioning: { ID: "r09-node-01", state: "provisioned" },
      hardware: { cpu: { count: 8 }, ramMebibytes: 65536, nics: [nic("02:00:00:09:01:02", "10.9.0.11")] },
    });
    await eventually(
      async () => /16 requested|fewer than 16|has 8 CPUs/.test(await answer()),
      2_000,
      "status.hardware seen",
    );
    // More CPUs reported: admitted.
    await writeStatus(kubectl, host as KubeObject, {
      provisioning: { ID: "r09-node-01", state: "provisioned" },
      hardware: { cpu: { count: 32 }, ramMebibytes: 65536, nics: [nic("02:00:00:09:01:02", "10.9.0.11")] },
    });
    await eventually(async () => (await answer()) === "", 2_000, "status.hardware change seen");
  });

  it("reads a labelled networkData Secret as soon as it is added", async () => {
    // A SIP host whose service interface address is only in its networkData Secret, not yet there.
    const host = {
      apiVersion: "metal3.io/v1alpha1",
      kind: "BareMetalHost",
      metadata: { name: "r09-node-02", namespace: "metal3", labels: { "e2e.metalsynth.io/flavor": "late" } },
      spec: {
        online: true,
        bootMACAddress: "02:00:00:09:02:01",
        bmc: { address: "ipmi://10.9.0.2", credentialsName: "r09-node-02-bmc" },
        networkData: { name: "r09-node-02-networkdata", namespace: "metal3" },
      },
    };
    await must(kubectl, ["apply", "-f", "-"], stringify(host));
    await writeStatus(kubectl, host as KubeObject, {
      provisioning: { ID: "r09-node-02", state: "provisioned" },
      hardware: {
        cpu: { count: 16 },
        ramMebibytes: 65536,
        nics: [{ name: "eno1", mac: "02:00:00:09:02:01", ip: "172.22.9.2" }],
      },
    });
    const sip = stringify({
      apiVersion: "airship.airshipit.org/v1",
      kind: "SIPCluster",
      metadata: { name: "late", namespace: "edge-sip" },
      spec: {
        nodes: {
          ControlPlane: {
            labelSelector: { matchLabels: { "e2e.metalsynth.io/flavor": "late" } },
            count: { active: 1, standby: 0 },
          },
        },
        services: {
          loadBalancerControlPlane: [
            { image: "haproxy:2.3.2", nodeInterfaceId: "oam-ipv4", nodePort: 30444 },
          ],
        },
      },
    });
    const answer = async () => (await kubectl(["apply", "--dry-run=server", "-f", "-"], sip)).stderr;
    await eventually(
      async () => (await answer()).includes("ip-missing") || (await answer()).includes("oam-ipv4"),
      2_000,
      "host seen",
    );

    const networkData = JSON.stringify({
      networks: [{ id: "oam-ipv4", type: "ipv4", link: "eno1", ip_address: "10.41.9.2" }],
    });
    await must(
      kubectl,
      ["apply", "-f", "-"],
      stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: "r09-node-02-networkdata",
          namespace: "metal3",
          labels: { "metalsynth.io/network-data": "true" },
        },
        stringData: { networkData },
      }),
    );
    await eventually(async () => (await answer()) === "", 2_000, "networkData Secret seen");
  });

  it("fails /readyz while the API server is gone and recovers without a restart", async () => {
    expect(await webhook.probe("/readyz")).toBe(200);
    const restarted = plane.restartApiServer();
    await eventually(async () => (await webhook.probe("/readyz")) === 503, 30_000, "/readyz fails");
    await restarted;
    await eventually(async () => (await webhook.probe("/readyz")) === 200, 60_000, "/readyz recovers");
    const result = await kubectl(
      ["apply", "--dry-run=server", "-f", "-"],
      provisioning("after", { "mac-address": "b8:ce:f6:79:e4:c0" }),
    );
    expect(result.stderr).toContain("matches no BareMetalHost");
  });
});
