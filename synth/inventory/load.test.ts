import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { factsOf, makeBmh, networkDataSecret } from "../../test/builders/inventory.ts";
import { parseDocuments } from "../codec/read-documents.ts";
import type { SourcePosition } from "../issue.ts";
import { ipForInterface, ipForMac } from "./host.ts";
import { InventoryBuilder, buildInventory, type InventoryObject } from "./load.ts";

const FIXTURES = new URL("../../test/fixtures/inventory/", import.meta.url);
const MiB = 2 ** 20;

/** The objects of a YAML/JSON text, with positions, as the reader hands them over. */
function objectsOf(file: string, text: string): InventoryObject[] {
  const parsed = parseDocuments(file, text);
  expect(parsed.issues).toEqual([]);
  return parsed.documents.map((document) => ({
    value: document.value,
    source: document.position([]),
    position: document.position,
  }));
}

function fixture(name: string): InventoryObject[] {
  return objectsOf(name, readFileSync(new URL(name, FIXTURES), "utf8"));
}

/** Raw objects with a distinct source each (document order within one file). */
function raw(...values: unknown[]): InventoryObject[] {
  return values.map((value, index) => ({ value, source: at("snapshot.yaml", index + 1) }));
}

function at(file: string, line: number): SourcePosition {
  return { file, line, column: 1 };
}

describe("buildInventory: upstream samples", () => {
  it("reads the Metal3 full-status dump: hardware, dual-stack NICs merged, link-local ignored", () => {
    const { inventory, issues } = buildInventory(fixture("metal3/bmh-node-0-full-status.yaml"));
    expect(issues).toEqual([]);
    expect(inventory.size).toBe(1);
    const host = inventory.byId("metal3/node-0");
    expect(host).toEqual({
      id: "metal3/node-0",
      namespace: "metal3",
      name: "node-0",
      labels: {},
      bootMac: "00:ee:d0:b8:47:7d",
      macs: ["00:ee:d0:b8:47:7d", "00:ee:d0:b8:47:7f"],
      nics: [
        { name: "enp1s0", mac: "00:ee:d0:b8:47:7d", ipv4: "172.22.0.20" },
        { name: "enp2s0", mac: "00:ee:d0:b8:47:7f", ipv4: "192.168.111.20" },
      ],
      cpus: 2,
      memoryBytes: 4096 * MiB,
      cpuArch: "x86_64",
      cpuModel: "Intel Xeon E3-12xx v2 (Ivy Bridge)",
      cpuFlags: ["aes", "apic"],
      disks: [{ sizeBytes: 53687091200, rotational: true }],
      sriov: false,
      qat: false,
      provisioningState: "ready",
      osInstalled: false,
      networks: {},
      bmc: { address: "ipmi://192.168.111.1:6230", credentialsName: "node-0-bmc-secret" },
      source: { file: "metal3/bmh-node-0-full-status.yaml", line: 1, column: 1 },
    });
    expect(inventory.byMac("00:ee:d0:b8:47:7f")).toBe(host);
    expect(host && ipForMac(host, "00:ee:d0:b8:47:7d")).toBe("172.22.0.20");
  });

  it("reads the SIP samples: six hosts, networkData from base64 Secrets without namespace, BMC addresses", () => {
    const { inventory, issues } = buildInventory([
      ...fixture("airship-sip/bmh.yaml"),
      ...fixture("airship-sip/bmh_secrets.yaml"),
    ]);
    // The upstream sample copies one BMC address from host to host: read, and warned about (decision 0052).
    expect(new Set(issues.map((found) => `${found.severity} ${found.rule}`))).toEqual(
      new Set(["warning bmc-duplicate"]),
    );
    expect(inventory.hosts.map((host) => host.id)).toEqual([
      "default/rdm9r006o001",
      "default/rdm9r006o002",
      "default/rdm9r007o001",
      "default/rdm9r007o002",
      "default/rdm9r008o002",
      "default/rdm9r009o002",
    ]);
    const first = inventory.byId("default/rdm9r006o001");
    // Decoded from the sample's base64 networkData by hand: networks[1] is oam-ipv4 32.68.51.139.
    expect(first?.networks["oam-ipv4"]).toBe("32.68.51.139");
    expect(first?.networks["oam-ipv6"]).toBe("2001:1890:1001:293d::139");
    expect(first?.networks["pxe-ipv4"]).toBe("172.30.0.11");
    expect(first && ipForInterface(first, "oam-ipv4")).toBe("32.68.51.139");
    expect(inventory.byId("default/rdm9r006o002")?.networks["oam-ipv4"]).toBe("32.68.51.140");
    expect(first?.bmc).toEqual({
      address: "redfish+https://32.68.51.12/redfish/v1/Systems/System.Embedded.1",
      credentialsName: "rdm9r006o001-bmc-credentials",
    });
    expect(first?.labels["vino.airshipit.org/rack"]).toBe("r006");
    // No bootMACAddress and no status in the samples: no MACs, unknown resources.
    expect(first?.macs).toEqual([]);
    expect(first?.cpus).toBeUndefined();
    expect(inventory.withUnknownResources()).toHaveLength(6);
  });

  it("never keeps BMC credentials: the passwords appear nowhere in the result", () => {
    const result = buildInventory([
      ...fixture("airship-sip/bmh.yaml"),
      ...fixture("airship-sip/bmh_secrets.yaml"),
    ]);
    const everything = JSON.stringify({ hosts: result.inventory.hosts, issues: result.issues });
    for (const secret of ["TF5jJi9NT0NPdSU0", "L^c&/MOCOu%4", "cm9vdA==", "password", "username"]) {
      expect(everything).not.toContain(secret);
    }
  });
});

describe("buildInventory: accepted shapes", () => {
  it("reads a kubectl List: MAC formats, dual-stack IPv6, feature labels, states", () => {
    const { inventory, issues } = buildInventory(fixture("formats/kubectl-list.yaml"));
    expect(issues).toEqual([]);
    const [one, two] = inventory.hosts;
    expect(one).toMatchObject({
      id: "site-a/worker-1",
      macs: ["aa:bb:cc:00:00:01"],
      nics: [{ name: "eno1", mac: "aa:bb:cc:00:00:01", ipv4: "10.10.0.11", ipv6: "2001:db8::11" }],
      cpus: 32,
      memoryBytes: 128 * 1024 * MiB,
      sriov: true,
      qat: false,
      provisioningState: "externally provisioned",
      osInstalled: true,
      source: { file: "formats/kubectl-list.yaml", line: 3, column: 3 },
    });
    expect(two).toMatchObject({
      id: "site-a/worker-2",
      macs: ["aa:bb:cc:00:00:02"],
      nics: [],
      sriov: false,
      qat: true,
    });
    expect(two?.cpus).toBeUndefined();
    expect(two?.memoryBytes).toBeUndefined();
  });

  it("reads a BareMetalHostList whose items omit kind and apiVersion (raw API output)", () => {
    const { inventory, issues } = buildInventory(fixture("formats/bmh-list.json"));
    expect(issues).toEqual([]);
    expect(inventory.byId("site-a/worker-3")).toMatchObject({ cpus: 64, macs: ["aa:bb:cc:00:00:03"] });
  });

  it("shares one frozen list of disks and of CPU flags among hosts that report the same, as a rack does", () => {
    const inspected = (name: string, disks: readonly object[], flags: readonly string[]) => {
      const bmh = makeBmh({ name });
      const hardware = (bmh["status"] as { hardware: Record<string, unknown> }).hardware;
      hardware["storage"] = disks;
      (hardware["cpu"] as Record<string, unknown>)["flags"] = flags;
      return bmh;
    };
    const ssd = { name: "/dev/sda", sizeBytes: 960 * 10 ** 9, rotational: false };
    const { inventory, issues } = buildInventory(
      raw(
        inspected("node-a", [ssd], ["avx512f", "aes"]),
        inspected("node-b", [{ ...ssd, name: "/dev/nvme0n1" }], ["AES", "avx512f"]),
        inspected("node-c", [{ ...ssd, rotational: true }], ["aes"]),
        // A flag spelled as a disk's key stays a flag.
        inspected("node-d", [ssd], [`${960 * 10 ** 9}/false`]),
      ),
    );
    expect(issues).toEqual([]);
    const [a, b, c, d] = ["node-a", "node-b", "node-c", "node-d"].map((name) =>
      inventory.byId(`metal3/${name}`),
    );
    expect(a?.disks).toEqual([{ sizeBytes: 960 * 10 ** 9, rotational: false }]);
    expect(b?.disks).toBe(a?.disks);
    expect(b?.cpuFlags).toBe(a?.cpuFlags);
    expect(Object.isFrozen(a?.disks)).toBe(true);
    expect(c?.disks).toEqual([{ sizeBytes: 960 * 10 ** 9, rotational: true }]);
    expect(c?.cpuFlags).toEqual(["aes"]);
    expect(d?.cpuFlags).toEqual([`${960 * 10 ** 9}/false`]);
  });

  it("reads JSON and YAML of the same List to the same hosts", () => {
    const list = {
      apiVersion: "v1",
      kind: "List",
      items: [makeBmh({ name: "a" }), makeBmh({ name: "b", rack: "r1" })],
    };
    const fromJson = buildInventory(objectsOf("l.json", JSON.stringify(list, null, 2))).inventory.hosts;
    const fromYaml = buildInventory(objectsOf("l.yaml", stringify(list))).inventory.hosts;
    expect(fromJson.map(factsOf)).toEqual(fromYaml.map(factsOf));
    expect(fromJson).toHaveLength(2);
  });

  it("fills a BMH without status.hardware from its HardwareData; plain-YAML stringData networkData", () => {
    const { inventory, issues } = buildInventory(fixture("formats/hardwaredata.yaml"));
    expect(issues).toEqual([]);
    expect(inventory.byId("site-a/worker-4")).toMatchObject({
      cpus: 8,
      memoryBytes: 32768 * MiB,
      macs: ["aa:bb:cc:00:00:04", "aa:bb:cc:00:00:05"],
      nics: [
        { name: "eno1", mac: "aa:bb:cc:00:00:04", ipv4: "10.10.0.14" },
        { name: "eno2", mac: "aa:bb:cc:00:00:05" },
      ],
      // The DHCP network has no ip_address and is skipped.
      networks: { "oam-ipv4": "192.0.2.14" },
    });
  });

  it("keeps a BMH's own status.hardware over a HardwareData", () => {
    const hardwareData = {
      apiVersion: "metal3.io/v1alpha1",
      kind: "HardwareData",
      metadata: { name: "node-0", namespace: "metal3" },
      spec: { hardware: { cpu: { count: 99 }, ramMebibytes: 1 } },
    };
    const { inventory } = buildInventory(raw(makeBmh({ cpus: 4 }), hardwareData));
    expect(inventory.byId("metal3/node-0")?.cpus).toBe(4);
  });

  it("reads base64 JSON networkData and YAML stringData alike", () => {
    const { inventory, issues } = buildInventory(
      raw(
        makeBmh({ name: "a", networkData: { name: "a-nd" } }),
        makeBmh({ name: "b", networkData: { name: "b-nd", namespace: "metal3" } }),
        networkDataSecret("a-nd", "metal3", 1, true),
        networkDataSecret("b-nd", "metal3", 2, false),
      ),
    );
    expect(issues).toEqual([]);
    expect(inventory.byId("metal3/a")?.networks["oam-ipv4"]).toBe("32.68.0.1");
    expect(inventory.byId("metal3/b")?.networks["oam-ipv4"]).toBe("32.68.0.2");
  });

  it("prefers the networkData Secret in the referenced namespace over one without namespace", () => {
    const { inventory } = buildInventory(
      raw(
        makeBmh({ name: "a", namespace: "x", networkData: { name: "nd" } }),
        makeBmh({ name: "b", namespace: "y", networkData: { name: "nd" } }),
        networkDataSecret("nd", undefined, 1, true),
        networkDataSecret("nd", "x", 2, true),
      ),
    );
    expect(inventory.byId("x/a")?.networks["oam-ipv4"]).toBe("32.68.0.2");
    expect(inventory.byId("y/b")?.networks["oam-ipv4"]).toBe("32.68.0.1");
  });

  it.each<[string, string, string]>([
    ["colon, upper case", "AA:BB:CC:DD:EE:FF", "aa:bb:cc:dd:ee:ff"],
    ["dashes", "AA-BB-CC-DD-EE-01", "aa:bb:cc:dd:ee:01"],
    ["Cisco dotted", "aabb.ccdd.ee02", "aa:bb:cc:dd:ee:02"],
  ])("normalises MACs written with %s", (_name, written, normalised) => {
    const { inventory, issues } = buildInventory(
      raw(makeBmh({ bootMac: written, nics: [{ name: "eno1", mac: written }] })),
    );
    expect(issues).toEqual([]);
    expect(inventory.byMac(normalised)?.macs).toEqual([normalised]);
    expect(inventory.byMac(normalised)?.bootMac).toBe(normalised);
  });

  it("keeps the boot MAC, whose NIC gives a resource-chosen host its address (decision 0003)", () => {
    const { inventory } = buildInventory(
      raw(
        makeBmh({
          bootMac: "00:00:00:00:00:02",
          nics: [
            { name: "eno1", mac: "00:00:00:00:00:01", ip: "192.0.2.1" },
            { name: "eno2", mac: "00:00:00:00:00:02", ip: "192.0.2.2" },
          ],
        }),
      ),
    );
    expect(inventory.byId("default/node-0")?.bootMac ?? inventory.hosts[0]?.bootMac).toBe(
      "00:00:00:00:00:02",
    );
  });

  it("gives every host the same fields in the same order, absent ones undefined (one hidden class)", () => {
    const { inventory, issues } = buildInventory(
      raw(
        makeBmh({ name: "bare", bootMac: null, hardware: false, state: null, bmc: null }),
        makeBmh({
          name: "full",
          labels: {
            "sip.airshipit.org/cluster-namespace": "tenant",
            "sip.airshipit.org/cluster-name": "c1",
            "sip.airshipit.org/node-type": "ControlPlane",
          },
          networkData: { name: "full-network-data" },
        }),
        makeBmh({ name: "half", labels: { "sip.airshipit.org/cluster-name": "c1" } }),
      ),
    );
    expect(issues.filter((found) => found.severity === "error")).toEqual([]);
    const host = (name: string) => {
      const found = inventory.byId(`metal3/${name}`);
      if (found === undefined) throw new Error(`no host ${name}`);
      return found;
    };
    expect(host("bare").cpus).toBeUndefined();
    expect(host("full").sipOwner).toBeDefined();
    expect(host("half").sipPartial).toBeDefined();
    expect(Object.keys(host("bare"))).toEqual(Object.keys(host("full")));
    expect(Object.keys(host("half"))).toEqual(Object.keys(host("full")));
  });

  it("gives objects without metadata.namespace the namespace default", () => {
    const { inventory } = buildInventory(raw(makeBmh({ namespace: null })));
    expect(inventory.byId("default/node-0")?.namespace).toBe("default");
  });

  it("reads SIP ownership only when all three labels are there, and keeps a partial set apart", () => {
    const sip = {
      "sip.airshipit.org/cluster-namespace": "tenant",
      "sip.airshipit.org/cluster-name": "c1",
      "sip.airshipit.org/node-type": "ControlPlane",
    };
    const { inventory } = buildInventory(
      raw(
        makeBmh({ name: "owned", labels: sip }),
        makeBmh({ name: "half", labels: { "sip.airshipit.org/cluster-name": "c1" } }),
      ),
    );
    expect(inventory.byId("metal3/owned")?.sipOwner).toEqual({
      namespace: "tenant",
      name: "c1",
      nodeType: "ControlPlane",
    });
    expect(inventory.byId("metal3/half")?.sipOwner).toBeUndefined();
    // A partial set is a claim (decision 0032), so it is read, not dropped.
    expect(inventory.byId("metal3/half")?.sipPartial).toEqual({ name: "c1" });
    expect(inventory.byId("metal3/owned")?.sipPartial).toBeUndefined();
  });

  it("treats missing or zero hardware counts as unknown, never 0", () => {
    const { inventory, issues } = buildInventory(
      raw(
        makeBmh({ name: "a", cpus: null, ramMebibytes: null }),
        makeBmh({ name: "b", cpus: 0, ramMebibytes: 0 }),
      ),
    );
    expect(issues).toEqual([]);
    for (const host of inventory.hosts) {
      expect(host.cpus).toBeUndefined();
      expect(host.memoryBytes).toBeUndefined();
    }
  });

  it("skips other kinds silently, including Secrets that are not networkData", () => {
    const { inventory, issues } = buildInventory(
      raw(
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { a: "b" } },
        { apiVersion: "v1", kind: "Secret", metadata: { name: "bmc" }, data: { password: "c2VjcmV0" } },
        { apiVersion: "v1", kind: "List", items: [{ metadata: { name: "kindless" } }] },
      ),
    );
    expect(issues).toEqual([]);
    expect(inventory.size).toBe(0);
  });

  it("reports a known kind of another apiVersion, and documents that are no object", () => {
    const { inventory, issues } = buildInventory(
      raw(
        { apiVersion: "other.io/v1", kind: "BareMetalHost", metadata: { name: "not-metal3" } },
        { apiVersion: "v2", kind: "Secret", metadata: { name: "nd" }, stringData: { networkData: "{}" } },
        "a scalar",
        [1, 2],
        { apiVersion: "v1", kind: "List", items: { a: 1 } },
        { ...makeBmh({ name: "odd" }), spec: "not a map", status: [1] },
      ),
    );
    // The odd host is kept (it has a name), without what its malformed parts would have said.
    expect(inventory.hosts.map((host) => host.id)).toEqual(["metal3/odd"]);
    expect(
      issues.map((found) => `${found.rule} ${found.source?.line} ${found.path}: ${found.message}`),
    ).toEqual([
      'unknown-kind 1 apiVersion: BareMetalHost with apiVersion "other.io/v1" is not one metalsynth reads (expected metal3.io/v1alpha1); ignored',
      'unknown-kind 2 apiVersion: Secret with apiVersion "v2" is not one metalsynth reads (expected v1); ignored',
      'inventory-invalid 3 : a document or list item must be a Kubernetes object, not "a scalar"; ignored',
      "inventory-invalid 4 : a document or list item must be a Kubernetes object, not a list; ignored",
      "inventory-invalid 5 items: List.items must be a list, not a map; ignored",
      'inventory-invalid 6 spec: BareMetalHost spec must be a map, not "not a map"; it is ignored',
      "inventory-invalid 6 status: BareMetalHost status must be a map, not a list; it is ignored",
    ]);
  });
});

describe("buildInventory: inventory-unmatched and no-objects", () => {
  it("warns about HardwareData and networkData Secrets no host uses, and a Secret a host names that is missing", () => {
    const { inventory, issues } = buildInventory(
      raw(
        makeBmh({ name: "a", networkData: { name: "a-networkdata" } }),
        makeBmh({ name: "b", networkData: { name: "missing-networkdata" } }),
        networkDataSecret("a-networkdata", "metal3", 1, true),
        networkDataSecret("orphan-networkdata", "metal3", 2, true),
        {
          apiVersion: "metal3.io/v1alpha1",
          kind: "HardwareData",
          metadata: { name: "ghost", namespace: "metal3" },
          spec: { hardware: { cpu: { count: 8 } } },
        },
      ),
    );
    expect(inventory.size).toBe(2);
    expect(
      issues.map((found) => `${found.severity} ${found.rule} ${found.source?.line}: ${found.message}`),
    ).toEqual([
      "warning inventory-unmatched 2: BareMetalHost metal3/b names networkData Secret metal3/missing-networkdata, which is not in the inventory; SIP interface addresses fall back to NIC names (add the Secret to the inventory)",
      "warning inventory-unmatched 4: Secret metal3/orphan-networkdata holds networkData but no BareMetalHost names it in spec.networkData; it is not used",
      "warning inventory-unmatched 5: HardwareData metal3/ghost matches no BareMetalHost of the same namespace and name; it is not used",
    ]);
  });

  it("warns about an announced file that gives nothing the inventory uses, naming what it found", () => {
    const builder = new InventoryBuilder();
    for (const file of ["hosts.yaml", "configmaps.yaml", "empty.yaml", "broken.yaml"])
      builder.beginFile(file);
    builder.add({ value: makeBmh({ name: "a" }), source: at("hosts.yaml", 1) });
    builder.add({ value: { apiVersion: "v1", kind: "ConfigMap" }, source: at("configmaps.yaml", 3) });
    builder.add({ value: { apiVersion: "v1", kind: "ConfigMap" }, source: at("configmaps.yaml", 9) });
    builder.report({
      rule: "yaml-syntax",
      severity: "error",
      path: "",
      message: "bad",
      source: at("broken.yaml", 2),
    });
    const { issues } = builder.build();
    expect(
      issues.map((found) => `${found.rule} ${found.source?.file}:${found.source?.line}: ${found.message}`),
    ).toEqual([
      "yaml-syntax broken.yaml:2: bad",
      "no-objects configmaps.yaml:3: file holds no BareMetalHost, HardwareData or networkData Secret (found ConfigMap and 1 more object(s)); nothing in it is used",
      "no-objects empty.yaml:1: file holds no BareMetalHost, HardwareData or networkData Secret; nothing in it is used",
    ]);
  });
});

describe("buildInventory: inventory-invalid", () => {
  it.each<[string, unknown[], string, RegExp, number]>([
    [
      "a BMH without a name",
      [makeBmh({ name: "" })],
      "metadata.name",
      /BareMetalHost without metadata.name/,
      0,
    ],
    [
      "a malformed boot MAC (host kept)",
      [makeBmh({ bootMac: "00:11:22:33:44", nics: [{ name: "eno1", mac: "00:11:22:33:44:55" }] })],
      "spec.bootMACAddress",
      /metal3\/node-0: "00:11:22:33:44" is not a MAC address/,
      1,
    ],
    [
      "a malformed NIC MAC (host kept)",
      [
        makeBmh({
          nics: [
            { name: "eno1", mac: "00:11:22:33:44:55" },
            { name: "eno2", mac: "zz:11:22:33:44:55" },
          ],
        }),
      ],
      "status.hardware.nics[1].mac",
      /"zz:11:22:33:44:55" is not a MAC address/,
      1,
    ],
    [
      "a label value that is not a string",
      [{ ...makeBmh(), metadata: { name: "node-0", labels: { "feature.metalsynth.io/sriov": true } } }],
      'metadata.labels["feature.metalsynth.io/sriov"]',
      /must be a string; quote it \("true"\)/,
      1,
    ],
    [
      "a CPU count that is not a number",
      [{ ...makeBmh(), status: { hardware: { cpu: { count: "two" } } } }],
      "status.hardware.cpu.count",
      /"two" is not a positive whole number/,
      1,
    ],
    [
      "networkData that is not base64",
      [{ apiVersion: "v1", kind: "Secret", metadata: { name: "nd" }, data: { networkData: "not base64!" } }],
      "data.networkData",
      /Secret default\/nd: data.networkData is not base64/,
      0,
    ],
    [
      "networkData that is not JSON or YAML",
      [
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "nd" },
          stringData: { networkData: "{ networks: [" },
        },
      ],
      "stringData.networkData",
      /networkData is not JSON or YAML/,
      0,
    ],
    [
      "networkData without networks",
      [
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "nd" },
          stringData: { networkData: "links: []" },
        },
      ],
      "stringData.networkData",
      /has no "networks" list/,
      0,
    ],
    [
      "the same BMH twice",
      [makeBmh({ cpus: 1 }), makeBmh({ cpus: 2 })],
      "metadata.name",
      /metal3\/node-0 is defined twice \(first at snapshot.yaml:1\); this one is ignored/,
      1,
    ],
  ])("reports %s", (_name, values, path, message, hosts) => {
    const { inventory, issues } = buildInventory(raw(...values));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ rule: "inventory-invalid", severity: "error", path });
    expect(issues[0]?.message).toMatch(message);
    expect(issues[0]?.source?.file).toBe("snapshot.yaml");
    expect(inventory.size).toBe(hosts);
  });

  it("drops only the bad MAC and keeps the host", () => {
    const { inventory } = buildInventory(
      raw(makeBmh({ bootMac: "bad", nics: [{ name: "eno1", mac: "00:11:22:33:44:55" }] })),
    );
    expect(inventory.byId("metal3/node-0")?.macs).toEqual(["00:11:22:33:44:55"]);
  });

  it("points at the offending line when the reader knows positions", () => {
    const text = [
      "apiVersion: v1",
      "kind: List",
      "items:",
      "- apiVersion: metal3.io/v1alpha1",
      "  kind: BareMetalHost",
      "  metadata:",
      "    name: node-1",
      "  spec:",
      "    bootMACAddress: 00-11-22-33-44-5",
    ].join("\n");
    const { issues } = buildInventory(objectsOf("inv.yaml", text));
    expect(issues).toEqual([
      expect.objectContaining({
        rule: "inventory-invalid",
        path: "spec.bootMACAddress",
        source: { file: "inv.yaml", line: 9, column: 5 },
      }),
    ]);
  });

  it("keeps the first BMH in file/line order, whatever order the objects arrive in", () => {
    const early = { value: makeBmh({ cpus: 1 }), source: at("a.yaml", 10) };
    const late = { value: makeBmh({ cpus: 2 }), source: at("a.yaml", 20) };
    const otherFile = { value: makeBmh({ cpus: 3 }), source: at("b.yaml", 1) };
    for (const order of [
      [early, late, otherFile],
      [otherFile, late, early],
    ]) {
      const { inventory, issues } = buildInventory(order);
      expect(inventory.byId("metal3/node-0")?.cpus).toBe(1);
      expect(issues.map((found) => found.source)).toEqual([at("a.yaml", 20), at("b.yaml", 1)]);
    }
  });

  it("reports a repeated networkData Secret and uses the first", () => {
    const { inventory, issues } = buildInventory(
      raw(
        makeBmh({ networkData: { name: "nd" } }),
        networkDataSecret("nd", "metal3", 1, true),
        networkDataSecret("nd", "metal3", 2, true),
      ),
    );
    expect(issues).toEqual([expect.objectContaining({ rule: "inventory-invalid", path: "metadata.name" })]);
    expect(inventory.byId("metal3/node-0")?.networks["oam-ipv4"]).toBe("32.68.0.1");
  });
});

describe("buildInventory: determinism", () => {
  it("gives the same hosts and issues for any input order (property)", () => {
    const objects = raw(
      makeBmh({ name: "a", bootMac: "00:00:00:00:00:01", networkData: { name: "nd" } }),
      makeBmh({ name: "b", bootMac: "00:00:00:00:00:01" }),
      makeBmh({ name: "a", cpus: 99 }),
      makeBmh({ name: "c", bootMac: "nonsense", hardware: false }),
      {
        apiVersion: "metal3.io/v1alpha1",
        kind: "HardwareData",
        metadata: { name: "c", namespace: "metal3" },
        spec: { hardware: { cpu: { count: 7 } } },
      },
      networkDataSecret("nd", undefined, 1, false),
      networkDataSecret("nd", undefined, 2, true),
    );
    const expected = buildInventory(objects);
    expect(expected.issues.length).toBeGreaterThan(0);
    fc.assert(
      fc.property(fc.shuffledSubarray(objects, { minLength: objects.length }), (shuffled) => {
        const result = buildInventory(shuffled);
        expect(result.inventory.hosts).toEqual(expected.inventory.hosts);
        expect(result.issues).toEqual(expected.issues);
      }),
    );
  });
});

/** A networkData Secret (plain `stringData`) whose oam-ipv4 network has `address`. */
function secretWithAddress(name: string, address: string): unknown {
  const networks = [{ id: "oam-ipv4", type: "ipv4", link: "bond0", ip_address: address }];
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "metal3" },
    stringData: { networkData: JSON.stringify({ networks }) },
  };
}

describe("buildInventory: hosts set aside (issue #21, decision 0031)", () => {
  const injection = "10.41.0.11:6443 check\n    server evil 6.6.6.6";
  it.each([
    [
      "a BareMetalHost name with a newline (issue #21 case 2)",
      [makeBmh({ name: "a-node\n      server evil 6.6.6.6:6443", bmc: null }), makeBmh({ name: "good" })],
      "name-invalid",
      "metadata.name",
      "metal3/a-node\n      server evil 6.6.6.6:6443",
      1,
      /metadata.name "a-node\\n {6}server evil 6.6.6.6:6443" is not a DNS-1123 subdomain/,
    ],
    [
      "a namespace that is no DNS label (issue #21 case 5)",
      [makeBmh({ namespace: "Edge_A" })],
      "name-invalid",
      "metadata.namespace",
      "Edge_A/node-0",
      1,
      /metadata.namespace "Edge_A" is not a DNS-1123 label/,
    ],
    [
      "a NIC address with more than an address",
      [makeBmh({ nics: [{ name: "enp1s0", mac: "00:00:00:00:00:01", ip: "10.0.0.1 extra" }] })],
      "address-invalid",
      "status.hardware.nics[0].ip",
      "metal3/node-0",
      1,
      /NIC 00:00:00:00:00:01 has ip "10.0.0.1 extra", which is not an IPv4 address/,
    ],
    [
      "a BMC credentials Secret name that is no object name (the jump host mounts it)",
      [makeBmh({ bmc: { address: "ipmi://10.0.0.9", credentialsName: "bmc\n  evil: true" } })],
      "name-invalid",
      "spec.bmc.credentialsName",
      "metal3/node-0",
      1,
      /spec.bmc.credentialsName "bmc\\n {2}evil: true" is not a DNS-1123 subdomain/,
    ],
    [
      "a NIC address with a line break after it (nothing around an address is trimmed)",
      [makeBmh({ nics: [{ name: "enp1s0", mac: "00:00:00:00:00:01", ip: "10.0.0.1\n" }] })],
      "address-invalid",
      "status.hardware.nics[0].ip",
      "metal3/node-0",
      1,
      /NIC 00:00:00:00:00:01 has ip "10.0.0.1\\n", which is not an IPv4 address/,
    ],
    [
      "a networkData address carrying an haproxy server line (issue #21 case 1)",
      [makeBmh({ networkData: { name: "nd" } }), secretWithAddress("nd", injection)],
      "address-invalid",
      "stringData.networkData",
      "metal3/node-0",
      2,
      /network "oam-ipv4" has ip_address "10.41.0.11:6443 check\\n {4}server evil 6.6.6.6", which is not/,
    ],
  ])("sets aside %s", (_name, values, rule, path, host, line, message) => {
    const { inventory, issues } = buildInventory(raw(...values));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      rule,
      severity: "warning",
      path,
      host,
      source: at("snapshot.yaml", line),
    });
    expect(issues[0]?.message).toMatch(message);
    expect(issues[0]?.message).toMatch(/the host is set aside \(no cluster gets it\)$/);
    expect(inventory.byId(host)).toBeUndefined();
    expect(inventory.setAside.map((aside) => [aside.id, aside.rule])).toEqual([[host, rule]]);
  });

  it("sets aside both hosts of a repeated MAC, as Metal3's demo hosts have, and keeps the others", () => {
    const { inventory, issues } = buildInventory(
      raw(
        makeBmh({ name: "b", bootMac: "00:00:00:00:00:01" }),
        makeBmh({ name: "a", bootMac: "00:00:00:00:00:01" }),
        makeBmh({ name: "c" }),
      ),
    );
    expect(issues.map((found) => [found.rule, found.severity, found.path, found.host])).toEqual([
      ["inventory-invalid", "warning", "spec.bootMACAddress", "metal3/b"],
      ["inventory-invalid", "warning", "spec.bootMACAddress", "metal3/a"],
    ]);
    expect(issues[0]?.message).toMatch(/MAC 00:00:00:00:00:01 belongs to 2 hosts \(metal3\/a, metal3\/b\)/);
    expect(inventory.hosts.map((host) => host.id)).toEqual(["metal3/c"]);
    expect(inventory.setAsideByMac("00:00:00:00:00:01")?.id).toBe("metal3/a");
  });

  it("keeps a host whose only odd address is link-local or loopback", () => {
    const nics = [{ name: "enp1s0", mac: "00:00:00:00:00:01", ip: ["10.0.0.1", "fe80::1%enp1s0", "::1"] }];
    const { inventory, issues } = buildInventory(raw(makeBmh({ nics })));
    expect(issues).toEqual([]);
    expect(inventory.byId("metal3/node-0")?.nics).toEqual([
      { name: "enp1s0", mac: "00:00:00:00:00:01", ipv4: "10.0.0.1" },
    ]);
  });
});
