import { clusterKey } from "../synth/cluster-key.ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { makeInventory } from "../test/builders/inventory.ts";
import { provisioning } from "../test/builders/reviews.ts";
import { readResources } from "../synth/site/resources.ts";
import { SiteSnapshot } from "../synth/snapshot.ts";
import { objectDocument } from "./site-review.ts";
import { WebhookState } from "./state.ts";

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
});
