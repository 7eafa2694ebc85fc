import { describe, expect, it } from "vitest";
import { makeHost } from "../../test/builders/inventory.ts";
import { ClaimLedger } from "./claim-ledger.ts";

const a = makeHost({ name: "a" });
const b = makeHost({ name: "b" });
const labelled = makeHost({ name: "l", sipOwner: { namespace: "ns", name: "sip", nodeType: "Worker" } });

/** A ledger whose standing claims are the hosts' SIP labels, as planning builds it. */
function ledgerWithLabels(): ClaimLedger {
  return new ClaimLedger((host) =>
    host.sipOwner
      ? { cluster: `${host.sipOwner.namespace}/${host.sipOwner.name}`, why: "labelled" }
      : undefined,
  );
}

describe("ClaimLedger", () => {
  it("records claims in order, with the reason", () => {
    const ledger = new ClaimLedger();
    ledger.claim(a, "ns/one", "first");
    ledger.claim(b, "ns/two", "second");
    expect(ledger.claimOf(a)).toEqual({ cluster: "ns/one", why: "first", sequence: 1 });
    expect(ledger.claimOf(b)).toEqual({ cluster: "ns/two", why: "second", sequence: 2 });
    expect(ledger.claimOf(labelled)).toBeUndefined();
  });

  it("keeps the sequence when a cluster claims its own host again", () => {
    const ledger = new ClaimLedger();
    ledger.claim(a, "ns/one", "from the lock");
    ledger.claim(b, "ns/two", "mac");
    ledger.claim(a, "ns/one", "chosen");
    expect(ledger.claimOf(a)).toEqual({ cluster: "ns/one", why: "chosen", sequence: 1 });
  });

  it("refuses to move a recorded host to another cluster (a placement bug)", () => {
    const ledger = new ClaimLedger();
    ledger.claim(a, "ns/one", "first");
    expect(() => ledger.claim(a, "ns/two", "second")).toThrow(/metal3\/a is held by ns\/one/);
  });

  it("answers standing claims as made before everything else, until a claim is recorded", () => {
    const ledger = ledgerWithLabels();
    expect(ledger.claimOf(labelled)).toEqual({ cluster: "ns/sip", why: "labelled", sequence: 0 });
    expect(ledger.isRecorded(labelled)).toBe(false);
    ledger.claim(labelled, "ns/sip", "kept");
    expect(ledger.claimOf(labelled)).toEqual({ cluster: "ns/sip", why: "kept", sequence: 0 });
    // The lock outranks labels: it may give a labelled host to another cluster.
    const other = ledgerWithLabels();
    other.claim(labelled, "ns/locked", "lock");
    expect(other.claimOf(labelled)).toEqual({ cluster: "ns/locked", why: "lock", sequence: 1 });
  });

  it("gives each decision a view that later claims do not change", () => {
    const ledger = ledgerWithLabels();
    ledger.claim(a, "ns/one", "first");
    const before = ledger.view();
    ledger.claim(b, "ns/two", "later");
    const after = ledger.view();
    expect([a, b, labelled].map((host) => before.ownerOf(host))).toEqual(["ns/one", undefined, "ns/sip"]);
    expect([a, b, labelled].map((host) => after.ownerOf(host))).toEqual(["ns/one", "ns/two", "ns/sip"]);
  });

  it("keeps released hosts with the releasing cluster unless already claimed", () => {
    const ledger = new ClaimLedger();
    ledger.claim(b, "ns/other", "lock");
    ledger.release(a, "ns/sip", "Worker", "being released");
    ledger.release(b, "ns/sip", "ControlPlane", "being released");
    expect(ledger.claimOf(a)?.cluster).toBe("ns/sip");
    expect(ledger.claimOf(b)?.cluster).toBe("ns/other");
    expect(ledger.releasing("ns/sip")).toEqual([
      { host: a, role: "Worker" },
      { host: b, role: "ControlPlane" },
    ]);
    expect(ledger.releasing("ns/none")).toEqual([]);
    expect(ledger.releasingClusters()).toEqual(["ns/sip"]);
  });
});
