import { describe, expect, it, vi } from "vitest";
import { lockFromAllocations } from "../synth/rules/allocation.ts";
import { allocation } from "../test/builders/allocations.ts";
import { DEFAULT_ALLOCATION_TRUST } from "./allocation-trust.ts";
import { AllocationLedger, NO_DAMAGE } from "./allocations.ts";

const east = allocation("edge-a", "east", "bpa", [
  { host: "metal3/node-02", role: "worker", node: "worker-1" },
  { host: "metal3/node-01", role: "master", node: "master-1" },
]);
const tenant = allocation("edge-sip", "tenant-a", "sip", [
  { host: "metal3/node-03", role: "ControlPlane" },
  { host: "metal3/node-04", role: "Worker", released: true, snapshot: "1a2b3c4d" },
]);

function ledgerOf(objects: Record<string, unknown>) {
  const read = vi.fn(lockFromAllocations);
  const ledger = new AllocationLedger(read, {
    ...DEFAULT_ALLOCATION_TRUST,
    namespaces: ["edge-a", "edge-sip"],
  });
  for (const [id, object] of Object.entries(objects)) ledger.set(id, object);
  return { ledger, read };
}

describe("AllocationLedger", () => {
  it("gives exactly the lock lockFromAllocations gives for the whole set", () => {
    const { ledger } = ledgerOf({ "edge-a/east": east, "edge-sip/tenant-a": tenant });
    expect(ledger.result()).toEqual({ ...lockFromAllocations([tenant, east]), damage: NO_DAMAGE });
    expect(ledger.result().issues).toEqual([]);
  });

  it("parses only the allocation that changed", () => {
    const { ledger, read } = ledgerOf({ "edge-a/east": east, "edge-sip/tenant-a": tenant });
    ledger.result();
    read.mockClear();
    const smaller = allocation("edge-a", "east", "bpa", [
      { host: "metal3/node-01", role: "master", node: "master-1" },
    ]);
    ledger.set("edge-a/east", smaller);
    expect(read).toHaveBeenCalledTimes(1);
    expect(ledger.result().lock).toEqual(lockFromAllocations([smaller, tenant]).lock);
    ledger.delete("edge-sip/tenant-a");
    expect(read).toHaveBeenCalledTimes(1);
    expect(ledger.result().lock).toEqual(lockFromAllocations([smaller]).lock);
  });

  it("holds a host two sound allocations list (a sync in the other order) from everyone, damaging neither", () => {
    const west = allocation("edge-a", "west", "bpa", [
      { host: "metal3/node-01", role: "master", node: "master-1" },
    ]);
    const { ledger } = ledgerOf({ "edge-a/east": east, "edge-a/west": west });
    const { lock, issues, damage } = ledger.result();
    expect(issues).toMatchObject([
      { rule: "lock-invalid", path: "spec.hosts", object: "Allocation/edge-a/west" },
    ]);
    expect(lock.entries.map((entry) => entry.host)).toEqual(["metal3/node-02"]);
    expect(damage.allocations.size).toBe(0);
    expect(damage.inTransit).toBe(1);
    expect(damage.hosts).toEqual(
      new Map([
        [
          "metal3/node-01",
          "listed by Allocation edge-a/east and Allocation edge-a/west: in transit until one of them no longer lists it",
        ],
      ]),
    );
  });

  it.each([
    {
      case: "a malformed entry (role mastr)",
      west: allocation("edge-a", "west", "bpa", [
        { host: "metal3/node-05", role: "mastr", node: "master-1" },
        { host: "metal3/node-06", role: "worker", node: "worker-1" },
      ]),
      kept: ["metal3/node-06"],
      why: /^named by Allocation edge-a\/west, which is damaged: .*mastr/,
    },
    {
      case: "a spec a stranger wrote (kubectl edit)",
      west: {
        ...allocation("edge-a", "west", "bpa", [
          { host: "metal3/node-05", role: "master", node: "master-1" },
          { host: "metal3/node-06", role: "worker", node: "worker-1" },
        ]),
        metadata: {
          name: "west",
          namespace: "edge-a",
          managedFields: [
            { manager: "kustomize-controller", operation: "Apply", fieldsV1: { "f:spec": { "f:kind": {} } } },
            { manager: "kubectl-edit", operation: "Update", fieldsV1: { "f:spec": { "f:hosts": {} } } },
          ],
        },
      },
      kept: [],
      why: /^named by Allocation edge-a\/west, which is damaged: .*not trusted: its spec was written by "kubectl-edit"/,
    },
    {
      case: "an allocation outside the site's namespaces",
      west: allocation("default", "west", "bpa", [
        { host: "metal3/node-05", role: "master", node: "master-1" },
        { host: "metal3/node-06", role: "worker", node: "worker-1" },
      ]),
      kept: [],
      why: /not trusted: it is in namespace "default", and the site's Allocations are in edge-a, edge-sip only/,
    },
  ])("confines $case to its cluster and the hosts it names", ({ west, kept, why }) => {
    const { ledger } = ledgerOf({ "edge-a/east": east, "edge-a/west": west });
    const { lock, damage } = ledger.result();
    expect([...damage.allocations.keys()]).toEqual(["edge-a/west"]);
    expect([...damage.hosts.keys()]).toEqual(["metal3/node-05", "metal3/node-06"]);
    for (const reason of damage.hosts.values()) expect(reason).toMatch(why);
    expect(damage.inTransit).toBe(0);
    // East's entries stand; of west's, only its sound ones when it is trusted at all.
    expect(lock.entries.map((entry) => entry.host).sort()).toEqual([
      "metal3/node-01",
      "metal3/node-02",
      ...kept,
    ]);
  });
});
