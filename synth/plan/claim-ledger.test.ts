import { describe, expect, it } from "vitest";
import { makeHost } from "../../test/builders/inventory.ts";
import { clusterKey } from "../cluster-key.ts";
import { sipOwnerKey } from "../inventory/host.ts";
import { ClaimLedger } from "./claim-ledger.ts";

const key = (name: string) => clusterKey("ns", name);

const a = makeHost({ name: "a" });
const b = makeHost({ name: "b" });
const labelled = makeHost({ name: "l", sipOwner: { namespace: "ns", name: "sip", nodeType: "Worker" } });

/** A ledger whose standing claims are the hosts' SIP labels, as planning builds it. */
function ledgerWithLabels(): ClaimLedger {
  return new ClaimLedger((host) => {
    const cluster = sipOwnerKey(host);
    return cluster && { cluster, why: "labelled" };
  });
}

describe("ClaimLedger", () => {
  it("records claims in order, with the reason", () => {
    const ledger = new ClaimLedger();
    ledger.claim(a, key("one"), "first");
    ledger.claim(b, key("two"), "second");
    expect(ledger.claimOf(a)).toEqual({ cluster: key("one"), why: "first", sequence: 1 });
    expect(ledger.claimOf(b)).toEqual({ cluster: key("two"), why: "second", sequence: 2 });
    expect(ledger.claimOf(labelled)).toBeUndefined();
  });

  it("keeps the sequence when a cluster claims its own host again", () => {
    const ledger = new ClaimLedger();
    ledger.claim(a, key("one"), "from the lock");
    ledger.claim(b, key("two"), "mac");
    ledger.claim(a, key("one"), "chosen");
    expect(ledger.claimOf(a)).toEqual({ cluster: key("one"), why: "chosen", sequence: 1 });
  });

  it("refuses to move a recorded host to another cluster (a placement bug)", () => {
    const ledger = new ClaimLedger();
    ledger.claim(a, key("one"), "first");
    expect(() => ledger.claim(a, key("two"), "second")).toThrow(/metal3\/a is held by ns\/one/);
  });

  it("answers standing claims as made before everything else, until a claim is recorded", () => {
    const ledger = ledgerWithLabels();
    expect(ledger.claimOf(labelled)).toEqual({ cluster: key("sip"), why: "labelled", sequence: 0 });
    expect(ledger.isRecorded(labelled)).toBe(false);
    ledger.claim(labelled, key("sip"), "kept");
    expect(ledger.claimOf(labelled)).toEqual({ cluster: key("sip"), why: "kept", sequence: 0 });
    // The lock outranks labels: it may give a labelled host to another cluster.
    const other = ledgerWithLabels();
    other.claim(labelled, key("locked"), "lock");
    expect(other.claimOf(labelled)).toEqual({ cluster: key("locked"), why: "lock", sequence: 1 });
  });

  it("gives each decision a view that later claims do not change", () => {
    const ledger = ledgerWithLabels();
    ledger.claim(a, key("one"), "first");
    const before = ledger.view();
    ledger.claim(b, key("two"), "later");
    const after = ledger.view();
    expect([a, b, labelled].map((host) => before.ownerOf(host))).toEqual([key("one"), undefined, key("sip")]);
    expect([a, b, labelled].map((host) => after.ownerOf(host))).toEqual([key("one"), key("two"), key("sip")]);
  });

  it("keeps released hosts with the releasing cluster unless already claimed", () => {
    const ledger = new ClaimLedger();
    ledger.claim(b, key("other"), "lock");
    ledger.release(a, key("sip"), "Worker", "being released");
    ledger.release(b, key("sip"), "ControlPlane", "being released");
    expect(ledger.claimOf(a)?.cluster).toBe(key("sip"));
    expect(ledger.claimOf(b)?.cluster).toBe(key("other"));
    expect(ledger.releasing(key("sip"))).toEqual([
      { host: a, role: "Worker" },
      { host: b, role: "ControlPlane" },
    ]);
    expect(ledger.releasing(key("none"))).toEqual([]);
    expect(ledger.releasingClusters()).toEqual([key("sip")]);
  });
});
