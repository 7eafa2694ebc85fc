import { describe, expect, it } from "vitest";
import { makeInventory } from "../../test/builders/inventory.ts";
import { clusterKey } from "../cluster-key.ts";
import type { Lock } from "../model/lock.ts";
import { hostSnapshot } from "./lock.ts";
import { releaseHosts } from "./release.ts";

const WEST = clusterKey("edge-a", "west");
const TENANT = clusterKey("edge", "tenant");
const LOCK: Lock = {
  entries: [
    { host: "metal3/gone", cluster: WEST, kind: "bpa", role: "master", node: "master-1" },
    { host: "metal3/healthy", cluster: WEST, kind: "bpa", role: "worker", node: "worker-1" },
    { host: "metal3/off", cluster: TENANT, kind: "sip", role: "ControlPlane", standby: true },
    { host: "other/healthy", cluster: TENANT, kind: "sip", role: "Worker" },
  ],
};
const inventory = makeInventory([
  { name: "healthy" },
  { name: "off", availabilityFacts: { offline: true } },
  { name: "healthy", namespace: "other" },
]);

describe("releaseHosts", () => {
  it("drops the entries of a host the snapshot lost, and says why", () => {
    const { lock, released, refused } = releaseHosts(LOCK, inventory, ["metal3/gone"]);
    expect(refused).toEqual([]);
    expect(released).toEqual([{ entry: LOCK.entries[0], why: "missing from the snapshot" }]);
    expect(lock.entries).toEqual(LOCK.entries.slice(1));
  });

  it("releases a SIPCluster's unavailable host as SIP does: marked released, with its snapshot", () => {
    const { lock, released } = releaseHosts(LOCK, inventory, ["off"]);
    expect(released.map(({ why }) => why)).toEqual(["not available (spec.online: false)"]);
    const off = inventory.byId("metal3/off");
    if (off === undefined) throw new Error("no host off");
    expect(lock.entries).toContainEqual({
      host: "metal3/off",
      cluster: TENANT,
      kind: "sip",
      role: "ControlPlane",
      released: true,
      snapshot: hostSnapshot(off),
    });
  });

  it.each([
    ["metal3/healthy", /the host is in the snapshot and available/],
    ["healthy", /several hosts of the lock are named so \(metal3\/healthy, other\/healthy\)/],
    ["metal3/nowhere", /the lock gives this host to no cluster/],
  ])("refuses %s and releases nothing, not even the hosts it could", (asked, reason) => {
    const { lock, released, refused } = releaseHosts(LOCK, inventory, ["metal3/gone", asked]);
    expect(refused).toEqual([expect.stringMatching(reason)]);
    expect(released).toEqual([]);
    expect(lock).toBe(LOCK);
  });
});
