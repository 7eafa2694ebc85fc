import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readInventory } from "../gitops/inventory-reader.ts";
import { parseDocuments } from "../synth/codec/read-documents.ts";
import { evaluateSite } from "../synth/evaluate.ts";
import { Inventory } from "../synth/inventory/inventory.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import { readResources } from "../synth/site/resources.ts";
import { REPO, fixture } from "./harness.ts";

const bpaDir = fixture("anchors", "icn-bpa");
const bpaSamples = readdirSync(bpaDir).sort();
const isVmSample = (file: string) =>
  /cluster-type:\s*virtlet-vm/.test(readFileSync(`${bpaDir}/${file}`, "utf8"));
const isTemplate = (file: string) => readFileSync(`${bpaDir}/${file}`, "utf8").includes("<pn");

function evaluateSample(file: string) {
  const parsed = parseDocuments(file, readFileSync(`${bpaDir}/${file}`, "utf8"));
  expect(parsed.issues).toEqual([]);
  return evaluateSite(parsed.documents, new Inventory([]), EMPTY_LOCK).issues;
}

describe("upstream ICN BPA samples", () => {
  it("are all here", () => {
    expect(bpaSamples.length).toBeGreaterThanOrEqual(20);
  });

  it.each(bpaSamples.filter((file) => !isVmSample(file) && !isTemplate(file)))(
    "%s parses against the schema",
    (file) => {
      const parsed = parseDocuments(file, readFileSync(`${bpaDir}/${file}`, "utf8"));
      const { resources, issues } = readResources(parsed.documents);
      expect(issues).toEqual([]);
      expect(resources).toHaveLength(1);
      // With an empty inventory the only findings are about the inventory, never about the CR's shape.
      const rules = new Set(evaluateSample(file).map((found) => found.rule));
      for (const rule of rules) expect(["mac-unknown", "cluster-ref"]).toContain(rule);
    },
  );

  it.each(bpaSamples.filter(isVmSample))("%s (VM mode) is refused as unsupported", (file) => {
    const issues = evaluateSample(file);
    expect(issues.map((found) => `${found.rule} ${found.path}`)).toEqual([
      "unsupported metadata.labels.cluster-type",
    ]);
  });

  it.each(bpaSamples.filter(isTemplate))(
    "%s (a template with <pnN-IF2-mac> placeholders) reports mac-format",
    (file) => {
      const issues = evaluateSample(file);
      expect(issues.length).toBeGreaterThan(0);
      expect(new Set(issues.map((found) => found.rule))).toEqual(new Set(["mac-format"]));
    },
  );

  it("plans the multi-node sample on an inventory carrying its MACs", async () => {
    const { inventory } = await readInventory([fixture("anchors-inventory")], { relativeTo: REPO });
    const parsed = parseDocuments(
      "sample.yaml",
      readFileSync(`${bpaDir}/bpa_v1alpha1_provisioning_cr_sample_multiple_2.yaml`, "utf8"),
    );
    const evaluation = evaluateSite(parsed.documents, inventory, EMPTY_LOCK);
    expect(evaluation.issues).toEqual([]);
    const [cluster] = evaluation.plan.clusters;
    expect(cluster?.kind === "bpa" && cluster.masters.map((node) => [node.request.label, node.ip])).toEqual([
      ["master-1", "192.168.10.11"],
      ["master-2", "192.168.10.12"],
    ]);
  });
});

describe("upstream Airship SIP sample", () => {
  it("plans ControlPlane and Worker with rack/host anti-affinity and networkData IPs", async () => {
    const { inventory, issues: inventoryIssues } = await readInventory(
      [fixture("anchors", "airship-sip", "bmh.yaml"), fixture("anchors", "airship-sip", "bmh_secrets.yaml")],
      { relativeTo: REPO },
    );
    // The sample gives five of its six hosts one BMC address: accepted, and warned about (decision 0052).
    expect(inventoryIssues.map((found) => `${found.severity} ${found.rule} ${found.host}`)).toEqual(
      ["rdm9r006o001", "rdm9r007o001", "rdm9r007o002", "rdm9r008o002", "rdm9r009o002"].map(
        (name) => `warning bmc-duplicate default/${name}`,
      ),
    );
    const file = fixture("anchors", "airship-sip", "airship_v1beta1_sipcluster.yaml");
    const parsed = parseDocuments("sipcluster.yaml", readFileSync(file, "utf8"));
    const evaluation = evaluateSite(parsed.documents, inventory, EMPTY_LOCK);
    expect(evaluation.issues.filter((found) => found.severity === "error")).toEqual([]);
    const [plan] = evaluation.plan.clusters;
    expect(plan?.kind).toBe("sip");
    if (plan?.kind !== "sip") return;
    expect(
      plan.members.map(
        (member) => `${member.role} ${member.host.name} ${member.standby ? "standby" : "active"}`,
      ),
    ).toEqual([
      "ControlPlane rdm9r006o001 active",
      "ControlPlane rdm9r007o001 standby",
      "Worker rdm9r007o002 active",
      "Worker rdm9r008o002 standby",
    ]);
  });
});
