/** Topology: at most one host per value of a SIP role's topology label. */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import { PluginFilter, rejectionBy, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const TOPOLOGY = {
  name: "Topology",
  reads: HOST_FACTS.labels,
  // `requested` is the label key, `available` the value a chosen host has too.
  reasons: { "same-domain": ({ requested }) => `same ${requested} as a chosen host` },
} as const satisfies FilterPlugin;

/**
 * Rejects hosts whose `key` label has a value a chosen host has (`taken`, which may grow as hosts are
 * chosen). Hosts without the label are unconstrained; without a key, nothing is.
 */
export function topologySpread(key: string | undefined, taken: ReadonlySet<string>): HostFilter {
  return new PluginFilter(TOPOLOGY, (host) => {
    const value = key === undefined ? undefined : host.labels[key];
    return value !== undefined && taken.has(value)
      ? rejectionBy(TOPOLOGY, "same-domain", { requested: key, available: value })
      : undefined;
  });
}
