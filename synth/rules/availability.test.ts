import { describe, expect, it } from "vitest";
import { makeBmh, type BmhOptions, type RawObject } from "../../test/builders/inventory.ts";
import { evaluateYaml, rulesAndPaths } from "../../test/harness.ts";
import { clusterKey } from "../cluster-key.ts";
import type { Issue } from "../issue.ts";
import type { Inventory } from "../inventory/inventory.ts";
import { buildInventory } from "../inventory/load.ts";
import type { Lock, LockEntry } from "../model/lock.ts";
import type { BpaClusterPlan, SipClusterPlan } from "../plan/model.ts";
import { EMPTY_LOCK } from "./lock.ts";

/** Hosts `node-1`… in namespace metal3, each a raw BMH `change` may alter, read as a snapshot would be. */
function site(...hosts: { options?: BmhOptions; change?: (bmh: RawObject) => void }[]): Inventory {
  const raw = hosts.map(({ options, change }, index) => {
    const bmh = makeBmh({
      name: `node-${index + 1}`,
      labels: { "vino.airshipit.org/flavor": "control-plane" },
      ...options,
    });
    change?.(bmh);
    return { value: bmh, source: { file: "inventory/hosts.yaml", line: index * 40 + 1, column: 1 } };
  });
  return buildInventory(raw).inventory;
}

const spec = (bmh: RawObject) => bmh["spec"] as Record<string, unknown>;
const status = (bmh: RawObject) => bmh["status"] as Record<string, unknown>;
const metadata = (bmh: RawObject) => bmh["metadata"] as Record<string, unknown>;

/** The changes that make a host unavailable, each with what the finding quotes of it. */
const UNAVAILABLE: readonly [string, (bmh: RawObject) => void, RegExp][] = [
  [
    "consumed by a machine",
    (bmh) => (spec(bmh)["consumerRef"] = { kind: "Metal3Machine", namespace: "other", name: "m-1" }),
    /spec\.consumerRef: Metal3Machine other\/m-1/,
  ],
  [
    "being deleted",
    (bmh) => (metadata(bmh)["deletionTimestamp"] = "2026-11-29T04:00:00Z"),
    /metadata\.deletionTimestamp: 2026-11-29T04:00:00Z/,
  ],
  [
    "deprovisioning",
    (bmh) => (status(bmh)["provisioning"] = { state: "deprovisioning" }),
    /status\.provisioning\.state: deprovisioning/,
  ],
  ["switched off", (bmh) => (spec(bmh)["online"] = false), /spec\.online: false/],
  ["powered off", (bmh) => (status(bmh)["poweredOn"] = false), /status\.poweredOn: false/],
  [
    "in error",
    (bmh) => {
      status(bmh)["operationalStatus"] = "error";
      status(bmh)["errorType"] = "power management error";
    },
    /status\.operationalStatus: error; status\.errorType: power management error/,
  ],
  [
    "paused",
    (bmh) => (metadata(bmh)["annotations"] = { "baremetalhost.metal3.io/paused": "" }),
    /annotation baremetalhost\.metal3\.io\/paused/,
  ],
  [
    "detached",
    (bmh) => (metadata(bmh)["annotations"] = { "baremetalhost.metal3.io/detached": "{}" }),
    /annotation baremetalhost\.metal3\.io\/detached/,
  ],
];

function provisioning(body: string): string {
  return `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: alpha, namespace: edge-a, labels: {cluster: alpha}}
spec:
${body}`;
}

const BY_MAC = (mac: string) => provisioning(`  masters:\n    - master-1: {mac-address: "${mac}"}\n`);
const BY_RESOURCES = provisioning(`  masters:\n    - master-1: {cpu: 8}\n`);
const SIP = `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: tenant, namespace: edge}
spec:
  nodes:
    ControlPlane:
      labelSelector: {matchLabels: {vino.airshipit.org/flavor: control-plane}}
      count: {active: 1, standby: 0}
`;
const ALPHA = clusterKey("edge-a", "alpha");
const TENANT = clusterKey("edge", "tenant");

function bpaLock(host: string): Lock {
  const entry: LockEntry = { host, cluster: ALPHA, kind: "bpa", role: "master", node: "master-1" };
  return { entries: [entry] };
}

function sipLock(host: string): Lock {
  return { entries: [{ host, cluster: TENANT, kind: "sip", role: "ControlPlane" }] };
}

const errors = (issues: readonly Issue[]) => issues.filter((found) => found.severity === "error");
const bootMac = (inventory: Inventory, id: string) => inventory.byId(id)?.bootMac ?? "";

function bpaHosts(yaml: string, inventory: Inventory, lock: Lock): string[] {
  const plan = evaluateYaml(yaml, inventory, lock).plan.clusters.find(
    (cluster): cluster is BpaClusterPlan => cluster.kind === "bpa",
  );
  return plan?.masters.map((placement) => placement.host.id) ?? [];
}

function sipHosts(inventory: Inventory, lock: Lock): string[] {
  const plan = evaluateYaml(SIP, inventory, lock).plan.clusters.find(
    (cluster): cluster is SipClusterPlan => cluster.kind === "sip",
  );
  return plan?.members.map((member) => member.host.id) ?? [];
}

describe("host-vanished: a locked host the snapshot lost keeps its node (decision 0052)", () => {
  it("a BPA node chosen by resources: an error at its entry, and no other host for it", () => {
    const inventory = site({}, {});
    const { all } = evaluateYaml(BY_RESOURCES, inventory, bpaLock("metal3/node-9"));
    expect(rulesAndPaths(all)).toEqual(["host-vanished spec.masters[0].master-1"]);
    expect(all[0]?.message).toMatch(
      /host metal3\/node-9, which the lock gives to edge-a\/alpha as master master-1, is missing from the inventory snapshot; the node stays on it: restore the host, or run `metalsynth release metal3\/node-9`/,
    );
    expect(all[0]?.host).toBe("metal3/node-9");
    expect(bpaHosts(BY_RESOURCES, inventory, bpaLock("metal3/node-9"))).toEqual([]);
  });

  it("a BPA node chosen by a MAC no host has any more: the lock's host is named, not a typo hunt", () => {
    const inventory = site({});
    const { all } = evaluateYaml(BY_MAC("00:aa:bb:cc:dd:ee"), inventory, bpaLock("metal3/node-9"));
    expect(rulesAndPaths(all)).toEqual(["host-vanished spec.masters[0].master-1"]);
  });

  it("a host set aside says why, where", () => {
    const inventory = site(
      {},
      {
        change: (bmh) =>
          (status(bmh)["hardware"] = { nics: [{ mac: "00:11:22:33:44:55", ip: "10.0.0.2/24" }] }),
      },
    );
    const { all } = evaluateYaml(BY_RESOURCES, inventory, bpaLock("metal3/node-2"));
    const vanished = all.filter((found) => found.rule === "host-vanished");
    expect(rulesAndPaths(vanished)).toEqual(["host-vanished spec.masters[0].master-1"]);
    expect(vanished[0]?.message).toMatch(
      /is set aside in the inventory snapshot \(inventory\/hosts\.yaml:41\): NIC 00:11:22:33:44:55 has ip "10\.0\.0\.2\/24"/,
    );
  });

  it("a SIP role: an error at the role, and no host labelled in its stead", () => {
    const inventory = site({}, {});
    const { all } = evaluateYaml(SIP, inventory, sipLock("metal3/node-9"));
    expect(rulesAndPaths(errors(all))).toEqual(["host-vanished spec.nodes.ControlPlane"]);
    expect(sipHosts(inventory, sipLock("metal3/node-9"))).toEqual([]);
  });

  it("a SIP role that lost more hosts than it asks for now: one error each, and no host labelled in their stead", () => {
    const inventory = site({}, {});
    const lock: Lock = {
      entries: [
        ...sipLock("metal3/node-1").entries,
        ...sipLock("metal3/node-8").entries,
        ...sipLock("metal3/node-9").entries,
      ],
    };
    const { all } = evaluateYaml(SIP, inventory, lock);
    expect(rulesAndPaths(errors(all))).toEqual([
      "host-vanished spec.nodes.ControlPlane",
      "host-vanished spec.nodes.ControlPlane",
    ]);
    expect(sipHosts(inventory, lock)).toEqual([]);
  });

  it("says nothing of a released host, or of a cluster no longer in the site", () => {
    const inventory = site({});
    const released: Lock = {
      entries: [
        { host: "metal3/node-9", cluster: TENANT, kind: "sip", role: "ControlPlane", released: true },
      ],
    };
    expect(errors(evaluateYaml(SIP, inventory, released).all)).toEqual([]);
    expect(
      evaluateYaml(SIP, inventory, bpaLock("metal3/node-9")).all.map((found) => found.rule),
    ).not.toContain("host-vanished");
  });
});

describe("host-unavailable: a host named for a new node must be free, on and healthy", () => {
  it.each(UNAVAILABLE)("an error for a MAC entry naming a host %s", (_name, change, fact) => {
    const inventory = site({ change });
    const { all } = evaluateYaml(BY_MAC(bootMac(inventory, "metal3/node-1")), inventory, EMPTY_LOCK);
    expect(rulesAndPaths(errors(all))).toEqual(["host-unavailable spec.masters[0].master-1.mac-address"]);
    expect(errors(all)[0]?.message).toMatch(fact);
  });

  it.each(UNAVAILABLE)(
    "never chooses by resources a host %s, and the histogram says why",
    (_name, change) => {
      const inventory = site({ change });
      const { all } = evaluateYaml(BY_RESOURCES, inventory, EMPTY_LOCK);
      expect(rulesAndPaths(all)).toEqual(["no-fit spec.masters[0].master-1"]);
      expect(all[0]?.message).toMatch(
        /0\/1 hosts fit: 1 (consumed by another consumer|being deleted|powered off|in error|paused|detached)$/,
      );
    },
  );

  it.each(UNAVAILABLE)("never labels for a SIP role a host %s", (_name, change) => {
    const inventory = site({ change }, {});
    expect(sipHosts(inventory, EMPTY_LOCK)).toEqual(["metal3/node-2"]);
  });
});

describe("host-unavailable: a host a cluster holds keeps its node, with a warning", () => {
  const kept = UNAVAILABLE.filter(([name]) => name !== "consumed by a machine");

  it.each(kept)("a locked BPA host %s", (_name, change, fact) => {
    const inventory = site({ change }, {});
    const { all } = evaluateYaml(BY_RESOURCES, inventory, bpaLock("metal3/node-1"));
    const found = all.filter((issue) => issue.rule === "host-unavailable");
    expect(found.map((issue) => `${issue.severity} ${issue.rule} ${issue.path}`)).toEqual([
      "warning host-unavailable spec.masters[0].master-1",
    ]);
    expect(found[0]?.message).toMatch(fact);
    expect(bpaHosts(BY_RESOURCES, inventory, bpaLock("metal3/node-1"))).toEqual(["metal3/node-1"]);
  });

  it.each(kept)("a locked SIP host %s", (_name, change) => {
    const inventory = site({ change }, {});
    const { all } = evaluateYaml(SIP, inventory, sipLock("metal3/node-1"));
    expect(all.map((issue) => `${issue.severity} ${issue.rule} ${issue.path}`)).toEqual([
      "warning host-unavailable spec.nodes.ControlPlane",
    ]);
    expect(sipHosts(inventory, sipLock("metal3/node-1"))).toEqual(["metal3/node-1"]);
  });

  it("a consumer of a host the cluster holds is its own machine: no finding", () => {
    const [, consume] = UNAVAILABLE[0]!;
    const inventory = site({ change: consume });
    const mac = bootMac(inventory, "metal3/node-1");
    expect(evaluateYaml(BY_MAC(mac), inventory, bpaLock("metal3/node-1")).all).toEqual([]);
    expect(evaluateYaml(SIP, inventory, sipLock("metal3/node-1")).all).toEqual([]);
  });
});

describe("inventory hygiene", () => {
  it("bmc-duplicate: one machine registered twice, a warning on each naming the other", () => {
    const bmc = { address: "redfish://10.1.1.1/redfish/v1/Systems/1" };
    const { issues } = buildInventory(
      [
        makeBmh({ name: "a", bmc }),
        makeBmh({ name: "b", bmc: { address: "REDFISH://10.1.1.1/redfish/v1/Systems/1/" } }),
      ].map((value, line) => ({ value, source: { file: "inventory/hosts.yaml", line, column: 1 } })),
    );
    expect(issues.map((found) => `${found.severity} ${found.rule} ${found.host} ${found.path}`)).toEqual([
      "warning bmc-duplicate metal3/a spec.bmc.address",
      "warning bmc-duplicate metal3/b spec.bmc.address",
    ]);
    expect(issues[0]?.message).toMatch(/as metal3\/b does: one machine registered twice/);
  });

  it("keeps virtual BMCs on one IP with ports of their own apart", () => {
    const { issues } = buildInventory(
      [6230, 6231].map((port, line) => ({
        value: makeBmh({ name: `vm-${port}`, bmc: { address: `ipmi://192.168.111.1:${port}` } }),
        source: { file: "inventory/hosts.yaml", line, column: 1 },
      })),
    );
    expect(issues).toEqual([]);
  });

  it("ip-duplicate: two nodes a plan renders at one address, a warning on each naming the other", () => {
    const nic = (mac: string) => [{ name: "eno1", mac, ip: "10.20.0.5" }];
    const inventory = buildInventory(
      [
        makeBmh({ name: "a", bootMac: "00:00:00:00:00:0a", nics: nic("00:00:00:00:00:0a") }),
        makeBmh({ name: "b", bootMac: "00:00:00:00:00:0b", nics: nic("00:00:00:00:00:0b") }),
      ].map((value, line) => ({ value, source: { file: "inventory/hosts.yaml", line, column: 1 } })),
    ).inventory;
    const two = provisioning(
      `  masters:\n    - master-1: {mac-address: "00:00:00:00:00:0a"}\n    - master-2: {mac-address: "00:00:00:00:00:0b"}\n`,
    );
    const { all } = evaluateYaml(two, inventory, EMPTY_LOCK);
    expect(all.map((found) => `${found.severity} ${found.rule} ${found.host} ${found.path}`)).toEqual([
      "warning ip-duplicate metal3/a status.hardware.nics",
      "warning ip-duplicate metal3/b status.hardware.nics",
    ]);
    expect(all[0]?.message).toMatch(
      /metal3\/a serves edge-a\/alpha master master-1 at 10\.20\.0\.5, as metal3\/b for edge-a\/alpha master master-2 does/,
    );
    // Not rendered, not reported: one of them alone.
    expect(evaluateYaml(BY_MAC("00:00:00:00:00:0a"), inventory, EMPTY_LOCK).all).toEqual([]);
  });
});
