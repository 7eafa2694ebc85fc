/** Unclaimed: another cluster holds the host (or this run already gave it away). */
import type { ClusterKey } from "../../cluster-key.ts";
import type { Host } from "../../inventory/host.ts";
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { ClaimView } from "../../model/claims.ts";
import { rejectionBy, type FilterPlugin, type HostFilter, type Rejection } from "./plugin.ts";

export const UNCLAIMED = {
  name: "Unclaimed",
  reads: HOST_FACTS.claim,
  reasons: { claimed: () => "claimed by other clusters" },
} as const satisfies FilterPlugin;

/**
 * The rejection {@link unclaimed} gives, and what explain says of a host a MAC entry names that
 * another cluster holds: the same object each time, as rejections are never changed.
 */
export const CLAIMED: Rejection = Object.freeze(rejectionBy(UNCLAIMED, "claimed"));

/** Rejects hosts that another cluster owns (or this run already gave away) as `claims` sees them. */
export function unclaimed(claims: ClaimView, cluster: ClusterKey): HostFilter {
  return new Unclaimed(claims, cluster);
}

/** {@link unclaimed}'s filter: one object, not a filter, a closure and its context, for every entry placed. */
class Unclaimed implements HostFilter {
  readonly name = UNCLAIMED.name;
  readonly reads = UNCLAIMED.reads;

  constructor(
    private readonly claims: ClaimView,
    private readonly cluster: ClusterKey,
  ) {}

  check(host: Host): Rejection | undefined {
    const owner = this.claims.ownerOf(host);
    return owner !== undefined && owner !== this.cluster ? CLAIMED : undefined;
  }
}
