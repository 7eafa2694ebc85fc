import { describe, expect, it } from "vitest";
import { makeInventory, macFor } from "../test/builders/inventory.ts";
import { parseDocuments } from "./codec/read-documents.ts";
import { evaluateSite } from "./evaluate.ts";
import { explainCluster, explanationText } from "./explain.ts";
import { EMPTY_LOCK } from "./rules/lock.ts";

const inventory = makeInventory([{ name: "a" }, { name: "b" }, { name: "c" }]);
const provisioning = (masters: string) => `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: c1, namespace: ns, labels: {cluster: c1}}
spec:
  masters:
${masters}`;

function explained(yaml: string) {
  const { plan } = evaluateSite(parseDocuments("c1.yaml", yaml).documents, inventory, EMPTY_LOCK);
  return explainCluster(plan, "c1", inventory.size);
}

describe("explain", () => {
  it.each([
    ["a malformed MAC", `"00:c6:14:04:61"`, /^mac-format: "00:c6:14:04:61" is not a MAC address/],
    ["an unknown MAC", "02:ff:ff:ff:ff:ff", /^mac-unknown: 02:ff:ff:ff:ff:ff matches no BareMetalHost/],
  ])("shows a node with %s, with its error, and accounts for every host", (_, mac, problem) => {
    const yaml = provisioning(
      `    - master-1: {mac-address: "${macFor("metal3/a", 0)}"}\n    - master-2: {mac-address: ${mac}}\n`,
    );
    const [explanation] = explained(yaml);
    const decision = explanation?.decisions.find((found) => found.subject === "master master-2");
    expect(decision?.chosen).toEqual([]);
    expect(decision?.problem).toMatch(problem);
    expect(decision?.rejected.map((rejected) => rejected.host)).toEqual(
      inventory.hosts.map((host) => host.id),
    );
    expect(explanationText(explained(yaml))).toContain(`    problem:  ${decision?.problem ?? "?"}\n`);
  });

  it("says a host another cluster holds is held, not that it lacks the NIC the entry names", () => {
    const mac = macFor("metal3/a", 0);
    const other = provisioning(`    - master-1: {mac-address: "${mac}"}\n`).replaceAll("c1", "c0");
    const yaml = `${other}---\n${provisioning(`    - master-1: {mac-address: "${mac}"}\n`)}`;
    const decision = explained(yaml)[0]?.decisions[0];
    expect(decision?.chosen).toEqual([]);
    expect(decision?.problem).toMatch(/^host-claimed: .*cluster ns\/c0/);
    expect(decision?.rejected).toEqual([
      { host: "metal3/a", reason: "claimed by other clusters" },
      { host: "metal3/b", reason: `has no NIC ${mac}` },
      { host: "metal3/c", reason: `has no NIC ${mac}` },
    ]);
    expect(decision?.summary).toBe(`0/3 hosts fit: 2 has no NIC ${mac}, 1 claimed by other clusters`);
  });

  it("writes each item on one line whatever a node label holds", () => {
    const yaml = provisioning(`    - "master\\n1": {mac-address: "02:ff:ff:ff:ff:ff"}\n`);
    const text = explanationText(explained(yaml));
    expect(text).toContain('  master master\\n1  (spec.masters[0]["master\\n1"])\n');
    expect(text).toContain("    problem:  mac-unknown: 02:ff:ff:ff:ff:ff matches no BareMetalHost");
    expect(text.split("\n").every((line) => !line.startsWith("1"))).toBe(true);
  });

  it("shows a null entry whose master has no host", () => {
    const yaml = `${provisioning(`    - master-1: {mac-address: "00:c6:14:04:61"}\n`)}  workers:\n    - master-1:\n`;
    const decision = explained(yaml)[0]?.decisions.find((found) => found.subject === "worker master-1");
    expect(decision?.chosen).toEqual([]);
    expect(decision?.problem).toBe("master master-1 has no host, so neither has this entry");
  });
});
