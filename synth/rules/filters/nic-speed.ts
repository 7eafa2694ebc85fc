/** NicSpeed: the host has no NIC as fast as the entry's `hardware.nicSpeedGbps` asks (decision 0065). */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { Host } from "../../inventory/host.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import { inspected, notReported, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const NIC_SPEED = {
  name: "NicSpeed",
  // The speeds are the NICs', which the network fact covers.
  reads: HOST_FACTS.network,
  reasons: {
    unknown: () => "no NIC speed reported",
    slow: ({ requested }) => `no NIC of ${requested} Gbps or faster`,
  },
  ofNeeds,
  macEntry: {
    field: ["hardware", "nicSpeedGbps"],
    finding: ({ reason, requested, available }, host) =>
      reason === "unknown"
        ? notReported(host, "NIC speed", "hardware.nicSpeedGbps", String(requested))
        : {
            rule: "nic-speed-insufficient",
            message: `host ${host.id}'s fastest NIC is ${available} Gbps, ${requested} Gbps requested`,
          },
  },
  asked: ({ nicSpeedGbps }) => (nicSpeedGbps === undefined ? undefined : `a NIC of ≥ ${nicSpeedGbps} Gbps`),
  has: (host) => {
    const fastest = fastestNic(host);
    return fastest === undefined ? undefined : `${fastest} Gbps NIC`;
  },
} as const satisfies FilterPlugin;

function ofNeeds({ nicSpeedGbps }: ResourceNeeds): HostFilter | undefined {
  return nicSpeedGbps === undefined
    ? undefined
    : inspected(
        NIC_SPEED,
        "slow",
        nicSpeedGbps,
        fastestNic,
        (has) => has >= nicSpeedGbps,
        (has) => has,
      );
}

/** The speed of the host's fastest NIC, `undefined` when inspection reports none. */
function fastestNic(host: Host): number | undefined {
  let fastest: number | undefined;
  for (const nic of host.nics)
    if (nic.speedGbps !== undefined) fastest = Math.max(fastest ?? 0, nic.speedGbps);
  return fastest;
}
