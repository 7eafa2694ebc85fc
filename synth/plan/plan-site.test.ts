import { clusterKey } from "../cluster-key.ts";
import { describe, expect, it } from "vitest";
import { makeInventory } from "../../test/builders/inventory.ts";
import { makeProvisioning, makeSipCluster } from "../../test/builders/specs.ts";
import { EMPTY_LOCK } from "../rules/lock.ts";
import { planSite, tracePlan } from "./plan-site.ts";

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

  it("walks a host a MAC entry fixes only in its own cluster's turn, and the lock's hosts in their cluster's", () => {
    const inventory = makeInventory([
      { name: "named", cpus: 8, nics: [{ name: "eno1", mac: "00:00:00:00:00:01" }] },
      { name: "locked", cpus: 8 },
      { name: "free", cpus: 16 },
      // Too small for anyone: never walked, and enough hosts that a few reads are not "all".
      ...Array.from({ length: 12 }, (_, index) => ({ name: `small-${index}`, cpus: 2 })),
    ]);
    const model = {
      provisionings: [
        makeProvisioning({ cluster: "a", masters: { "master-1": { cpu: 8 } } }),
        makeProvisioning({ cluster: "b", masters: { "master-1": { cpu: 8 } } }),
        makeProvisioning({
          cluster: "c",
          masters: { "master-1": { "mac-address": "00:00:00:00:00:01" } },
          workers: { "worker-1": { cpu: 4 } },
        }),
      ],
      softwares: [],
      glues: [],
      sips: [],
    };
    // The lock gave `locked` to b's worker, which b no longer asks for: its master may have it.
    const lock = {
      entries: [
        {
          host: "metal3/locked",
          cluster: clusterKey("ns", "b"),
          kind: "bpa" as const,
          role: "worker" as const,
          node: "worker-1",
        },
      ],
    };
    const trace = tracePlan({ model, inventory, lock });
    const chosen = (cluster: string) =>
      trace.plan.clusters
        .filter((plan) => plan.key === `ns/${cluster}`)
        .flatMap((plan) => plan.decisions.flatMap((decision) => decision.chosen.map((host) => host.host)));
    expect(chosen("a")).toEqual(["metal3/free"]);
    expect(chosen("b")).toEqual(["metal3/locked"]);
    expect(chosen("c")).toEqual(["metal3/named"]);
    // a's walk never looked up who holds the hosts fixed for b and c: no change of theirs reaches a.
    const reads = trace.turns.find((turn) => turn.turn.key === "ns/a")?.reads;
    expect([...(reads?.hosts ?? [])]).toEqual(["metal3/free"]);
  });

  it("walks a selector's matches past hosts earlier SIPClusters or other clusters' labels hold, unlooked-up", () => {
    const inventory = makeInventory([
      ...["h1", "h2", "h3", "h4"].map((name) => ({ name, labels: { pool: "x" } })),
      // Labelled for c: no other SIPCluster's walk looks it up, c's walk offers it first.
      {
        name: "h0",
        labels: { pool: "x" },
        sipOwner: { namespace: "ns", name: "c", nodeType: "ControlPlane" },
      },
      ...Array.from({ length: 12 }, (_, index) => ({ name: `other-${index}` })),
    ]);
    const sip = (name: string) =>
      makeSipCluster({ name, nodes: { ControlPlane: { matchLabels: { pool: "x" }, active: 1 } } });
    const model = {
      provisionings: [],
      softwares: [],
      glues: [],
      sips: [sip("a"), sip("b"), sip("c"), sip("d")],
    };
    const trace = tracePlan({ model, inventory, lock: EMPTY_LOCK });
    const turn = (name: string) => trace.turns.find((outcome) => outcome.turn.key === `ns/${name}`);
    expect(["a", "b", "c", "d"].map((name) => [...(turn(name)?.claims.keys() ?? [])])).toEqual([
      ["metal3/h1"],
      ["metal3/h2"],
      ["metal3/h0"],
      ["metal3/h3"],
    ]);
    // d passed h0, h1 and h2 without asking who holds them: its walk, up to h4 (offered when d was
    // full), says it passed them, so a change to their claims reaches d.
    expect([...(turn("d")?.reads.hosts ?? [])]).toEqual(["metal3/h3"]);
    expect(turn("d")?.reads.walks).toEqual([{ selector: { matchLabels: { pool: "x" } }, last: "metal3/h4" }]);
  });
});
