import { clusterKey } from "../synth/cluster-key.ts";
import { issue } from "../synth/issue.ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { makeInventory } from "../test/builders/inventory.ts";
import { provisioning } from "../test/builders/reviews.ts";
import { readResources } from "../synth/site/resources.ts";
import { SiteSnapshot } from "../synth/snapshot.ts";
import { objectDocument } from "./site-review.ts";
import { HOLD_MS, WebhookState } from "./state.ts";

const inventory = makeInventory(
  ["01", "02"].map((suffix) => ({
    name: `node-${suffix}`,
    nics: [{ name: "eno1", mac: `00:00:00:00:00:${suffix}`, ipv4: `10.0.0.${Number(suffix)}` }],
  })),
);

function clusterResources(...objects: object[]) {
  return readResources(objects.map((object) => objectDocument(object, "cluster"))).resources;
}

const byMac = (name: string, mac: string) =>
  provisioning({ name, masters: [["master-1", { "mac-address": mac }]] });

describe("WebhookState", () => {
  afterEach(() => vi.restoreAllMocks());

  it("carries the evaluated site over a change of CRs or BareMetalHosts, and evaluates anew for a new lock", () => {
    const evaluations = vi.spyOn(SiteSnapshot, "of");
    const state = new WebhookState();
    state.update({ inventory, clusterResources: clusterResources(byMac("east", "00:00:00:00:00:01")) });
    const asking = byMac("west", "00:00:00:00:00:02");
    const rulesFor = (object: unknown) =>
      state
        .reviewer()
        ?.review(object)
        .map((found) => found.rule);
    expect(state.reviewer()?.review(asking)).toEqual([]);
    expect(evaluations).toHaveBeenCalledTimes(1);

    // Another cluster now holds node-02: the next review knows, without evaluating the site again.
    state.update({
      clusterResources: clusterResources(
        byMac("east", "00:00:00:00:00:01"),
        byMac("north", "00:00:00:00:00:02"),
      ),
    });
    expect(rulesFor(asking)).toEqual(["host-claimed"]);
    expect(evaluations).toHaveBeenCalledTimes(1);

    // The site's lock read again unchanged (a file feed reads everything again) keeps it too.
    state.update({ lock: { entries: [] } });
    state.reviewer()?.review(asking);
    expect(evaluations).toHaveBeenCalledTimes(1);

    // Every BMH read again, with the same facts (a file feed reads everything again).
    state.update({ inventory: makeInventory(inventory.hosts.map((host) => ({ ...host }))) });
    state.reviewer()?.review(asking);
    expect(evaluations).toHaveBeenCalledTimes(1);

    // node-02 left the inventory: the next review knows, and the site is not evaluated again.
    state.update({ inventory: makeInventory(inventory.hosts.filter((host) => host.name !== "node-02")) });
    expect(rulesFor(asking)).toEqual(["mac-unknown"]);
    expect(evaluations).toHaveBeenCalledTimes(1);

    // A changed lock is evaluated anew.
    state.update({
      lock: {
        entries: [
          {
            host: "metal3/node-02",
            cluster: clusterKey("edge-a", "north"),
            kind: "bpa",
            role: "master",
            node: "master-1",
          },
        ],
      },
    });
    state.reviewer()?.review(asking);
    expect(evaluations).toHaveBeenCalledTimes(2);
  });

  describe("an admitted object in flight", () => {
    const first = byMac("east", "00:00:00:00:00:01");
    const rival = byMac("west", "00:00:00:00:00:01");
    const key = "Provisioning/edge-a/east";
    function heldState() {
      let now = 1_000;
      const state = new WebhookState(() => now, true);
      state.update({ inventory, clusterResources: [] });
      const rulesFor = (object: unknown) =>
        state
          .reviewer()
          ?.review(object)
          .map((found) => found.rule);
      state.hold(first);
      return { state, rulesFor, advance: (ms: number) => (now += ms), at: () => now };
    }

    it("makes a conflicting request to the same replica a denial before any informer delivers it", () => {
      const { rulesFor } = heldState();
      expect(rulesFor(rival)).toEqual(["host-claimed"]);
    });

    it("stays held while the informer delivers other objects, and while the hold is young", () => {
      const { state, rulesFor, advance, at } = heldState();
      advance(HOLD_MS - 1);
      state.update({ clusterResources: [], delivered: new Map([["Provisioning/edge-a/north", at()]]) });
      expect(rulesFor(rival)).toEqual(["host-claimed"]);
    });

    it("is let go once the informer delivers it, whatever it then holds", () => {
      const { state, rulesFor, advance, at } = heldState();
      advance(200);
      state.update({ clusterResources: [], delivered: new Map([[key, at()]]) });
      expect(rulesFor(rival)).toEqual([]);
    });

    it("is not let go by a delivery from before it was admitted", () => {
      const { state, rulesFor, at } = heldState();
      state.update({ clusterResources: [], delivered: new Map([[key, at() - 1]]) });
      expect(rulesFor(rival)).toEqual(["host-claimed"]);
    });

    it(`is let go after ${HOLD_MS} ms when no informer delivers it (the API server did not store it)`, () => {
      const { rulesFor, advance } = heldState();
      advance(HOLD_MS);
      expect(rulesFor(rival)).toEqual([]);
    });

    it("replaces the stored object an admitted UPDATE changes", () => {
      let now = 0;
      const state = new WebhookState(() => now, true);
      state.update({ inventory, clusterResources: clusterResources(first) });
      // east moves to node-02: node-01 is free for west at once, node-02 is taken.
      state.hold(byMac("east", "00:00:00:00:00:02"));
      const rulesFor = (object: unknown) =>
        state
          .reviewer()
          ?.review(object)
          .map((found) => found.rule);
      expect(rulesFor(rival)).toEqual([]);
      expect(rulesFor(byMac("west", "00:00:00:00:00:02"))).toEqual(["host-claimed"]);
      now += HOLD_MS;
      expect(rulesFor(rival)).toEqual(["host-claimed"]);
    });
  });

  it("confines a damaged allocation set to its clusters and hosts, naming the Allocation, until it is sound", () => {
    const state = new WebhookState();
    const damage = issue(
      "lock-invalid",
      "spec.hosts[0].role",
      '"mastr" is not a BPA role (master or worker)',
      {
        object: "Allocation/edge-a/north",
      },
    );
    state.update({
      inventory,
      clusterResources: [],
      lock: { entries: [] },
      damage: {
        allocations: new Map([["edge-a/north", [damage]]]),
        hosts: new Map([["metal3/node-01", "named by Allocation edge-a/north, which is damaged"]]),
        inTransit: 0,
      },
    });
    // The damaged cluster's own CRs: refused, the Allocation named.
    const findings = state.reviewer()?.review(byMac("north", "00:00:00:00:00:02")) ?? [];
    expect(findings.map((found) => [found.rule, found.severity])).toEqual([
      ["lock-invalid", "error"],
      ["lock-invalid", "error"],
    ]);
    expect(findings[0]?.text).toBe(
      'the Allocation of cluster edge-a/north is damaged: Allocation edge-a/north spec.hosts[0].role: "mastr" is not a BPA role (master or worker)',
    );
    // Another cluster asking for a host the damage names: refused, naming the Allocation.
    const contested = state.reviewer()?.review(byMac("west", "00:00:00:00:00:01")) ?? [];
    expect(contested.map((found) => found.rule)).toEqual(["host-unavailable"]);
    expect(contested[0]?.text).toContain("named by Allocation edge-a/north, which is damaged");
    // Another cluster asking for another host: reviewed as ever.
    expect(state.reviewer()?.review(byMac("west", "00:00:00:00:00:02"))).toEqual([]);
    // A sound lock ends it.
    state.update({ lock: { entries: [] } });
    expect(state.reviewer()?.review(byMac("north", "00:00:00:00:00:01"))).toEqual([]);
  });
});
