import { describe, expect, it } from "vitest";
import { RACK_LABEL, makeHost, type HostOptions } from "../../test/builders/inventory.ts";
import { parseCpuModelMatch } from "../checked.ts";
import { cpuFlags } from "../site/hardware.ts";
import { clusterKey } from "../cluster-key.ts";
import type { Host } from "../inventory/host.ts";
import { changedFacts } from "../inventory/host-facts.ts";
import { ClaimLedger } from "../plan/claim-ledger.ts";
import {
  FILTER_PLUGINS,
  fitHistogram,
  rejection,
  rejectionText,
  rejections,
  resourceFilters,
} from "./filters.ts";
import { ARCH } from "./filters/arch.ts";
import { AVAILABLE } from "./filters/available.ts";
import { CPU_FLAGS } from "./filters/cpu-flags.ts";
import { CPU_MODEL } from "./filters/cpu-model.ts";
import { CPUS } from "./filters/cpus.ts";
import { DISK } from "./filters/disk.ts";
import { INTERFACE, addressed } from "./filters/interface.ts";
import { MEMORY } from "./filters/memory.ts";
import { NAMED } from "./filters/named.ts";
import { NIC_SPEED } from "./filters/nic-speed.ts";
import { OTHER_ROLE } from "./filters/other-role.ts";
import { PICK } from "./filters/pick.ts";
import type { HostFilter, Rejection } from "./filters/plugin.ts";
import { QAT } from "./filters/qat.ts";
import { SELECTOR, selected } from "./filters/selector.ts";
import { SRIOV } from "./filters/sriov.ts";
import { TOPOLOGY, topologySpread } from "./filters/topology.ts";
import { UNCLAIMED, unclaimed } from "./filters/unclaimed.ts";
import { UNUSED, unused } from "./filters/unused.ts";

const key = (name: string) => clusterKey("ns", name);
const cpuModel = parseCpuModelMatch;
const nic = (index: number) => ({ name: `eth${index}`, mac: `02:00:00:00:00:0${index}` });

const GI = 2 ** 30;
const held = makeHost({ name: "held" });
const ledger = new ClaimLedger();
ledger.claim(held, key("other"), "test");
const needs = { sriov: false, qat: false };
const only = (filters: readonly HostFilter[]): HostFilter => {
  if (filters.length !== 1 || !filters[0]) throw new Error("one filter expected");
  return filters[0];
};

describe("host filters", () => {
  it.each<[string, HostFilter, HostOptions | Host, Rejection | undefined]>([
    ["Unclaimed passes a free host", unclaimed(ledger.view(), key("c1")), { name: "free" }, undefined],
    ["Unclaimed passes the cluster's own host", unclaimed(ledger.view(), key("other")), held, undefined],
    [
      "Unclaimed rejects another cluster's host",
      unclaimed(ledger.view(), key("c1")),
      held,
      { filter: UNCLAIMED.name, reason: "claimed" },
    ],
    ["Unused rejects a sibling's host", unused(() => true), {}, { filter: UNUSED.name, reason: "taken" }],
    ["Cpus passes enough CPUs", only(resourceFilters({ ...needs, cpus: 16 })), { cpus: 16 }, undefined],
    [
      "Cpus rejects too few, saying how many",
      only(resourceFilters({ ...needs, cpus: 20 })),
      { cpus: 16 },
      { filter: CPUS.name, reason: "insufficient", requested: 20, available: 16 },
    ],
    [
      "Cpus can't check a host without hardware details",
      only(resourceFilters({ ...needs, cpus: 20 })),
      { cpus: undefined },
      { filter: CPUS.name, reason: "unknown", requested: 20 },
    ],
    [
      "Memory rejects too little",
      only(resourceFilters({ ...needs, memoryBytes: 96 * GI })),
      { memoryBytes: 64 * GI },
      { filter: MEMORY.name, reason: "insufficient", requested: 96 * GI, available: 64 * GI },
    ],
    [
      "Sriov rejects a host not labelled capable",
      only(resourceFilters({ ...needs, sriov: true })),
      {},
      { filter: SRIOV.name, reason: "not-capable" },
    ],
    [
      "Qat passes a host labelled capable",
      only(resourceFilters({ ...needs, qat: true })),
      { qat: true },
      undefined,
    ],
    [
      "Arch passes the architecture asked for",
      only(resourceFilters({ ...needs, arch: "aarch64" })),
      { cpuArch: "aarch64" },
      undefined,
    ],
    [
      "Arch rejects another architecture, saying which",
      only(resourceFilters({ ...needs, arch: "aarch64" })),
      { cpuArch: "x86_64" },
      { filter: ARCH.name, reason: "mismatch", requested: "aarch64", available: "x86_64" },
    ],
    [
      "Arch can't check a host whose inspection reports no architecture",
      only(resourceFilters({ ...needs, arch: "x86_64" })),
      {},
      { filter: ARCH.name, reason: "unknown", requested: "x86_64" },
    ],
    [
      "CpuModel passes a model containing the text, whatever its case and trademark marks",
      only(resourceFilters({ ...needs, cpuModel: cpuModel("xeon  GOLD") })),
      { cpuModel: "Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz" },
      undefined,
    ],
    [
      "CpuModel rejects another model, saying which",
      only(resourceFilters({ ...needs, cpuModel: cpuModel("EPYC") })),
      { cpuModel: "Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz" },
      {
        filter: CPU_MODEL.name,
        reason: "mismatch",
        requested: "epyc",
        available: "Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz",
      },
    ],
    [
      "CpuModel can't check a host whose inspection reports no model",
      only(resourceFilters({ ...needs, cpuModel: cpuModel("EPYC") })),
      {},
      { filter: CPU_MODEL.name, reason: "unknown", requested: "epyc" },
    ],
    [
      "CpuFlags passes a host with every flag",
      only(resourceFilters({ ...needs, cpuFlags: cpuFlags(["AVX512F", "aes"]) })),
      { cpuFlags: cpuFlags(["aes", "avx512f", "sse4_2"]) },
      undefined,
    ],
    [
      "CpuFlags rejects a host lacking one, naming what it lacks",
      only(resourceFilters({ ...needs, cpuFlags: cpuFlags(["avx512f", "aes", "amx_tile"]) })),
      { cpuFlags: cpuFlags(["aes", "sse4_2"]) },
      {
        filter: CPU_FLAGS.name,
        reason: "missing",
        requested: "aes amx_tile avx512f",
        available: "amx_tile avx512f",
      },
    ],
    [
      "CpuFlags can't check a host whose inspection lists no flags",
      only(resourceFilters({ ...needs, cpuFlags: cpuFlags(["avx512f"]) })),
      {},
      { filter: CPU_FLAGS.name, reason: "unknown", requested: "avx512f" },
    ],
    [
      "NicSpeed passes a host with one NIC fast enough",
      only(resourceFilters({ ...needs, nicSpeedGbps: 25 })),
      {
        nics: [
          { ...nic(1), speedGbps: 1 },
          { ...nic(2), speedGbps: 25 },
        ],
      },
      undefined,
    ],
    [
      "NicSpeed rejects a host whose fastest NIC is slower, saying how fast",
      only(resourceFilters({ ...needs, nicSpeedGbps: 25 })),
      { nics: [{ ...nic(1), speedGbps: 10 }, nic(2)] },
      { filter: NIC_SPEED.name, reason: "slow", requested: 25, available: 10 },
    ],
    [
      "NicSpeed can't check a host whose inspection reports no speed",
      only(resourceFilters({ ...needs, nicSpeedGbps: 25 })),
      {},
      { filter: NIC_SPEED.name, reason: "unknown", requested: 25 },
    ],
    [
      "Disk passes a host with one disk both large enough and of the kind asked",
      only(resourceFilters({ ...needs, disk: { minSizeBytes: 400 * GI, rotational: false } })),
      {
        disks: [
          { sizeBytes: 240 * GI, rotational: false },
          { sizeBytes: 960 * GI, rotational: false },
        ],
      },
      undefined,
    ],
    [
      "Disk rejects a host whose large disk spins and whose solid-state disk is small",
      only(resourceFilters({ ...needs, disk: { minSizeBytes: 400 * GI, rotational: false } })),
      {
        disks: [
          { sizeBytes: 240 * GI, rotational: false },
          { sizeBytes: 4096 * GI, rotational: true },
        ],
      },
      {
        filter: DISK.name,
        reason: "none",
        requested: "a solid-state disk of ≥ 400Gi",
        available: "240Gi solid-state, 4Ti rotational",
      },
    ],
    [
      "Disk can't check a host whose inspection lists no disks",
      only(resourceFilters({ ...needs, disk: { rotational: false } })),
      {},
      { filter: DISK.name, reason: "unknown", requested: "a solid-state disk" },
    ],
    [
      "Selector rejects other labels",
      selected({ matchLabels: { role: "cp" } }),
      { labels: { role: "worker" } },
      { filter: SELECTOR.name, reason: "mismatch" },
    ],
    [
      "Interface rejects a host without an IP there",
      addressed("oam-ipv4"),
      {},
      { filter: INTERFACE.name, reason: "no-address", requested: "oam-ipv4" },
    ],
    [
      "Interface passes a networkData address",
      addressed("oam-ipv4"),
      { networks: { "oam-ipv4": "10.0.0.5" } },
      undefined,
    ],
    [
      "Topology rejects a rack a chosen host has",
      topologySpread(RACK_LABEL, new Set(["r1"])),
      { rack: "r1" },
      { filter: TOPOLOGY.name, reason: "same-domain", requested: RACK_LABEL, available: "r1" },
    ],
    ["Topology passes another rack", topologySpread(RACK_LABEL, new Set(["r1"])), { rack: "r2" }, undefined],
    ["Topology passes a host without the label", topologySpread(RACK_LABEL, new Set(["r1"])), {}, undefined],
    [
      "no topology key constrains nothing",
      topologySpread(undefined, new Set(["r1"])),
      { rack: "r1" },
      undefined,
    ],
  ])("%s", (_, filter, host, expected) => {
    expect(filter.check("id" in host ? host : makeHost(host))).toEqual(expected);
  });

  it("attributes a host to the first filter that rejects it, and lists them all on request", () => {
    const filters = resourceFilters({ cpus: 32, memoryBytes: 128 * GI, sriov: true, qat: false });
    const host = makeHost({ cpus: 16, memoryBytes: 64 * GI });
    expect(rejection(filters, host)?.filter).toBe(CPUS.name);
    expect(rejections(filters, host).map((found) => found.filter)).toEqual([
      CPUS.name,
      MEMORY.name,
      SRIOV.name,
    ]);
  });

  it("gives hosts that have the same amount one rejection, so a histogram counts a handful", () => {
    const cpus = only(resourceFilters({ ...needs, cpus: 20 }));
    const [first, second, bigger] = [16, 16, 18].map((count) => cpus.check(makeHost({ cpus: count })));
    expect(first).toBe(second);
    expect(bigger).not.toBe(first);
    expect(bigger).toEqual({ filter: CPUS.name, reason: "insufficient", requested: 20, available: 18 });
    expect(Object.isFrozen(first)).toBe(true);
  });
});

describe("the facts a filter declares", () => {
  // One host read several times, differing in one fact at a time: hardware, labels, network, state
  // (its claim lives in the ledger, and a filter like Unused reads only its cluster's own state).
  const variants: HostOptions[] = [
    { name: "free" },
    { name: "free", cpus: 64, memoryBytes: 256 * GI, sriov: true, qat: true },
    { name: "free", cpus: undefined },
    { name: "free", cpuArch: "aarch64" },
    { name: "free", cpuModel: "AMD EPYC 7763" },
    { name: "free", cpuFlags: cpuFlags(["aes"]) },
    { name: "free", nics: [{ ...nic(1), speedGbps: 100 }] },
    { name: "free", disks: [{ sizeBytes: 960 * GI, rotational: false }] },
    { name: "free", rack: "r1", labels: { pool: "a" } },
    { name: "free", networks: { oam: "10.1.1.1" } },
    { name: "free", nics: [] },
    { name: "free", provisioningState: "ready", osInstalled: false },
  ];
  const hosts = variants.map((options) => makeHost(options));
  it.each<[string, HostFilter]>([
    ["Unclaimed", unclaimed(ledger.view(), key("c1"))],
    ["Unused", unused((host) => host.id.endsWith("/free"))],
    ...resourceFilters({
      cpus: 32,
      memoryBytes: 128 * GI,
      sriov: true,
      qat: true,
      arch: "x86_64",
      cpuModel: cpuModel("xeon"),
      cpuFlags: cpuFlags(["aes"]),
      nicSpeedGbps: 25,
      disk: { minSizeBytes: 400 * GI },
    }).map((filter): [string, HostFilter] => [filter.name, filter]),
    ["Selector", selected({ matchLabels: { pool: "a" } })],
    ["Interface", addressed("oam")],
    ["Topology", topologySpread(RACK_LABEL, new Set(["r1"]))],
  ])("%s gives two hosts the same verdict when they differ in no fact it declares", (_, filter) => {
    for (const a of hosts) {
      for (const b of hosts) {
        if ((changedFacts(a, b) & filter.reads) === 0) expect(filter.check(a)).toEqual(filter.check(b));
      }
    }
  });
});

describe("rejectionText", () => {
  it.each<[Rejection, string]>([
    [{ filter: UNCLAIMED.name, reason: "claimed" }, "claimed by other clusters"],
    [{ filter: UNUSED.name, reason: "taken" }, "serves another node of this cluster"],
    [{ filter: AVAILABLE.name, reason: "off" }, "powered off"],
    [{ filter: OTHER_ROLE.name, reason: "taken" }, "serves another role of this cluster"],
    [{ filter: CPUS.name, reason: "unknown", requested: 8 }, "no hardware details"],
    [{ filter: CPUS.name, reason: "insufficient", requested: 20, available: 8 }, "fewer than 20 CPUs"],
    [{ filter: MEMORY.name, reason: "insufficient", requested: 2 ** 41 }, "less than 2Ti memory"],
    [{ filter: SRIOV.name, reason: "not-capable" }, "not SR-IOV capable"],
    [{ filter: QAT.name, reason: "not-capable" }, "not QAT capable"],
    [{ filter: ARCH.name, reason: "mismatch", requested: "aarch64" }, "not aarch64"],
    [{ filter: ARCH.name, reason: "unknown", requested: "aarch64" }, "no CPU architecture reported"],
    [{ filter: CPU_MODEL.name, reason: "mismatch", requested: "xeon gold" }, 'CPU model without "xeon gold"'],
    [{ filter: CPU_MODEL.name, reason: "unknown", requested: "xeon" }, "no CPU model reported"],
    [{ filter: CPU_FLAGS.name, reason: "missing", available: "avx512f" }, "without CPU flags avx512f"],
    [{ filter: CPU_FLAGS.name, reason: "unknown", requested: "avx512f" }, "no CPU flags reported"],
    [{ filter: NIC_SPEED.name, reason: "slow", requested: 25 }, "no NIC of 25 Gbps or faster"],
    [{ filter: NIC_SPEED.name, reason: "unknown", requested: 25 }, "no NIC speed reported"],
    [{ filter: DISK.name, reason: "none", requested: "a disk of ≥ 1Ti" }, "without a disk of ≥ 1Ti"],
    [{ filter: DISK.name, reason: "unknown", requested: "a rotational disk" }, "no disks reported"],
    [{ filter: SELECTOR.name, reason: "mismatch" }, "not matching the labelSelector"],
    [{ filter: INTERFACE.name, reason: "no-address", requested: "oam" }, "no IP on interface oam"],
    [{ filter: TOPOLOGY.name, reason: "same-domain", requested: "rack" }, "same rack as a chosen host"],
    [
      { filter: NAMED.name, reason: "other-mac", requested: "02:00:00:00:00:01" },
      "has no NIC 02:00:00:00:00:01",
    ],
    [{ filter: NAMED.name, reason: "other-master", requested: "m1" }, "not master m1's host"],
    [{ filter: NAMED.name, reason: "malformed-mac" }, "not considered: the mac-address is malformed"],
    [{ filter: PICK.name, reason: "fits" }, "fits"],
    [{ filter: PICK.name, reason: "smaller-chosen" }, "fits, but a smaller host was chosen"],
    [{ filter: PICK.name, reason: "locked-kept" }, "fits, but the locked host is kept"],
    [{ filter: PICK.name, reason: "role-full" }, "not needed: the role is full"],
  ])("%j reads %j", (found, text) => {
    expect(rejectionText(found)).toBe(text);
  });
});

describe("the registry", () => {
  it("registers each plugin under its own name", () => {
    const names = FILTER_PLUGINS.map((plugin) => plugin.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(
    FILTER_PLUGINS.flatMap((plugin) => Object.keys(plugin.reasons).map((reason) => [plugin.name, reason])),
  )("words %s's reason %s", (filter, reason) => {
    expect(rejectionText({ filter, reason, requested: 1 })).not.toBe("");
  });

  it("refuses to word a rejection no registered plugin made", () => {
    expect(() => rejectionText({ filter: "Gpus", reason: "insufficient" })).toThrow(
      "no host filter is registered as Gpus",
    );
    expect(() => rejectionText({ filter: CPUS.name, reason: "not-capable" })).toThrow(
      "Cpus has no reason not-capable",
    );
  });
});

describe("fitHistogram", () => {
  it("counts rejections by their text, most common first, then alphabetically", () => {
    const claimed: Rejection = { filter: UNCLAIMED.name, reason: "claimed" };
    const small: Rejection = {
      filter: CPUS.name,
      reason: "insufficient",
      requested: 20,
      available: 8,
    };
    const smaller: Rejection = { ...small, available: 4 };
    const unknown: Rejection = { filter: MEMORY.name, reason: "unknown", requested: GI };
    expect(fitHistogram(6, 1, [claimed, small, unknown, smaller, claimed])).toBe(
      "1/6 hosts fit: 2 claimed by other clusters, 2 fewer than 20 CPUs, 1 no hardware details",
    );
    expect(fitHistogram(0, 0, [])).toBe("0/0 hosts fit");
  });
});
