import { describe, expect, it } from "vitest";
import { makeInventory, macFor } from "../test/builders/inventory.ts";
import { parseDocuments } from "./codec/read-documents.ts";
import { evaluateSite } from "./evaluate.ts";
import { explainCluster, explanationText, failedClusters, failedClustersText } from "./explain.ts";
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

describe("explain: a cluster whose CRs failed their rules (issue #35)", () => {
  const typo = provisioning(`    - master-1: {cpu: lots}\n`);
  const software = `apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata: {name: c1-software, namespace: ns, labels: {cluster: c1}}
spec: {masterSoftware: 3}
`;
  const sip = `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: s1, namespace: ns}
spec: {nodes: 5}
`;
  function failed(yaml: string, name: string) {
    const { plan, issues, invalid } = evaluateSite(
      parseDocuments("c1.yaml", yaml).documents,
      inventory,
      EMPTY_LOCK,
    );
    expect(explainCluster(plan, name, inventory.size)).toEqual([]);
    return failedClusters(invalid, issues, name);
  }

  it.each([["c1"], ["ns/c1"]])(
    "names %s, its CR and the CR's findings, since nothing was planned",
    (name) => {
      const [cluster, ...rest] = failed(typo, name);
      expect(rest).toEqual([]);
      expect(cluster?.cluster).toBe("ns/c1");
      expect(cluster?.failed).toEqual(["Provisioning/ns/c1"]);
      expect(cluster?.issues.map((found) => [found.rule, found.path, found.source?.line])).toEqual([
        ["schema", "spec.masters[0].master-1.cpu", 6],
      ]);
      expect(failedClustersText(failed(typo, name))).toBe(
        "ns/c1: nothing is planned, because its CR Provisioning/ns/c1 failed its rules:\n" +
          'c1.yaml:6:18: error[schema] spec.masters[0].master-1.cpu: expected number, found "lots"\n',
      );
    },
  );

  it("gathers every failed CR of the cluster, BPA ones by their cluster label and a SIPCluster by its name", () => {
    const [bpa] = failed(`${typo}---\n${software}`, "c1");
    expect(bpa?.failed).toEqual(["Provisioning/ns/c1", "Software/ns/c1-software"]);
    expect(new Set(bpa?.issues.map((found) => found.object))).toEqual(new Set(bpa?.failed));
    expect(failedClustersText(bpa ? [bpa] : [])).toMatch(
      /^ns\/c1: nothing is planned, because its CRs Provisioning\/ns\/c1, Software\/ns\/c1-software failed their rules:\n/,
    );
    expect(failed(sip, "s1").map((found) => [found.cluster, found.failed])).toEqual([
      ["ns/s1", ["SIPCluster/ns/s1"]],
    ]);
  });

  it.each([
    ["another cluster's CR", typo, "c2"],
    ["a CR of another namespace", typo, "other/c1"],
    [
      "a CR without a cluster label, named as the cluster",
      typo.replace("labels: {cluster: c1}", "labels: {}"),
      "c1",
    ],
  ])("finds nothing for %s", (_, yaml, name) => {
    expect(failed(yaml, name)).toEqual([]);
  });
});
