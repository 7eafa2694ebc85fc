/** Unused: another node of the same BPA cluster has the host. */
import type { Host } from "../../inventory/host.ts";
import { PluginFilter, rejectionBy, type FilterPlugin, type HostFilter, type Rejection } from "./plugin.ts";

export const UNUSED = {
  name: "Unused",
  // It reads only the placing cluster's own state.
  reads: 0,
  reasons: { taken: () => "serves another node of this cluster" },
} as const satisfies FilterPlugin;

const TAKEN: Rejection = Object.freeze(rejectionBy(UNUSED, "taken"));

/** Rejects hosts `taken` says this cluster uses for another node. */
export function unused(taken: (host: Host) => boolean): HostFilter {
  return new PluginFilter(UNUSED, (host) => (taken(host) ? TAKEN : undefined));
}
