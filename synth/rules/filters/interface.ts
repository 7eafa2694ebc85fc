/** Interface: the host has no IP on a `nodeInterfaceId` the SIPCluster's services use. */
import { ipForInterface } from "../../inventory/host.ts";
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import { PluginFilter, rejectionBy, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const INTERFACE = {
  name: "Interface",
  reads: HOST_FACTS.network,
  reasons: { "no-address": ({ requested }) => `no IP on interface ${requested}` },
} as const satisfies FilterPlugin;

/** Rejects hosts without an IP on interface `id` (docs/contract.md §1.3). */
export function addressed(id: string): HostFilter {
  const noAddress = Object.freeze(rejectionBy(INTERFACE, "no-address", { requested: id }));
  return new PluginFilter(INTERFACE, (host) =>
    ipForInterface(host, id) === undefined ? noAddress : undefined,
  );
}
