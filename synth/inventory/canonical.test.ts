import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { factsOf, makeBmh, networkDataSecret, type RawObject } from "../../test/builders/inventory.ts";
import { REPO } from "../../test/harness.ts";
import { parseDocuments } from "../codec/read-documents.ts";
import type { Issue } from "../issue.ts";
import { canonicalFiles, SNAPSHOT_MARKER } from "./canonical.ts";
import { ipForInterface, ipForMac, type Host } from "./host.ts";
import { buildInventory, documentObjects, type InventoryObject } from "./load.ts";

/** The objects of YAML/JSON texts, as the file reader hands them over. */
function objectsOf(files: ReadonlyMap<string, string>): InventoryObject[] {
  return [...files].flatMap(([file, text]) => {
    const parsed = parseDocuments(file, text);
    expect(parsed.issues).toEqual([]);
    return documentObjects(parsed.documents);
  });
}

/** Raw objects, each its own document of `raw.yaml`. */
function raw(values: readonly unknown[]): InventoryObject[] {
  return values.map((value, index) => ({ value, source: { file: "raw.yaml", line: index + 1, column: 1 } }));
}

/**
 * The hosts the snapshot of `hosts` reads back as. Its findings are some of `found`, the findings of
 * reading the original objects (by message: the files differ), and none at all by default.
 */
function reread(
  hosts: readonly Host[],
  options: { fileLabel?: string; found?: readonly Issue[] } = {},
): readonly Host[] {
  const files = canonicalFiles(
    hosts,
    options.fileLabel === undefined ? {} : { fileLabel: options.fileLabel },
  );
  const { inventory, issues } = buildInventory(objectsOf(files));
  const known = new Set((options.found ?? []).map((found) => `${found.rule} ${found.message}`));
  expect(issues.filter((found) => !known.has(`${found.rule} ${found.message}`))).toEqual([]);
  return inventory.hosts;
}

/**
 * A host's facts with its NICs in one order: the snapshot sorts NICs where their order decides
 * nothing (see {@link answers} for where it does).
 */
function sortedFacts(host: Host): unknown {
  const nics = [...host.nics].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return { ...factsOf(host), nics };
}

/** Every address question planning asks of a host: each MAC's IP, each interface's IP. */
function answers(host: Host): Record<string, string | undefined> {
  const names = [...new Set([...host.nics.map((nic) => nic.name), ...Object.keys(host.networks)])];
  return Object.fromEntries([
    ...host.macs.map((mac) => [`mac ${mac}`, ipForMac(host, mac)]),
    ...names.map((name) => [`interface ${name}`, ipForInterface(host, name)]),
  ]);
}

function expectSameHosts(before: readonly Host[], after: readonly Host[]): void {
  expect(after.map(sortedFacts)).toEqual(before.map(sortedFacts));
  expect(after.map(answers)).toEqual(before.map(answers));
}

const SMALL = [
  makeBmh({
    name: "r01-node-01",
    rack: "r01",
    sriov: true,
    bootMac: "E4-43-4B-9B-9B-10",
    nics: [
      { name: "ens1f0", mac: "3c:fd:fe:d1:a6:e4", ip: ["10.23.1.11", "fe80::1%ens1f0", "fd00:23::11"] },
      { name: "eno1", mac: "e4:43:4b:9b:9b:10", ip: "172.22.0.11" },
      { name: "eno2", mac: "e4:43:4b:9b:9b:11" },
    ],
    networkData: { name: "r01-node-01-networkdata" },
  }),
  networkDataSecret("r01-node-01-networkdata", "metal3", 11, true),
];

describe("canonicalFiles: the snapshot's bytes", () => {
  it("writes only what the loader reads, keys and lists sorted, Secrets as plain addresses", () => {
    const { inventory } = buildInventory(raw(SMALL));
    expect([...canonicalFiles(inventory.hosts)]).toEqual([
      [
        "metal3.yaml",
        `${SNAPSHOT_MARKER} the BareMetalHosts of namespace metal3,
# only the fields metalsynth reads. Refresh with \`metalsynth inventory pull\`; never apply it to a
# cluster (its Secrets hold only the networkData addresses).
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  labels:
    feature.metalsynth.io/sriov: "true"
    vino.airshipit.org/rack: r01
  name: r01-node-01
  namespace: metal3
spec:
  bmc:
    address: redfish://10.215.173.110/redfish/v1/Systems/1
    credentialsName: r01-node-01-bmc-secret
  bootMACAddress: e4:43:4b:9b:9b:10
  networkData:
    name: r01-node-01-networkdata
    namespace: metal3
status:
  hardware:
    cpu:
      arch: x86_64
      count: 16
      model: Intel Xeon
    nics:
      - ip: 172.22.0.11
        mac: e4:43:4b:9b:9b:10
        name: eno1
      - mac: e4:43:4b:9b:9b:11
        name: eno2
      - ip: 10.23.1.11
        mac: 3c:fd:fe:d1:a6:e4
        name: ens1f0
      - ip: fd00:23::11
        mac: 3c:fd:fe:d1:a6:e4
        name: ens1f0
    ramMebibytes: 65536
  provisioning:
    state: provisioned
---
apiVersion: v1
kind: Secret
metadata:
  name: r01-node-01-networkdata
  namespace: metal3
stringData:
  networkData: |
    networks:
      - id: oam-ipv4
        ip_address: 32.68.0.11
      - id: oam-ipv6
        ip_address: 2001:1890:1001:293d::b
      - id: pxe-ipv4
        ip_address: 172.30.0.11
`,
      ],
    ]);
  });

  it("never writes a Secret value but the networkData addresses, nor anything of a credentials Secret", () => {
    const secret = networkDataSecret("nd", "metal3", 1, false) as RawObject & {
      stringData: Record<string, string>;
    };
    secret.stringData["password"] = "hunter2-planted";
    secret.stringData["networkData"] =
      `links: [{ id: eno1, password: link-planted }]\nnetworks:\n  - { id: oam, ip_address: 10.0.0.1, token: net-planted }\n`;
    const credentials = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "a-bmc-secret", namespace: "metal3" },
      data: { username: "cm9vdA==", password: Buffer.from("bmc-planted").toString("base64") },
    };
    const { inventory } = buildInventory(
      raw([makeBmh({ name: "a", networkData: { name: "nd" } }), secret, credentials]),
    );
    const text = [...canonicalFiles(inventory.hosts).values()].join("");
    for (const planted of ["planted", "hunter2", "cm9vdA==", "password", "token", "links"])
      expect(text).not.toContain(planted);
    expect(text).toContain("ip_address: 10.0.0.1");
  });

  it("is the same for the same hosts, whatever order and shape they came in", () => {
    const objects = [
      ...SMALL,
      makeBmh({ name: "b", namespace: "edge" }),
      makeBmh({ name: "a", rack: "r02", hardware: false }),
      {
        apiVersion: "metal3.io/v1alpha1",
        kind: "HardwareData",
        metadata: { name: "a", namespace: "metal3" },
        spec: { hardware: { cpu: { count: 8 }, ramMebibytes: 4096, nics: [] } },
      },
    ];
    const reference = canonicalFiles(buildInventory(raw(objects)).inventory.hosts);
    expect([...reference.keys()]).toEqual(["edge.yaml", "metal3.yaml"]);
    fc.assert(
      fc.property(fc.shuffledSubarray(objects, { minLength: objects.length }), (shuffled) => {
        expect(canonicalFiles(buildInventory(raw(shuffled)).inventory.hosts)).toEqual(reference);
      }),
      { numRuns: 30 },
    );
    // Written once more from what it reads back: the same bytes (a fixed point).
    expect(canonicalFiles(reread(buildInventory(raw(objects)).inventory.hosts))).toEqual(reference);
  });

  it("with a file label, one file per namespace and label value; hosts without it per namespace", () => {
    const { inventory } = buildInventory(
      raw([makeBmh({ name: "a", rack: "r01" }), makeBmh({ name: "b", rack: "r02" }), makeBmh({ name: "c" })]),
    );
    const files = canonicalFiles(inventory.hosts, { fileLabel: "vino.airshipit.org/rack" });
    expect([...files.keys()]).toEqual(["metal3.yaml", "metal3/r01.yaml", "metal3/r02.yaml"]);
    expect(files.get("metal3.yaml")?.split("\n")[0]).toBe(
      `${SNAPSHOT_MARKER} the BareMetalHosts of namespace metal3 without a vino.airshipit.org/rack label,`,
    );
    expect(reread(inventory.hosts, { fileLabel: "vino.airshipit.org/rack" }).map(sortedFacts)).toEqual(
      inventory.hosts.map(sortedFacts),
    );
  });

  it("keeps the inspection's NIC order where it decides an address (a bond sharing its member's MAC)", () => {
    const nics = [
      { name: "bond0", mac: "aa:bb:cc:00:00:01", ip: "10.0.0.2" },
      { name: "eno1", mac: "aa:bb:cc:00:00:01", ip: "10.0.0.1" },
    ];
    for (const order of [nics, [...nics].reverse()]) {
      const { inventory } = buildInventory(
        raw([makeBmh({ name: "a", bootMac: "aa:bb:cc:00:00:01", nics: order })]),
      );
      const [host] = inventory.hosts;
      const [again] = reread(inventory.hosts);
      expect(again && ipForMac(again, "aa:bb:cc:00:00:01")).toBe(order[0]?.ip);
      expect(again?.nics).toEqual(host?.nics);
    }
  });
});

describe("canonicalFiles: reads back as the hosts it was written from", () => {
  const fixtures = path.join(REPO, "test", "fixtures");
  const files = (dir: string) =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(ya?ml|json)$/.test(entry.name))
      .map((entry) => path.join(entry.parentPath, entry.name));
  it.each([
    ["the example site", files(path.join(REPO, "examples", "site", "inventory"))],
    [
      "the Metal3 full-status sample",
      [path.join(fixtures, "inventory", "metal3", "bmh-node-0-full-status.yaml")],
    ],
    ["the SIP samples (Secrets without namespace)", files(path.join(fixtures, "inventory", "airship-sip"))],
    ["the format samples", files(path.join(fixtures, "inventory", "formats"))],
    ["the rule fixtures", files(path.join(fixtures, "rules"))],
    ["the upstream anchors", files(path.join(fixtures, "anchors-inventory"))],
  ])("%s", (_name, paths) => {
    const texts = new Map(paths.map((file) => [path.relative(REPO, file), readFileSync(file, "utf8")]));
    const { inventory, issues } = buildInventory(objectsOf(texts));
    expect(inventory.size).toBeGreaterThan(0);
    // What the data says of itself (the SIP sample repeats BMC addresses) it says again when reread.
    expectSameHosts(inventory.hosts, reread(inventory.hosts, { found: issues }));
  });

  it("random hosts: dual-stack, shared MACs, HardwareData, networkData of every kind, odd labels (property)", () => {
    const mac = fc.constantFrom(
      "aa:bb:cc:00:00:01",
      "AA-BB-CC-00-00-02",
      "aabb.cc00.0003",
      "aa:bb:cc:00:00:04",
      "aa:bb:cc:00:00:05",
    );
    const ip = fc.constantFrom("10.0.0.1", "10.0.0.2", "fd00::1", "fe80::1%eno1", "2001:db8::5", "");
    const nic = fc.record({
      name: fc.constantFrom("eno1", "eno2", "bond0", "", "constructor"),
      mac,
      ip: fc.option(fc.array(ip, { maxLength: 3 }), { nil: undefined }),
    });
    const label = fc.tuple(
      fc.constantFrom(
        "rack",
        "feature.metalsynth.io/sriov",
        "__proto__",
        "a.b/c",
        "sip.airshipit.org/node-type",
      ),
      fc.constantFrom("r01", "true", "", "yes", "0x1F", "Worker"),
    );
    const host = fc.record({
      name: fc.constantFrom("a", "b", "c"),
      namespace: fc.constantFrom("metal3", "edge", null),
      labels: fc.array(label, { maxLength: 4 }).map((pairs) => Object.fromEntries(pairs)),
      bootMac: fc.option(mac, { nil: null }),
      nics: fc.array(nic, { maxLength: 4 }),
      cpus: fc.constantFrom(16, 1, null),
      ramMebibytes: fc.constantFrom(65536, 1536, null),
      hardware: fc.boolean(),
      hardwareData: fc.boolean(),
      state: fc.constantFrom("provisioned", "externally provisioned", "available", null),
      bmc: fc.constantFrom(
        null,
        { address: "ipmi://10.0.0.9" },
        { address: "redfish://x", credentialsName: "c" },
      ),
      networkData: fc.constantFrom("none", "base64", "plain", "empty", "missing", "namespaceless"),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(host, { selector: (h) => `${h.namespace}/${h.name}`, maxLength: 4 }),
        (hosts) => {
          const objects: unknown[] = [];
          hosts.forEach((options, index) => {
            const { networkData, hardwareData, ...bmh } = options;
            const reference = networkData === "none" ? undefined : { name: `${options.name}-nd` };
            objects.push(
              makeBmh({
                ...bmh,
                nics: options.nics.map((entry) =>
                  entry.ip === undefined ? { name: entry.name, mac: entry.mac } : entry,
                ),
                ...(reference && { networkData: reference }),
              }),
            );
            if (hardwareData) {
              objects.push({
                apiVersion: "metal3.io/v1alpha1",
                kind: "HardwareData",
                metadata: {
                  name: options.name,
                  ...(options.namespace !== null && { namespace: options.namespace }),
                },
                spec: {
                  hardware: {
                    cpu: { count: 4 },
                    nics: [{ name: "hd0", mac: `aa:bb:cc:00:01:0${index}`, ip: "10.9.9.9" }],
                  },
                },
              });
            }
            const secretNamespace =
              options.networkData === "namespaceless" ? undefined : (options.namespace ?? undefined);
            if (["base64", "plain", "namespaceless"].includes(options.networkData))
              objects.push(
                networkDataSecret(
                  `${options.name}-nd`,
                  secretNamespace,
                  index,
                  options.networkData === "base64",
                ),
              );
            if (options.networkData === "empty") {
              objects.push({
                apiVersion: "v1",
                kind: "Secret",
                metadata: {
                  name: `${options.name}-nd`,
                  ...(secretNamespace !== undefined && { namespace: secretNamespace }),
                },
                stringData: { networkData: "networks:\n  - { id: dhcp, type: ipv4_dhcp }\n" },
              });
            }
          });
          const { inventory, issues } = buildInventory(raw(objects));
          expectSameHosts(inventory.hosts, reread(inventory.hosts, { found: issues }));
        },
      ),
      { numRuns: 300 },
    );
  });
});
