/**
 * The claims planning fixes before any cluster is placed (docs/contract.md §3.4, §3.1): the lock's allocations,
 * the SIP labels of the inventory, and the hosts MAC entries name. They depend on the host alone
 * (the lock entries and MAC entries that name it) and on which clusters are live, so the same
 * function serves a whole site and, with only the entries of a few hosts, the webhook's review of
 * one CR (`replan.ts`).
 */
import { clusterKey, type ClusterKey } from "../cluster-key.ts";
import { pushTo } from "../group.ts";
import type { Issue } from "../issue.ts";
import { SIP_LABELS } from "../inventory/bmh.ts";
import { sipOwnerKey, type Host, type PartialSipLabels } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import { claimMacHosts, type BpaGroup, type ContestedEntries } from "./bpa-placement.ts";
import { ClaimLedger, type Release, type StandingClaim } from "./claim-ledger.ts";
import { hostSnapshot } from "./lock.ts";
import type { LockEntry } from "../model/lock.ts";
import type { PlanCache } from "../model/plan-cache.ts";

/** What fixes the claims: lock entries (in lock order), the BPA groups' MAC entries, who is live. */
export interface FixedClaimsInput {
  readonly lockEntries: Iterable<LockEntry>;
  readonly groups: ReadonlyMap<ClusterKey, BpaGroup>;
  readonly inventory: Inventory;
  /** The plan's cache (see `PlanningContext.cache`). */
  readonly cache: PlanCache;
  /**
   * The hosts whose SIP labels may claim them, when only some are asked about (a change fixes
   * again only the hosts it names, `engine/refix.ts`). @default every host of the inventory
   */
  readonly labelled?: Iterable<Host>;
  /** Whether the site still has the cluster (a SIPCluster, or BPA CRs with its `cluster` label). */
  isLive(cluster: ClusterKey): boolean;
}

/** The fixed claims, and what they mean for the clusters placed after them. */
export interface FixedClaims {
  /** Who holds `host` before any turn: the lock, a MAC entry, or its SIP labels. */
  claimOf(host: Host): StandingClaim | undefined;
  /** Every host with a fixed claim (see {@link claimOf}). */
  claimedHosts(): Host[];
  /** The hosts `cluster` is releasing (its SIP labels are removed first), in lock order. */
  releasing(cluster: ClusterKey): readonly Release[];
  /** Every cluster releasing hosts. */
  releasingClusters(): ClusterKey[];
  /** The lock's entries of a live cluster: the allocations it keeps if they still fit. */
  heldByLock(cluster: ClusterKey): readonly LockEntry[];
  /**
   * The lock's entries of a live cluster whose host the inventory no longer has (or sets aside): its
   * nodes stay there, with a `host-vanished` error, until the user releases them (decision 0052).
   */
  vanished(cluster: ClusterKey): readonly LockEntry[];
  /** MAC entries whose host another cluster holds, with the `host-claimed` problem. */
  readonly contested: ContestedEntries;
  /** Host id → the `host-claimed` errors of the MAC entries that name it. */
  readonly issuesByHost: ReadonlyMap<string, readonly Issue[]>;
}

/**
 * Fixes the claims, in order: the lock (allocations of clusters that still exist stay where they
 * are; hosts a SIPCluster is releasing stay with it while their labels are removed, or another
 * cluster taking one would patch the same BareMetalHost from two directories), then the SIP labels
 * of the inventory for clusters the lock doesn't record (the lock is authoritative for those it
 * does, but not over them: a locked host labelled for such a cluster is that cluster's), then the
 * hosts MAC entries name, where conflicts are reported.
 */
export function fixClaims(input: FixedClaimsInput): FixedClaims {
  const { inventory } = input;
  const lockEntries = [...input.lockEntries];
  const heldByLock = new Map<ClusterKey, LockEntry[]>();
  const ledger = new ClaimLedger((host) => {
    const owner = sipOwnerKey(host);
    if (owner !== undefined && heldByLock.has(owner)) return undefined;
    if (host.sipPartial !== undefined) return partialSipClaim(host, host.sipPartial);
    if (owner === undefined) return undefined;
    return {
      cluster: owner,
      why: `labelled for SIPCluster ${owner} (sip.airshipit.org labels in the inventory)`,
    };
  });
  // The live clusters the lock gives hosts to: SIP labels of any other cluster are not the lock's to overrule.
  const holders = new Set<ClusterKey>();
  for (const entry of lockEntries)
    if (entry.released !== true && input.isLive(entry.cluster) && inventory.byId(entry.host))
      holders.add(entry.cluster);
  const vanished = new Map<ClusterKey, LockEntry[]>();
  for (const entry of lockEntries) {
    const host = inventory.byId(entry.host);
    if (!host) {
      if (entry.released !== true && input.isLive(entry.cluster)) pushTo(vanished, entry.cluster, entry);
      continue;
    }
    const { cluster } = entry;
    const live = input.isLive(cluster);
    if (entry.kind === "sip" && (entry.released === true || !live)) {
      if (entry.released === true && !stillReleasing(entry, host)) continue;
      ledger.release(
        host,
        cluster,
        entry.role,
        `being released by SIPCluster ${cluster} (its labels are removed first)`,
      );
      continue;
    }
    if (!live) continue;
    const labelled = sipOwnerKey(host);
    // Labelled for a SIPCluster the lock does not hold hosts for: the host is that cluster's, as it
    // would be without the lock, so the entry naming it is `host-claimed` rather than kept.
    if (labelled !== undefined && labelled !== cluster && !holders.has(labelled)) continue;
    if (!ledger.isRecorded(host))
      ledger.claim(host, cluster, `recorded for ${cluster} in rendered/metalsynth.lock.yaml`);
    pushTo(heldByLock, cluster, entry);
  }
  const { contested, issuesByHost } = claimMacHosts(input.groups, inventory, ledger, input.cache);
  // Fixed now, and every turn asks again about the hosts it looks at: each claim is made once, here,
  // in the order `claimedHosts` gives them (recorded claims, then SIP labels the lock does not
  // overrule), so an answer is one lookup and the fixed claims a value that no longer changes.
  const claims = new Map<string, StandingClaim>();
  for (const [id, claim] of ledger.recorded) claims.set(id, claim);
  for (const host of input.labelled ?? inventory.hosts) {
    if (claims.has(host.id) || (host.sipOwner === undefined && host.sipPartial === undefined)) continue;
    const claim = ledger.claimOf(host);
    if (claim !== undefined) claims.set(host.id, claim);
  }
  return {
    claimOf: (host) => claims.get(host.id),
    claimedHosts: () => [...claims.keys()].flatMap((id) => inventory.byId(id) ?? []),
    releasing: (cluster) => ledger.releasing(cluster),
    releasingClusters: () => ledger.releasingClusters(),
    heldByLock: (cluster) => heldByLock.get(cluster) ?? NO_ENTRIES,
    vanished: (cluster) => vanished.get(cluster) ?? NO_ENTRIES,
    contested,
    issuesByHost,
  };
}

/**
 * The cluster a host's SIP labels give it to, complete or partial (decision 0032). Airship SIP counts
 * a host with `cluster-name` as taken whatever else it carries, so a partial set never leaves the
 * host free: with the cluster's namespace and name, that SIPCluster holds it (and its own label patch
 * completes the set); without them, a key no cluster can have (Kubernetes names have no parentheses)
 * holds it until someone completes or removes the labels.
 */
export function sipLabelHolder(host: Host): ClusterKey | undefined {
  return host.sipPartial === undefined ? sipOwnerKey(host) : partialHolder(host, host.sipPartial);
}

function partialHolder(host: Host, partial: PartialSipLabels): ClusterKey {
  return (
    sipOwnerKey(host) ??
    clusterKey(partial.namespace ?? "(no namespace)", partial.name ?? "(no cluster name)")
  );
}

/** The claim of a partial SIP label set, with a message naming the labels present and missing. */
function partialSipClaim(host: Host, partial: PartialSipLabels): StandingClaim {
  const present = SIP_LABEL_PARTS.filter((part) => partial[part] !== undefined).map(
    (part) => `${SIP_LABELS[part]}=${partial[part] ?? ""}`,
  );
  const missing = SIP_LABEL_PARTS.filter((part) => partial[part] === undefined).map(
    (part) => SIP_LABELS[part],
  );
  return {
    cluster: partialHolder(host, partial),
    why: `partially labelled for a SIPCluster (${present.join(", ")}; no ${missing.join(", ")}), which SIP counts as taken: complete or remove the host's SIP labels`,
  };
}

const SIP_LABEL_PARTS = ["namespace", "name", "nodeType"] as const;

/** What a cluster the lock holds nothing for holds: one list, as every turn placed again asks. */
const NO_ENTRIES: readonly LockEntry[] = [];

/**
 * Whether a release recorded by an earlier run goes on (decision 0034): while the inventory shows the
 * host labelled for the releasing cluster, or shows it exactly as it did when the release was last
 * rendered (a run with the same inputs must render the same release: the labels may still be on the
 * host, only the snapshot does not say). It ends once a snapshot shows the host changed and
 * without those labels. A release recorded before snapshots were kept goes on once more and gets one.
 */
function stillReleasing(entry: LockEntry, host: Host): boolean {
  if (sipOwnerKey(host) === entry.cluster) return true;
  return entry.snapshot === undefined || entry.snapshot === hostSnapshot(host);
}
