/**
 * What a review worker receives of the state (decision 0056): through a structured clone, as a
 * worker's message port carries it, the copy equals the state, and each message carries only the
 * hosts and CRs that changed.
 */
import { describe, expect, it } from "vitest";
import { readResources } from "../synth/site/resources.ts";
import { makeInventory } from "../test/builders/inventory.ts";
import { provisioning } from "../test/builders/reviews.ts";
import { objectDocument } from "./site-review.ts";
import type { KnowledgeChange } from "./state.ts";
import { WireReceiver, WireSender } from "./wire.ts";

const hosts = ["01", "02", "03"].map((suffix) => ({
  name: `node-${suffix}`,
  nics: [{ name: "eno1", mac: `00:00:00:00:00:${suffix}`, ipv4: `10.0.0.${Number(suffix)}` }],
}));

function crs(...names: string[]) {
  return readResources(
    names.map((name) =>
      objectDocument(
        provisioning({ name, masters: [["master-1", { cpu: Number(name.length) }]] }),
        "cluster",
      ),
    ),
  ).resources;
}

/** `change` sent and received as a worker would: encoded, cloned, decoded. */
function carry(sender: WireSender, receiver: WireReceiver, change: KnowledgeChange) {
  const wire = structuredClone(sender.encode(change));
  return { wire, received: receiver.decode(wire) };
}

describe("the wire to a review worker", () => {
  it("carries the inventory and the CRs so that the copy equals the state, sending only what changed", () => {
    const sender = new WireSender();
    const receiver = new WireReceiver();
    const inventory = makeInventory(hosts);
    const resources = crs("east", "west");
    const first = carry(sender, receiver, {
      type: "update",
      parts: { inventory, clusterResources: resources, lock: { entries: [] } },
    });
    expect(first.received.type === "update" && first.received.parts.inventory?.hosts).toEqual(
      inventory.hosts,
    );
    const copied = first.received.type === "update" ? (first.received.parts.clusterResources ?? []) : [];
    expect(copied.map((resource) => [resource.key, resource.object])).toEqual(
      resources.map((resource) => [resource.key, resource.object]),
    );
    expect(copied[0]?.document.position(["spec"])).toEqual(resources[0]?.document.position([]));

    // One host changed, one CR changed and one left: only they travel.
    const [one, two, three] = inventory.hosts;
    if (!one || !two || !three) throw new Error("three hosts");
    const changedHost = { ...two, cpus: 64 };
    const [east] = resources;
    const [west] = crs("west-renamed-to-be-longer").map((resource) => ({
      ...resource,
      key: "Provisioning/edge-a/west",
    }));
    if (!east || !west) throw new Error("two CRs");
    const second = carry(sender, receiver, {
      type: "update",
      parts: { inventory: makeInventory([one, changedHost]), clusterResources: [east, west] },
    });
    expect(second.wire).toMatchObject({
      parts: {
        inventory: { changed: [changedHost], removed: [three.id] },
        clusterResources: { changed: [{ key: "Provisioning/edge-a/west" }], removed: [] },
      },
    });
    expect(second.received.type === "update" && second.received.parts.inventory?.hosts).toEqual([
      one,
      changedHost,
    ]);
  });

  it("carries holds as they are", () => {
    const change: KnowledgeChange = {
      type: "hold",
      object: provisioning({ name: "east", masters: [] }),
      at: 7,
    };
    expect(carry(new WireSender(), new WireReceiver(), change).received).toEqual(change);
  });
});
