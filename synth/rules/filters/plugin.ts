/**
 * What a host filter is, in the style of the Kubernetes scheduler framework: a plugin owns its name,
 * the host facts it reads, its rejection reasons with their words, and, for a resource an entry asks
 * for, the finding about a host a MAC entry names (the scheduler's `fit.go` owns
 * `InsufficientResource`). Each plugin is one file beside this one; `rules/filters.ts` registers
 * them in one list and reads the vocabulary from it.
 */
import type { FieldPath } from "../../field-path.ts";
import type { Host } from "../../inventory/host.ts";
import type { HostFacts } from "../../inventory/host-facts.ts";
import type { RuleId } from "../../rule-catalogue.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";

/** Why a host was not taken: which filter, which of its reasons, and the numbers or names involved. */
export interface Rejection {
  /** The {@link FilterPlugin.name} of the filter, or planning step, that passed the host over. */
  readonly filter: string;
  /** One of that plugin's {@link FilterPlugin.reasons}. */
  readonly reason: string;
  /** What was asked: a CPU count, bytes, an interface id, a label key, a MAC, a master's label. */
  readonly requested?: number | string;
  /** What the host has: CPUs, bytes, a label value. */
  readonly available?: number | string;
}

/**
 * A named check on a host: `undefined` when the host passes, else why not. It declares the host
 * facts its verdict depends on, so a change of any other fact never places its turn again.
 */
export interface HostFilter {
  readonly name: string;
  /** The `HOST_FACTS` `check` reads; none when it reads only the placing cluster's own state. */
  readonly reads: HostFacts;
  check(host: Host): Rejection | undefined;
}

/**
 * A host filter, or a planning step that passes hosts over without one (a named host, the pick), as
 * one registered unit of the rejection vocabulary.
 */
export interface FilterPlugin<Reason extends string = string> {
  /** Stable, PascalCase: the `filter` of its rejections. */
  readonly name: string;
  /** The host facts its filters read (0 when they read only the placing cluster's own state). */
  readonly reads: HostFacts;
  /**
   * Each reason code with its words in the `no-fit` histogram and `explain`: `fewer than 20 CPUs`.
   * Rejections of two plugins with the same words are counted together.
   */
  readonly reasons: { readonly [Code in Reason]: (rejection: Rejection) => string };
  /** For a resource a BPA entry may ask for: its filter when `needs` asks for it. */
  readonly ofNeeds?: (needs: ResourceNeeds) => HostFilter | undefined;
  /** For a resource a BPA entry may ask for: the finding when the host its MAC names is rejected. */
  readonly macEntry?: MacEntryRule;
  /**
   * For a resource a BPA entry may ask for: what `needs` asks of it in the site map's capacity
   * words (`≥ 16 CPUs`), undefined when it asks nothing of it.
   */
  readonly asked?: (needs: ResourceNeeds) => string | undefined;
  /** For a resource a BPA entry may ask for: what `host` has of it in the site map's words (`16 CPUs`). */
  readonly has?: (host: Host) => string | undefined;
}

/** The finding about a host a MAC entry names that a resource filter rejects. */
export interface MacEntryRule {
  /** The entry's field the finding points at (`cpu`, `["hardware", "arch"]`), under the entry's path. */
  readonly field: string | FieldPath;
  finding(rejection: Rejection, host: Host): { readonly rule: RuleId; readonly message: string };
}

/** A rejection by `plugin` for one of its own reasons: a reason it does not word does not compile. */
export function rejectionBy<Reason extends string>(
  plugin: FilterPlugin<Reason>,
  reason: NoInfer<Reason>,
  details?: Pick<Rejection, "requested" | "available">,
): Rejection {
  return { filter: plugin.name, reason, ...details };
}

/**
 * A filter of `plugin` whose verdict `rejects` makes. A class, not a closure: placing makes one per
 * entry, and the webhook places the same entries review after review.
 */
export class PluginFilter implements HostFilter {
  readonly name: string;
  readonly reads: HostFacts;

  constructor(
    plugin: FilterPlugin,
    readonly check: (host: Host) => Rejection | undefined,
  ) {
    this.name = plugin.name;
    this.reads = plugin.reads;
  }
}

/** The words of a request a host without hardware details can't be checked against. */
export const NO_HARDWARE_DETAILS = "no hardware details";

/**
 * `resources-unknown` for a host a MAC entry names: without `status.hardware` nothing it asks for can
 * be checked, which is a warning, not an error (the host may well have it).
 */
export function hardwareUnknown(host: Host, field: string, requested: string) {
  return {
    rule: "resources-unknown",
    message: `host ${host.id} has no hardware details; can't check ${field}: ${requested}`,
  } as const;
}

/**
 * A filter of a resource the host must have at least `requested` of: `unknown` when the host has no
 * hardware details (never 0: unknown is not none), `insufficient` when it has less.
 */
export function atLeast(
  plugin: FilterPlugin<"unknown" | "insufficient">,
  requested: number,
  available: (host: Host) => number | undefined,
): HostFilter {
  const unknown = Object.freeze(rejectionBy(plugin, "unknown", { requested }));
  // One rejection per amount a host has: a `no-fit` histogram judges every host of the inventory,
  // and counts the same object at once (`RejectionTally`).
  const insufficient = new Map<number, Rejection>();
  return new PluginFilter(plugin, (host) => {
    const has = available(host);
    if (has === undefined) return unknown;
    if (has >= requested) return undefined;
    let rejection = insufficient.get(has);
    if (rejection === undefined) {
      rejection = Object.freeze(rejectionBy(plugin, "insufficient", { requested, available: has }));
      insufficient.set(has, rejection);
    }
    return rejection;
  });
}

/** A filter of a capability the host must be labelled with. */
export function capable(plugin: FilterPlugin<"not-capable">, has: (host: Host) => boolean): HostFilter {
  const notCapable = Object.freeze(rejectionBy(plugin, "not-capable"));
  return new PluginFilter(plugin, (host) => (has(host) ? undefined : notCapable));
}

/**
 * `resources-unknown` for a host a MAC entry names whose inspection does not report what `field`
 * asks about (a host not inspected, an inspector that leaves it out): a warning, as without
 * hardware details, since the host may well have it.
 */
export function notReported(host: Host, what: string, field: string, requested: string) {
  return {
    rule: "resources-unknown",
    message: `host ${host.id} reports no ${what}; can't check ${field}: ${requested}`,
  } as const;
}

/**
 * A filter of a fact the host's inspection reports: `unknown` when it reports none (never a
 * shortfall: unknown is not none), `reason` when `fits` finds the fact short of the request, with
 * what the host has as `available`.
 */
export function inspected<Reason extends string, Fact>(
  plugin: FilterPlugin<"unknown" | Reason>,
  reason: NoInfer<Reason>,
  requested: number | string,
  fact: (host: Host) => Fact | undefined,
  fits: (has: Fact) => boolean,
  available: (has: Fact) => number | string,
): HostFilter {
  const unknown = Object.freeze(rejectionBy(plugin, "unknown", { requested }));
  return new PluginFilter(plugin, (host) => {
    const has = fact(host);
    if (has === undefined) return unknown;
    return fits(has) ? undefined : rejectionBy(plugin, reason, { requested, available: available(has) });
  });
}
