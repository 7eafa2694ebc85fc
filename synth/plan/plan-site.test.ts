import { describe, expect, it } from "vitest";
import { makeInventory } from "../../test/builders/inventory.ts";
import { makeProvisioning } from "../../test/builders/specs.ts";
import { EMPTY_LOCK } from "./lock.ts";
import { planSite } from "./plan-site.ts";

describe("planSite", () => {
  it("explains a decision with the claims made before it, never a later cluster's", () => {
    const inventory = makeInventory([
      { name: "small", cpus: 8 },
      { name: "big", cpus: 32 },
    ]);
    const asking = (cluster: string) => makeProvisioning({ cluster, masters: { "master-1": { cpu: 8 } } });
    const { plan } = planSite({
      model: { provisionings: [asking("c1"), asking("c2")], softwares: [], glues: [], sips: [] },
      inventory,
      lock: EMPTY_LOCK,
    });
    const [first, second] = plan.clusters.map((cluster) => cluster.decisions[0]);
    expect(first?.chosen.map((chosen) => chosen.host)).toEqual(["metal3/small"]);
    expect(second?.chosen.map((chosen) => chosen.host)).toEqual(["metal3/big"]);
    // c2 took `big` after c1 decided: for c1 it was a fitting host best fit passed over.
    expect(first?.rejected()).toEqual([
      { host: "metal3/big", rejection: { filter: "Pick", reason: "smaller-chosen" } },
    ]);
    expect(second?.rejected()).toEqual([
      { host: "metal3/small", rejection: { filter: "Unclaimed", reason: "claimed" } },
    ]);
  });
});
