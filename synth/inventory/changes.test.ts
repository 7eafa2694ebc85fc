import { describe, expect, it } from "vitest";
import { makeHost, type HostOptions } from "../../test/builders/inventory.ts";
import { inventoryChanges, sameFacts } from "./changes.ts";
import type { Host } from "./host.ts";

const GiB = 2 ** 30;
const NICS = [
  { name: "eno1", mac: "aa:bb:cc:00:00:01", ipv4: "172.22.0.11" },
  { name: "ens1f0", mac: "aa:bb:cc:00:00:02", ipv4: "10.23.1.11" },
];
const BASE: HostOptions = {
  name: "r01-node-01",
  rack: "r01",
  nics: NICS,
  bootMac: "aa:bb:cc:00:00:01",
  cpus: 48,
  memoryBytes: 192 * GiB,
  bmc: { address: "ipmi://10.20.1.11", credentialsName: "r01-node-01-bmc" },
  networks: { "oam-ipv4": "10.41.0.11" },
  networkData: { namespace: "metal3", name: "r01-node-01-nd", found: true },
};

function host(overrides: HostOptions = {}): Host {
  return makeHost({ ...BASE, ...overrides });
}

describe("inventoryChanges", () => {
  it.each<[string, HostOptions, string[]]>([
    [
      "a NIC renumbered",
      { nics: [NICS[0]!, { ...NICS[1]!, ipv4: "10.23.1.12" }] },
      ["nic ens1f0 ip 10.23.1.11 → 10.23.1.12"],
    ],
    [
      "a NIC replaced (new MAC, same name)",
      { nics: [NICS[0]!, { ...NICS[1]!, mac: "aa:bb:cc:00:00:09" }] },
      ["nic ens1f0 mac aa:bb:cc:00:00:02 → aa:bb:cc:00:00:09"],
    ],
    [
      "a NIC's IPv6 added",
      { nics: [NICS[0]!, { ...NICS[1]!, ipv6: "fd00::1" }] },
      ["nic ens1f0 ipv6 none → fd00::1"],
    ],
    [
      "a NIC added and one gone",
      { nics: [NICS[0]!, { name: "ens2f0", mac: "aa:bb:cc:00:00:03" }] },
      ["nic ens1f0 removed (aa:bb:cc:00:00:02, 10.23.1.11)", "nic ens2f0 added (aa:bb:cc:00:00:03)"],
    ],
    ["more CPUs", { cpus: 64 }, ["cpus 48 → 64"]],
    [
      "hardware details gone",
      { cpus: undefined, memoryBytes: undefined },
      ["cpus 48 → unknown", "memory 192Gi → unknown"],
    ],
    ["memory in MiB", { memoryBytes: 1536 * 2 ** 20 }, ["memory 192Gi → 1536Mi"]],
    [
      "labels: one changed, one added, one removed",
      { rack: "r02", labels: { "feature.metalsynth.io/sriov": "true" } },
      ["label feature.metalsynth.io/sriov=true added", "label vino.airshipit.org/rack r01 → r02"],
    ],
    ["the boot MAC", { bootMac: "aa:bb:cc:00:00:02" }, ["boot MAC aa:bb:cc:00:00:01 → aa:bb:cc:00:00:02"]],
    [
      "the provisioning state",
      { provisioningState: "deprovisioning" },
      ["provisioning state provisioned → deprovisioning"],
    ],
    [
      "the BMC",
      { bmc: { address: "redfish://10.20.1.11", credentialsName: "other" } },
      ["bmc address ipmi://10.20.1.11 → redfish://10.20.1.11", "bmc credentials r01-node-01-bmc → other"],
    ],
    [
      "a network address",
      { networks: { "oam-ipv4": "10.41.0.99" } },
      ["network oam-ipv4 10.41.0.11 → 10.41.0.99"],
    ],
    [
      "the networkData Secret gone from the cluster",
      { networks: {}, networkData: { namespace: "metal3", name: "r01-node-01-nd", found: false } },
      ["networkData Secret present → missing", "network oam-ipv4 removed (was 10.41.0.11)"],
    ],
    [
      "another networkData Secret named",
      { networkData: { namespace: "metal3", name: "other-nd", found: true } },
      ["networkData metal3/r01-node-01-nd → metal3/other-nd"],
    ],
  ])("%s: one line per fact", (_name, overrides, lines) => {
    expect(inventoryChanges([host()], [host(overrides)])).toEqual([
      { host: "metal3/r01-node-01", status: "changed", changes: lines },
    ]);
  });

  it("hosts added and removed, sorted by id; equal hosts left out whatever their source", () => {
    const before = [host(), host({ name: "gone" })];
    const after = [host({ source: { file: "other.yaml", line: 9, column: 1 } }), host({ name: "added" })];
    expect(inventoryChanges(before, after)).toEqual([
      { host: "metal3/added", status: "added", changes: [] },
      { host: "metal3/gone", status: "removed", changes: [] },
    ]);
  });

  it("NIC order matters only where it decides an address, and then is named", () => {
    const reordered = host({ nics: [...NICS].reverse() });
    expect(sameFacts(host(), reordered)).toBe(true);
    const bond = [
      { name: "bond0", mac: "aa:bb:cc:00:00:01", ipv4: "10.0.0.2" },
      { name: "eno1", mac: "aa:bb:cc:00:00:01", ipv4: "10.0.0.1" },
    ];
    const [a, b] = [host({ nics: bond }), host({ nics: [...bond].reverse() })];
    expect(sameFacts(a, b)).toBe(false);
    expect(inventoryChanges([a], [b])[0]?.changes).toEqual([
      "nic order (which address a shared MAC or name gets)",
    ]);
  });
});
