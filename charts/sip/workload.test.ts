import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SERVICE_NAME_PREFIXES, serviceObjectName } from "../../synth/names.ts";
import { dnsLabel } from "../../test/builders/inventory.ts";

/** SIPCluster names as users write them: DNS-1123 labels, with the dashes and digits that made names clash. */
const clusterName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);

describe("serviceObjectName", () => {
  it("never names a further service of cluster x like the first service of cluster x-1", () => {
    const second = serviceObjectName("loadbalancer-controlplane", dnsLabel("x"), 1);
    expect(second).not.toBe(serviceObjectName("loadbalancer-controlplane", dnsLabel("x-1"), 0));
    expect(second).toBe("loadbalancer-controlplane1-x");
  });

  it("gives different (cluster, index) pairs different names (property)", () => {
    // The second name is often the first plus a short dashed suffix: where suffix schemes collide.
    const names = fc
      .tuple(clusterName, fc.stringMatching(/^(-[0-9a-z]{1,2}){0,2}$/), fc.boolean())
      .map(([a, suffix, related]) => [a, related ? `${a}${suffix}` : suffix.slice(1) || a] as const);
    fc.assert(
      fc.property(names, fc.nat(3), fc.nat(3), ([a, b], indexA, indexB) => {
        fc.pre(a !== b || indexA !== indexB);
        for (const prefix of Object.values(SERVICE_NAME_PREFIXES)) {
          expect(serviceObjectName(prefix, dnsLabel(a), indexA)).not.toBe(
            serviceObjectName(prefix, dnsLabel(b), indexB),
          );
        }
      }),
      { numRuns: 2000 },
    );
  });
});
