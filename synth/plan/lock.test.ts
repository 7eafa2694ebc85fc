import { describe, expect, it } from "vitest";
import { makeHost } from "../../test/builders/inventory.ts";
import { hostSnapshot } from "./lock.ts";

describe("hostSnapshot", () => {
  const nics = [
    { name: "eth0", mac: "00:00:00:00:00:01", ipv4: "10.0.0.1" },
    { name: "eth1", mac: "00:00:00:00:00:02", ipv4: "10.0.0.2" },
  ];

  it("is the same for an inspection that lists the same NICs in another order", () => {
    // Found by test/inventory-snapshot.test.ts: the canonical snapshot sorts NICs, so a released host
    // read from it got another hash than from the objects it was taken from.
    expect(hostSnapshot(makeHost({ name: "a", nics: [...nics].reverse() }))).toBe(
      hostSnapshot(makeHost({ name: "a", nics })),
    );
  });

  it("changes when a NIC's address does", () => {
    const moved = [nics[0]!, { ...nics[1]!, ipv4: "10.0.0.3" }];
    expect(hostSnapshot(makeHost({ name: "a", nics: moved }))).not.toBe(
      hostSnapshot(makeHost({ name: "a", nics })),
    );
  });
});
