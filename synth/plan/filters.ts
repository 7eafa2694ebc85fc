import type { Host } from "../inventory/host.ts";
import { compareText } from "../issue.ts";
import { formatBytes } from "../quantity.ts";
import type { ClaimView } from "./claim-ledger.ts";

/**
 * Host filters in the style of the Kubernetes scheduler framework: each is a named check that either
 * passes or returns a stable reason string. The same strings make the `no-fit` histogram and the
 * `explain` output, so a user sees one vocabulary everywhere.
 */
export interface HostFilter {
  readonly name: string;
  /** `undefined` when the host passes, else why it was rejected. */
  check(host: Host): string | undefined;
}

/** What a BPA entry asks of a host. */
export interface ResourceNeeds {
  readonly cpus?: number;
  readonly memoryBytes?: number;
  readonly sriov: boolean;
  readonly qat: boolean;
}

/** Rejects hosts that another cluster owns (or this run already gave away) as `claims` sees them. */
export function unclaimed(claims: ClaimView, cluster: string): HostFilter {
  return {
    name: "Unclaimed",
    check: (host) => {
      const owner = claims.ownerOf(host);
      return owner !== undefined && owner !== cluster ? "claimed by other clusters" : undefined;
    },
  };
}

/** The resource filters for a BPA entry, in the order reasons are attributed. */
export function resourceFilters(needs: ResourceNeeds): HostFilter[] {
  const filters: HostFilter[] = [];
  if (needs.cpus !== undefined) {
    const cpus = needs.cpus;
    filters.push({
      name: "Cpus",
      check: (host) =>
        host.cpus === undefined
          ? "no hardware details"
          : host.cpus < cpus
            ? `fewer than ${cpus} CPUs`
            : undefined,
    });
  }
  if (needs.memoryBytes !== undefined) {
    const bytes = needs.memoryBytes;
    filters.push({
      name: "Memory",
      check: (host) =>
        host.memoryBytes === undefined
          ? "no hardware details"
          : host.memoryBytes < bytes
            ? `less than ${formatBytes(bytes)} memory`
            : undefined,
    });
  }
  if (needs.sriov)
    filters.push({ name: "Sriov", check: (host) => (host.sriov ? undefined : "not SR-IOV capable") });
  if (needs.qat) filters.push({ name: "Qat", check: (host) => (host.qat ? undefined : "not QAT capable") });
  return filters;
}

/** The first reason any filter rejects `host` for, or undefined when every filter passes. */
export function rejection(filters: readonly HostFilter[], host: Host): string | undefined {
  for (const filter of filters) {
    const reason = filter.check(host);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * The `no-fit` message: `0/42 hosts fit: 30 claimed by other clusters, 8 fewer than 20 CPUs`.
 * Reasons are sorted by count (most common first), then alphabetically, so the text is stable.
 */
export function fitHistogram(total: number, fitting: number, reasons: Iterable<string>): string {
  const counts = new Map<string, number>();
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const parts = [...counts]
    .sort(([reasonA, countA], [reasonB, countB]) => countB - countA || compareText(reasonA, reasonB))
    .map(([reason, count]) => `${count} ${reason}`);
  return `${fitting}/${total} hosts fit${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`;
}
