/** Selector: the host's labels don't match a SIP role's labelSelector. */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import { matchesSelector, type LabelSelector } from "../../inventory/selector.ts";
import { PluginFilter, rejectionBy, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const SELECTOR = {
  name: "Selector",
  reads: HOST_FACTS.labels,
  reasons: { mismatch: () => "not matching the labelSelector" },
} as const satisfies FilterPlugin;

const MISMATCH = Object.freeze(rejectionBy(SELECTOR, "mismatch"));

/** Rejects hosts whose labels don't match a SIP role's selector. */
export function selected(selector: LabelSelector): HostFilter {
  return new PluginFilter(SELECTOR, (host) =>
    matchesSelector(host.labels, selector) ? undefined : MISMATCH,
  );
}
