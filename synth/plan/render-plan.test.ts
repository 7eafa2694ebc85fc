import { describe, expect, it } from "vitest";
import { ipFor, macFor, makeInventory } from "../../test/builders/inventory.ts";
import { parseDocuments } from "../codec/read-documents.ts";
import { evaluateSite } from "../evaluate.ts";
import { EMPTY_LOCK } from "../rules/lock.ts";
import { renderPlan } from "./render-plan.ts";

const inventory = makeInventory([{ name: "a" }, { name: "b" }]);
const site = (masters: string) => `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: c1, namespace: ns, labels: {cluster: c1}}
spec:
  masters:
${masters}
  workers:
    - master-1:
---
apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata: {name: glue-only, namespace: ns, labels: {cluster: c2}}
spec: {}
`;

function evaluate(masters: string) {
  const { plan, issues } = evaluateSite(
    parseDocuments("site.yaml", site(masters)).documents,
    inventory,
    EMPTY_LOCK,
  );
  return { plan, issues };
}

describe("renderPlan", () => {
  it("gives every BPA node its address and leaves out clusters without a Provisioning", () => {
    const { plan, issues } = evaluate(`    - master-1: {mac-address: "${macFor("metal3/b", 0)}"}`);
    expect(issues).toEqual([]);
    expect(plan.clusters.map((cluster) => cluster.key)).toEqual(["ns/c1", "ns/c2"]);
    const ready = renderPlan(plan, issues);
    expect(ready?.clusters.map((cluster) => cluster.key)).toEqual(["ns/c1"]);
    const [cluster] = ready?.clusters ?? [];
    if (cluster?.kind !== "bpa") throw new Error("a BPA cluster expected");
    const nodes = [...cluster.masters, ...cluster.workers].map(({ label, host, ip }) => [label, host.id, ip]);
    const ip = ipFor("metal3/b", 0);
    expect(nodes).toEqual([
      ["master-1", "metal3/b", ip],
      ["master-1", "metal3/b", ip],
    ]);
    expect(ready?.lock).toBe(plan.lock);
  });

  it("is plain data, without the CRs' source documents, so a worker thread can receive it", () => {
    const { plan, issues } = evaluate(`    - master-1: {mac-address: "${macFor("metal3/b", 0)}"}`);
    const ready = renderPlan(plan, issues);
    expect(structuredClone(ready)).toEqual(ready);
    expect(ready?.clusters[0]).not.toHaveProperty("provisioning.resource");
  });

  it("is undefined when any rule found an error, so nothing is rendered", () => {
    const { plan, issues } = evaluate(`    - master-1: {mac-address: "02:00:00:00:00:01"}`);
    expect(issues.map((found) => found.rule)).toEqual(["mac-unknown"]);
    expect(renderPlan(plan, issues)).toBeUndefined();
  });
});
