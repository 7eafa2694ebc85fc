import { describe, expect, it } from "vitest";
import { makeHost, type HostOptions } from "../../test/builders/inventory.ts";
import { SIP_LABELS } from "./bmh.ts";
import { changedFacts, EVERY_HOST_FACT, HOST_FACTS } from "./host-facts.ts";

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
