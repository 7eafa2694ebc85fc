/**
 * The host filters, registered in one list (the scheduler framework's `plugins/registry.go`), and the
 * one rejection vocabulary read from it: each plugin in `rules/filters/` owns its name, the host facts
 * it reads, its reasons and their words, and the finding about a host a MAC entry names (decision
 * 0064). A rejection is rendered from its plugin into the `no-fit` histogram, into `explain`, and,
 * for a host a MAC entry names, into the `cpu-insufficient` / `sriov-missing` / … findings, so a
 * user reads one vocabulary everywhere.
 */
import { compareText } from "../issue.ts";
import type { ResourceNeeds } from "../model/bpa.ts";
import type { Host } from "../inventory/host.ts";
import { ARCH } from "./filters/arch.ts";
import { AVAILABLE } from "./filters/available.ts";
import { CPU_FLAGS } from "./filters/cpu-flags.ts";
import { CPU_MODEL } from "./filters/cpu-model.ts";
import { CPUS } from "./filters/cpus.ts";
import { DISK } from "./filters/disk.ts";
import { INTERFACE } from "./filters/interface.ts";
import { MEMORY } from "./filters/memory.ts";
import { NAMED } from "./filters/named.ts";
import { NIC_SPEED } from "./filters/nic-speed.ts";
import { OTHER_ROLE } from "./filters/other-role.ts";
import { PICK } from "./filters/pick.ts";
import type { FilterPlugin, HostFilter, MacEntryRule, Rejection } from "./filters/plugin.ts";
import { QAT } from "./filters/qat.ts";
import { SELECTOR } from "./filters/selector.ts";
import { SRIOV } from "./filters/sriov.ts";
import { TOPOLOGY } from "./filters/topology.ts";
import { UNCLAIMED } from "./filters/unclaimed.ts";
import { UNUSED } from "./filters/unused.ts";

/**
 * Every filter, and every planning step that passes a host over without one. The resource filters
 * of an entry run in this order, so it is the order a host's rejection is attributed in.
 */
export const FILTER_PLUGINS: readonly FilterPlugin[] = [
  UNCLAIMED,
  UNUSED,
  AVAILABLE,
  CPUS,
  MEMORY,
  SRIOV,
  QAT,
  ARCH,
  CPU_MODEL,
  CPU_FLAGS,
  NIC_SPEED,
  DISK,
  SELECTOR,
  INTERFACE,
  TOPOLOGY,
  OTHER_ROLE,
  NAMED,
  PICK,
];

const PLUGIN_BY_NAME: ReadonlyMap<string, FilterPlugin> = new Map(
  FILTER_PLUGINS.map((plugin) => [plugin.name, plugin]),
);

/** The plugins of the resources a BPA entry may ask for, in registry order. */
const RESOURCE_PLUGINS = FILTER_PLUGINS.filter((plugin) => plugin.ofNeeds !== undefined);

/** The plugin that made `rejection`; a rejection no plugin registered made is a bug. */
function pluginOf(rejection: Rejection): FilterPlugin {
  const plugin = PLUGIN_BY_NAME.get(rejection.filter);
  if (plugin === undefined) throw new Error(`no host filter is registered as ${rejection.filter}`);
  return plugin;
}

/**
 * A rejection in the words of the `no-fit` histogram and `explain`: `fewer than 20 CPUs`,
 * `claimed by other clusters`, `same vino.airshipit.org/rack as a chosen host`.
 */
export function rejectionText(rejection: Rejection): string {
  const words = pluginOf(rejection).reasons[rejection.reason];
  if (words === undefined) throw new Error(`${rejection.filter} has no reason ${rejection.reason}`);
  return words(rejection);
}

/** The finding a rejection of a host a MAC entry names makes, if its filter is a resource's. */
export function macEntryRule(rejection: Rejection): MacEntryRule | undefined {
  return pluginOf(rejection).macEntry;
}

/**
 * The resource filters for a BPA entry, in the order reasons are attributed. They depend on the
 * entry alone: planning keeps them per entry for a plan (`PlanCache`, decision 0067).
 */
export function resourceFilters(needs: ResourceNeeds): readonly HostFilter[] {
  return RESOURCE_PLUGINS.flatMap((plugin) => plugin.ofNeeds?.(needs) ?? []);
}

/** The first rejection of any filter, or undefined when `host` passes every filter. */
export function rejection(filters: readonly HostFilter[], host: Host): Rejection | undefined {
  for (const candidate of filters) {
    const found = candidate.check(host);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Every filter's rejection of `host`, in filter order: what a host the CR named lacks. */
export function rejections(filters: readonly HostFilter[], host: Host): Rejection[] {
  return filters.flatMap((candidate) => candidate.check(host) ?? []);
}

/**
 * The `no-fit` message: `0/42 hosts fit: 30 claimed by other clusters, 8 fewer than 20 CPUs`.
 * Reasons are sorted by count (most common first), then alphabetically, so the text is stable.
 */
export function fitHistogram(total: number, fitting: number, rejected: Iterable<Rejection>): string {
  const tally = new RejectionTally();
  for (const found of rejected) tally.add(found);
  return tally.histogram(total, fitting);
}

/**
 * Rejections counted as they come, each distinct one worded once when the histogram is made, and
 * counted together with the others of the same words. A `no-fit` finding counts a rejection for
 * every host of the inventory: wording each, and counting by words made anew, cost more than
 * judging the host (decision 0056). Filters give the same object for the same verdict where they
 * can (`atLeast`), so a tally holds a handful.
 */
export class RejectionTally {
  readonly #counts = new Map<Rejection, number>();

  add(rejection: Rejection, hosts = 1): void {
    this.#counts.set(rejection, (this.#counts.get(rejection) ?? 0) + hosts);
  }

  /** A tally that starts with these counts. */
  copy(): RejectionTally {
    const copy = new RejectionTally();
    for (const [rejection, count] of this.#counts) copy.#counts.set(rejection, count);
    return copy;
  }

  /** The message for `total` hosts of which `fitting` fit and those added were rejected. */
  histogram(total: number, fitting: number): string {
    const counts = new Map<string, number>();
    for (const [rejection, count] of this.#counts) {
      const text = rejectionText(rejection);
      counts.set(text, (counts.get(text) ?? 0) + count);
    }
    const parts = [...counts]
      .sort(([reasonA, countA], [reasonB, countB]) => countB - countA || compareText(reasonA, reasonB))
      .map(([reason, count]) => `${count} ${reason}`);
    return `${fitting}/${total} hosts fit${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`;
  }
}
