import { describe, expect, it, vi } from "vitest";
import { lockFromAllocations } from "../synth/rules/allocation.ts";
import { allocation } from "../test/builders/allocations.ts";
import { AllocationLedger } from "./allocations.ts";

const east = allocation("edge-a", "east", "bpa", [
  { host: "metal3/node-02", role: "worker", node: "worker-1" },
  { host: "metal3/node-01", role: "master", node: "master-1" },
]);
const tenant = allocation("edge-sip", "tenant-a", "sip", [
  { host: "metal3/node-03", role: "ControlPlane" },
  { host: "metal3/node-04", role: "Worker", released: true, snapshot: "1a2b3c4d" },
]);

function ledgerOf(objects: Record<string, ReturnType<typeof allocation>>) {
  const read = vi.fn(lockFromAllocations);
  const ledger = new AllocationLedger(read);
  for (const [id, object] of Object.entries(objects)) ledger.set(id, object);
  return { ledger, read };
}

describe("AllocationLedger", () => {
  it("gives exactly the lock lockFromAllocations gives for the whole set", () => {
    const { ledger } = ledgerOf({ "edge-a/east": east, "edge-sip/tenant-a": tenant });
    expect(ledger.result()).toEqual(lockFromAllocations([tenant, east]));
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
    expect(ledger.result()).toEqual(lockFromAllocations([smaller, tenant]));
    ledger.delete("edge-sip/tenant-a");
    expect(read).toHaveBeenCalledTimes(1);
    expect(ledger.result()).toEqual(lockFromAllocations([smaller]));
  });

  it.each([
    {
      case: "a host in two allocations",
      second: allocation("edge-a", "west", "bpa", [
        { host: "metal3/node-01", role: "master", node: "master-1" },
      ]),
      path: "spec.hosts",
      object: "Allocation/edge-a/west",
    },
    {
      case: "a malformed entry",
      second: allocation("edge-a", "west", "bpa", [
        { host: "metal3/node-05", role: "boss", node: "master-1" },
      ]),
      path: undefined,
      object: undefined,
    },
  ])("reports $case as lock-invalid and leaves the host out", ({ second, path, object }) => {
    const { ledger } = ledgerOf({ "edge-a/east": east, "edge-a/west": second });
    const { lock, issues } = ledger.result();
    expect(issues.map((found) => found.rule)).toEqual(["lock-invalid"]);
    if (path !== undefined) expect(issues[0]).toMatchObject({ path, object });
    const hosts = lock.entries.map((entry) => entry.host);
    expect(hosts).not.toContain(second.spec.hosts[0]?.host);
  });
});
