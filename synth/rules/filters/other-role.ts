/** OtherRole: another role of the same SIPCluster has the host. */
import type { Host } from "../../inventory/host.ts";
import { PluginFilter, rejectionBy, type FilterPlugin, type HostFilter, type Rejection } from "./plugin.ts";

export const OTHER_ROLE = {
  name: "OtherRole",
  // It reads only the placing cluster's own state.
  reads: 0,
  reasons: { taken: () => "serves another role of this cluster" },
} as const satisfies FilterPlugin;

const TAKEN: Rejection = Object.freeze(rejectionBy(OTHER_ROLE, "taken"));

/** Rejects hosts `taken` says serve another role of this SIPCluster. */
export function otherRole(taken: (host: Host) => boolean): HostFilter {
  return new PluginFilter(OTHER_ROLE, (host) => (taken(host) ? TAKEN : undefined));
}
