import { describe, expect, it } from "vitest";
import { makeHost, type HostOptions } from "../../test/builders/inventory.ts";
import { SIP_LABELS } from "./bmh.ts";
import { alikeIn, changedFacts, EVERY_HOST_FACT, HOST_FACTS } from "./host-facts.ts";

const before = makeHost({ name: "h1", rack: "r1", cpus: 16 });
const after = (options: HostOptions) => makeHost({ name: "h1", rack: "r1", cpus: 16, ...options });

describe("changedFacts", () => {
  it("finds nothing changed in a host read again the same", () => {
    expect(changedFacts(before, after({}))).toBe(0);
  });

  it("counts a host that joined or left as every fact changed", () => {
    expect(changedFacts(undefined, before)).toBe(EVERY_HOST_FACT);
    expect(changedFacts(before, undefined)).toBe(EVERY_HOST_FACT);
  });

  it.each<[string, HostOptions, number]>([
    ["CPUs", { cpus: 32 }, HOST_FACTS.hardware],
    ["memory", { memoryBytes: 2 ** 30 }, HOST_FACTS.hardware],
    // SR-IOV is a label the loader reads into a field: both facts changed.
    ["SR-IOV", { sriov: true }, HOST_FACTS.hardware | HOST_FACTS.labels],
    ["a label", { rack: "r2" }, HOST_FACTS.labels],
    [
      "a NIC's address",
      { nics: [{ name: "enp1s0", mac: "02:00:00:00:00:01", ipv4: "10.9.9.9" }] },
      HOST_FACTS.network,
    ],
    ["networkData", { networks: { "oam-ipv4": "10.1.1.1" } }, HOST_FACTS.network],
    ["the provisioning state", { provisioningState: "ready" }, HOST_FACTS.state],
    ["the BMC", { bmc: { address: "redfish://10.0.0.1" } }, HOST_FACTS.state],
  ])("tells %s apart from the other facts", (_, options, facts) => {
    expect(changedFacts(before, after(options))).toBe(facts);
  });

  it("counts SIP labels as labels and as a claim", () => {
    const labelled = after({
      labels: { [SIP_LABELS.namespace]: "tenant", [SIP_LABELS.name]: "s1", [SIP_LABELS.nodeType]: "Worker" },
    });
    expect(changedFacts(before, labelled)).toBe(HOST_FACTS.labels | HOST_FACTS.claim);
  });
});

describe("alikeIn", () => {
  const groups = (hosts: readonly HostOptions[], facts: number) =>
    alikeIn(hosts.map(makeHost), facts).map(({ host, count }) => `${host.name}×${count}`);

  it("groups hosts whose fields of the facts hold the same values, whatever their names and other facts", () => {
    const hosts: HostOptions[] = [
      { name: "a", rack: "r1", cpus: 16, memoryBytes: 2 ** 36 },
      { name: "b", rack: "r2", cpus: 32, memoryBytes: 2 ** 36 },
      { name: "c", rack: "r3", cpus: 16, memoryBytes: 2 ** 36, provisioningState: "ready" },
      { name: "d", rack: "r1", cpus: 16, memoryBytes: 2 ** 37 },
    ];
    expect(groups(hosts, HOST_FACTS.hardware)).toEqual(["a×2", "b×1", "d×1"]);
    expect(groups(hosts, HOST_FACTS.labels)).toEqual(["a×1", "b×1", "c×1", "d×1"]);
  });

  it("groups hosts by a list only when they share it: equal lists read apart are two kinds", () => {
    const disks = [{ name: "sda", sizeBytes: 2 ** 38 }];
    const hosts: HostOptions[] = [
      { name: "a", disks },
      { name: "b", disks },
      { name: "c", disks: [...disks] },
    ];
    expect(groups(hosts, HOST_FACTS.hardware)).toEqual(["a×2", "c×1"]);
  });

  it("puts every host in one group when the facts name no field", () => {
    expect(
      groups(
        [
          { name: "a", cpus: 8 },
          { name: "b", cpus: 96 },
        ],
        0,
      ),
    ).toEqual(["a×2"]);
  });
});
