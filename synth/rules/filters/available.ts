/**
 * Available: the host can take no new node, being consumed, going away, off, broken, paused or
 * detached (decision 0052), for the first reason the host has. A host the cluster holds already is
 * never judged by it: its node stays, with a `host-unavailable` warning (`rules/availability.ts`).
 */
import type { Host, UnavailableReason } from "../../inventory/host.ts";
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import { rejectionBy, type FilterPlugin, type HostFilter, type Rejection } from "./plugin.ts";

const PLUGIN = {
  name: "Available",
  reads: HOST_FACTS.availability,
  reasons: {
    /** `spec.consumerRef` names a consumer (a machine of another cluster). */
    consumed: () => "consumed by another consumer",
    /** Being deleted or deprovisioned. */
    deleting: () => "being deleted",
    /** `spec.online` or `status.poweredOn` is false. */
    off: () => "powered off",
    /** Operational status `error`/`detached`, or an error type. */
    broken: () => "in error",
    /** The paused annotation. */
    paused: () => "paused",
    /** The detached annotation. */
    detached: () => "detached",
    /** A damaged Allocation names it, or two list it (the webhook, decision 0056). */
    contested: () => "contested by the cluster's Allocations",
  },
} as const satisfies FilterPlugin<UnavailableReason>;

/** The rejection of each {@link UnavailableReason}, made once. */
const UNAVAILABLE: Readonly<Record<UnavailableReason, Rejection>> = {
  consumed: Object.freeze(rejectionBy(PLUGIN, "consumed")),
  deleting: Object.freeze(rejectionBy(PLUGIN, "deleting")),
  off: Object.freeze(rejectionBy(PLUGIN, "off")),
  broken: Object.freeze(rejectionBy(PLUGIN, "broken")),
  paused: Object.freeze(rejectionBy(PLUGIN, "paused")),
  detached: Object.freeze(rejectionBy(PLUGIN, "detached")),
  contested: Object.freeze(rejectionBy(PLUGIN, "contested")),
};

/** The plugin is its filter: it asks nothing of the entry. */
export const AVAILABLE = {
  ...PLUGIN,
  check: (host: Host): Rejection | undefined => {
    const first = host.availability?.reasons[0];
    return first === undefined ? undefined : UNAVAILABLE[first.reason];
  },
} as const satisfies FilterPlugin<UnavailableReason> & HostFilter;
