/**
 * Host filters in the style of the Kubernetes scheduler framework: each is a named check that either
 * passes a host or says why not with a structured {@link Rejection} (the scheduler's
 * `InsufficientResource`). That one value is rendered into the `no-fit` histogram, into `explain`,
 * and, for a host a MAC entry names, into the `cpu-insufficient` / `sriov-missing` / … messages, so a
 * user reads one vocabulary everywhere.
 */
import type { ClusterKey } from "../cluster-key.ts";
import type { Host, UnavailableReason } from "../inventory/host.ts";
import { HOST_FACTS, type HostFacts } from "../inventory/host-facts.ts";
import { matchesSelector, type LabelSelector } from "../inventory/selector.ts";
import { ipForInterface } from "../inventory/host.ts";
import { compareText } from "../issue.ts";
import { formatBytes } from "../quantity.ts";
import type { ResourceNeeds } from "../model/bpa.ts";
import type { ClaimView } from "../model/claims.ts";

/** The filters, and the planning steps that pass a host over without a filter, by name. */
export const FILTERS = {
  /** Another cluster holds the host. */
  unclaimed: "Unclaimed",
  /** Another node of the same BPA cluster has the host. */
  unused: "Unused",
  /** The host is consumed, going away, off, broken, paused or detached (decision 0052). */
  available: "Available",
  cpus: "Cpus",
  memory: "Memory",
  sriov: "Sriov",
  qat: "Qat",
  /** The SIP role's labelSelector. */
  selector: "Selector",
  /** An IP on each `nodeInterfaceId` the SIPCluster's services use. */
  interface: "Interface",
  /** At most one host per topology value within a SIP role. */
  topology: "Topology",
  /** Another role of the same SIPCluster has the host. */
  otherRole: "OtherRole",
  /** The CR named a host itself (a MAC, a null entry): every other host is passed over. */
  named: "Named",
  /** The host passed every filter but another was picked. */
  pick: "Pick",
} as const;

/** One of {@link FILTERS}. */
export type FilterName = (typeof FILTERS)[keyof typeof FILTERS];

/** Why a filter refused a host; stable codes, rendered by {@link rejectionText}. */
export const REASONS = {
  /** Unclaimed: held by another cluster. */
  claimed: "claimed",
  /** Unused / OtherRole: this cluster already uses the host elsewhere. */
  taken: "taken",
  /** Available: `spec.consumerRef` names a consumer (a machine of another cluster). */
  consumed: "consumed",
  /** Available: being deleted or deprovisioned. */
  deleting: "deleting",
  /** Available: `spec.online` or `status.poweredOn` is false. */
  off: "off",
  /** Available: operational status `error`/`detached`, or an error type. */
  broken: "broken",
  /** Available: the paused annotation. */
  paused: "paused",
  /** Available: the detached annotation. */
  detached: "detached",
  /** Available: a damaged Allocation names it, or two list it (the webhook, decision 0056). */
  contested: "contested",
  /** Cpus / Memory: the host has no hardware details, so the request can't be checked. */
  unknown: "unknown",
  /** Cpus / Memory: less than `requested`; `available` is what the host has. */
  insufficient: "insufficient",
  /** Sriov / Qat: the host is not labelled capable. */
  notCapable: "not-capable",
  /** Selector: the labels don't match. */
  mismatch: "mismatch",
  /** Interface: no IP on interface `requested`. */
  noAddress: "no-address",
  /** Topology: a chosen host has the same value (`available`) of label `requested`. */
  sameDomain: "same-domain",
  /** Named: the entry's MAC (`requested`) is another host's. */
  otherMac: "other-mac",
  /** Named: a null entry shares the host of master `requested`. */
  otherMaster: "other-master",
  /** Named: the entry's mac-address is malformed, so no host was considered. */
  malformedMac: "malformed-mac",
  /** Pick: the host fits, but nothing was left to choose (a no-fit counts it as fitting). */
  fits: "fits",
  /** Pick: best fit preferred a smaller host. */
  smallerChosen: "smaller-chosen",
  /** Pick: the lock's host was kept. */
  lockedKept: "locked-kept",
  /** Pick: the node stays on the lock's host, which the inventory lost (decision 0052). */
  lockedVanished: "locked-vanished",
  /** Pick: the SIP role already has all the hosts it asks for. */
  roleFull: "role-full",
} as const;

/** One of {@link REASONS}. */
export type ReasonCode = (typeof REASONS)[keyof typeof REASONS];

/** Why a host was not taken: which filter, which reason, and the numbers or names involved. */
export interface Rejection {
  readonly filter: FilterName;
  readonly reason: ReasonCode;
  /** What was asked: a CPU count, bytes, an interface id, a label key, a MAC, a master's label. */
  readonly requested?: number | string;
  /** What the host has: CPUs, bytes, a label value. */
  readonly available?: number | string;
}

/**
 * A rejection in the words of the `no-fit` histogram and `explain`: `fewer than 20 CPUs`,
 * `claimed by other clusters`, `same vino.airshipit.org/rack as a chosen host`.
 */
export function rejectionText(rejection: Rejection): string {
  const { filter, reason, requested } = rejection;
  switch (reason) {
    case REASONS.claimed:
      return "claimed by other clusters";
    case REASONS.taken:
      return filter === FILTERS.otherRole
        ? "serves another role of this cluster"
        : "serves another node of this cluster";
    case REASONS.consumed:
      return "consumed by another consumer";
    case REASONS.deleting:
      return "being deleted";
    case REASONS.off:
      return "powered off";
    case REASONS.broken:
      return "in error";
    case REASONS.paused:
      return "paused";
    case REASONS.detached:
      return "detached";
    case REASONS.contested:
      return "contested by the cluster's Allocations";
    case REASONS.unknown:
      return "no hardware details";
    case REASONS.insufficient:
      return filter === FILTERS.cpus
        ? `fewer than ${requested} CPUs`
        : `less than ${quantityText(filter, requested)} memory`;
    case REASONS.notCapable:
      return filter === FILTERS.sriov ? "not SR-IOV capable" : "not QAT capable";
    case REASONS.mismatch:
      return "not matching the labelSelector";
    case REASONS.noAddress:
      return `no IP on interface ${requested}`;
    case REASONS.sameDomain:
      return `same ${requested} as a chosen host`;
    case REASONS.otherMac:
      return `has no NIC ${requested}`;
    case REASONS.otherMaster:
      return `not master ${requested}'s host`;
    case REASONS.malformedMac:
      return "not considered: the mac-address is malformed";
    case REASONS.fits:
      return "fits";
    case REASONS.smallerChosen:
      return "fits, but a smaller host was chosen";
    case REASONS.lockedKept:
      return "fits, but the locked host is kept";
    case REASONS.lockedVanished:
      return "not considered: the node stays on its locked host, which vanished";
    case REASONS.roleFull:
      return "not needed: the role is full";
  }
}

/** An amount a rejection names, as messages write it: memory as a quantity (`64Gi`), the rest as is. */
export function quantityText(filter: FilterName, amount: number | string | undefined): string {
  return filter === FILTERS.memory && typeof amount === "number" ? formatBytes(amount) : String(amount);
}

/**
 * A named check on a host: `undefined` when the host passes, else why not. It declares the host
 * facts its verdict depends on, so a change of any other fact never places its turn again.
 */
export interface HostFilter {
  readonly name: FilterName;
  /** The {@link HOST_FACTS} `check` reads; none when it reads only the placing cluster's own state. */
  readonly reads: HostFacts;
  check(host: Host): Rejection | undefined;
}

/** Rejects hosts that another cluster owns (or this run already gave away) as `claims` sees them. */
export function unclaimed(claims: ClaimView, cluster: ClusterKey): HostFilter {
  return new Unclaimed(claims, cluster);
}

/** {@link unclaimed}'s filter: one object, not a filter, a closure and its context, for every entry placed. */
class Unclaimed implements HostFilter {
  readonly name = FILTERS.unclaimed;
  readonly reads = HOST_FACTS.claim;

  constructor(
    private readonly claims: ClaimView,
    private readonly cluster: ClusterKey,
  ) {}

  check(host: Host): Rejection | undefined {
    const owner = this.claims.ownerOf(host);
    return owner !== undefined && owner !== this.cluster ? CLAIMED : undefined;
  }
}

/** The rejection {@link Unclaimed} gives: the same object each time, as rejections are never changed. */
const CLAIMED: Rejection = Object.freeze({ filter: FILTERS.unclaimed, reason: REASONS.claimed });

/**
 * Rejects hosts that can take no new node: consumed, going away, off, broken, paused or detached
 * (decision 0052), for the first reason the host has. A host the cluster holds already is never
 * judged by it: its node stays, with a `host-unavailable` warning (`rules/availability.ts`).
 */
export const AVAILABLE: HostFilter = Object.freeze({
  name: FILTERS.available,
  reads: HOST_FACTS.availability,
  check: (host: Host): Rejection | undefined => {
    const first = host.availability?.reasons[0];
    return first === undefined ? undefined : UNAVAILABLE[first.reason];
  },
});

/** The rejection of each {@link UnavailableReason}, made once. */
const UNAVAILABLE: Readonly<Record<UnavailableReason, Rejection>> = {
  consumed: Object.freeze({ filter: FILTERS.available, reason: REASONS.consumed }),
  deleting: Object.freeze({ filter: FILTERS.available, reason: REASONS.deleting }),
  off: Object.freeze({ filter: FILTERS.available, reason: REASONS.off }),
  broken: Object.freeze({ filter: FILTERS.available, reason: REASONS.broken }),
  paused: Object.freeze({ filter: FILTERS.available, reason: REASONS.paused }),
  detached: Object.freeze({ filter: FILTERS.available, reason: REASONS.detached }),
  contested: Object.freeze({ filter: FILTERS.available, reason: REASONS.contested }),
};

/** Rejects hosts this cluster already uses for something else (`filter` says what). */
export function notTaken(name: TakenFilterName, taken: (host: Host) => boolean): HostFilter {
  return new NotTaken(name, taken);
}

type TakenFilterName = typeof FILTERS.unused | typeof FILTERS.otherRole;

/** {@link notTaken}'s filter: one object and its rejections made once, as placing makes one per entry. */
class NotTaken implements HostFilter {
  /** It reads only the placing cluster's own state. */
  readonly reads = 0;

  constructor(
    readonly name: TakenFilterName,
    private readonly taken: (host: Host) => boolean,
  ) {}

  check(host: Host): Rejection | undefined {
    return this.taken(host) ? TAKEN[this.name] : undefined;
  }
}

const TAKEN: Readonly<Record<TakenFilterName, Rejection>> = {
  [FILTERS.unused]: Object.freeze({ filter: FILTERS.unused, reason: REASONS.taken }),
  [FILTERS.otherRole]: Object.freeze({ filter: FILTERS.otherRole, reason: REASONS.taken }),
};

/**
 * The resource filters for a BPA entry, in the order reasons are attributed. Built once per entry:
 * they depend on the entry alone, and the webhook places the same entries again review after review.
 */
export function resourceFilters(needs: ResourceNeeds): readonly HostFilter[] {
  let filters = filtersByNeeds.get(needs);
  if (filters === undefined) filtersByNeeds.set(needs, (filters = newResourceFilters(needs)));
  return filters;
}

const filtersByNeeds = new WeakMap<ResourceNeeds, readonly HostFilter[]>();

function newResourceFilters(needs: ResourceNeeds): HostFilter[] {
  const filters: HostFilter[] = [];
  const { cpus, memoryBytes } = needs;
  if (cpus !== undefined) filters.push(atLeast(FILTERS.cpus, cpus, (host) => host.cpus));
  if (memoryBytes !== undefined)
    filters.push(atLeast(FILTERS.memory, memoryBytes, (host) => host.memoryBytes));
  if (needs.sriov) filters.push(capable(FILTERS.sriov, (host) => host.sriov));
  if (needs.qat) filters.push(capable(FILTERS.qat, (host) => host.qat));
  return filters;
}

/** Rejects hosts whose labels don't match a SIP role's selector. */
export function selected(selector: LabelSelector): HostFilter {
  return filter(FILTERS.selector, HOST_FACTS.labels, (host) =>
    matchesSelector(host.labels, selector) ? undefined : { reason: REASONS.mismatch },
  );
}

/** Rejects hosts without an IP on interface `id` (docs/contract.md §1.3). */
export function addressed(id: string): HostFilter {
  return filter(FILTERS.interface, HOST_FACTS.network, (host) =>
    ipForInterface(host, id) === undefined ? { reason: REASONS.noAddress, requested: id } : undefined,
  );
}

/**
 * Rejects hosts whose `key` label has a value a chosen host has (`taken`, which may grow as hosts are
 * chosen). Hosts without the label are unconstrained; without a key, nothing is.
 */
export function topologySpread(key: string | undefined, taken: ReadonlySet<string>): HostFilter {
  return filter(FILTERS.topology, HOST_FACTS.labels, (host) => {
    const value = key === undefined ? undefined : host.labels[key];
    return value !== undefined && taken.has(value)
      ? { reason: REASONS.sameDomain, requested: key, available: value }
      : undefined;
  });
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
  const counts = new Map<string, number>();
  for (const found of rejected) {
    const text = rejectionText(found);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  const parts = [...counts]
    .sort(([reasonA, countA], [reasonB, countB]) => countB - countA || compareText(reasonA, reasonB))
    .map(([reason, count]) => `${count} ${reason}`);
  return `${fitting}/${total} hosts fit${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`;
}

function filter(
  name: FilterName,
  reads: HostFacts,
  check: (host: Host) => Omit<Rejection, "filter"> | undefined,
): HostFilter {
  return new NamedFilter(name, reads, check);
}

/** A filter whose rejections carry its name. A class, not a closure: placing makes one per entry. */
class NamedFilter implements HostFilter {
  constructor(
    readonly name: FilterName,
    readonly reads: HostFacts,
    private readonly rejects: (host: Host) => Omit<Rejection, "filter"> | undefined,
  ) {}

  check(host: Host): Rejection | undefined {
    const found = this.rejects(host);
    return found && { filter: this.name, ...found };
  }
}

function atLeast(
  name: typeof FILTERS.cpus | typeof FILTERS.memory,
  requested: number,
  available: (host: Host) => number | undefined,
): HostFilter {
  return filter(name, HOST_FACTS.hardware, (host) => {
    const has = available(host);
    if (has === undefined) return { reason: REASONS.unknown, requested };
    return has < requested ? { reason: REASONS.insufficient, requested, available: has } : undefined;
  });
}

function capable(name: typeof FILTERS.sriov | typeof FILTERS.qat, has: (host: Host) => boolean): HostFilter {
  return filter(name, HOST_FACTS.hardware, (host) =>
    has(host) ? undefined : { reason: REASONS.notCapable },
  );
}
