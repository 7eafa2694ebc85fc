/**
 * Fixing claims again for a change (`replan.ts`): fixed claims are a function of each host's lock
 * entries, the MAC entries naming it and which clusters are live, so they are fixed again only for
 * the hosts a change names, from only the entries that concern those hosts. This is the one part of
 * planning before the turns, so it keeps its own index (host and cluster → lock entries, host → the
 * clusters whose MAC entries name it) rather than a turn's recorded reads.
 */
import type { ClusterKey } from "../../cluster-key.ts";
import { pushTo } from "../../group.ts";
import { sipOwnerKey, type Host } from "../../inventory/host.ts";
import type { Inventory } from "../../inventory/inventory.ts";
import type { Lock, LockEntry } from "../../model/lock.ts";
import type { SipCluster } from "../../model/sip.ts";
import { macNamedHosts, type BpaGroup } from "../bpa-placement.ts";
import { sameClaim } from "../claim-ledger.ts";
import { fixClaims, type FixedClaims } from "../fixed-claims.ts";
import { Overlay } from "./overlay.ts";
import type { PlanClusters, PlanTrace } from "../plan-site.ts";

/** A changed cluster: what the site now has under its key (nothing, when it left the site). */
export interface ClusterChange {
  readonly bpa?: BpaGroup;
  readonly sip?: SipCluster;
}

/** One trace's lock and MAC entries by the hosts and clusters they name. */
export class RefixIndex {
  /** Host id → positions in the lock; cluster → positions in the lock. */
  readonly #lockByHost = new Map<string, number[]>();
  readonly #lockByCluster = new Map<string, number[]>();
  /** Host id → the clusters whose MAC entries name it. */
  readonly #macUsers = new Map<string, Set<ClusterKey>>();
  /** The trace's BPA clusters naming each MAC (lazily: only a change of hosts asks). */
  #macRequesters: Map<string, ClusterKey[]> | undefined;

  constructor(
    readonly trace: PlanTrace,
    readonly inventory: Inventory,
    readonly lock: Lock,
  ) {
    lock.entries.forEach((entry, position) => {
      pushTo(this.#lockByHost, entry.host, position);
      pushTo(this.#lockByCluster, entry.cluster, position);
    });
    for (const [key, group] of trace.clusters.bpaByKey) {
      for (const { id: host } of macNamedHosts(group, inventory, trace.cache)) {
        let users = this.#macUsers.get(host);
        if (!users) this.#macUsers.set(host, (users = new Set()));
        users.add(key);
      }
    }
  }

  /** The trace's BPA clusters with a MAC entry naming `mac`. */
  clustersNamingMac(mac: string): readonly ClusterKey[] {
    return this.#requestersByMac().get(mac) ?? [];
  }

  #requestersByMac(): ReadonlyMap<string, readonly ClusterKey[]> {
    if (this.#macRequesters === undefined) {
      this.#macRequesters = new Map();
      for (const [key, group] of this.trace.clusters.bpaByKey) {
        for (const request of [
          ...(group.provisioning?.masters ?? []),
          ...(group.provisioning?.workers ?? []),
        ]) {
          if (request.kind === "mac") pushTo(this.#macRequesters, request.mac, key);
        }
      }
    }
    return this.#macRequesters;
  }

  /** The lock entries about `hosts` or `clusters`, in lock order. */
  lockEntriesAbout(hosts: Iterable<string>, clusters: Iterable<string>): LockEntry[] {
    const positions = new Set<number>();
    for (const host of hosts) for (const at of this.#lockByHost.get(host) ?? []) positions.add(at);
    for (const key of clusters) for (const at of this.#lockByCluster.get(key) ?? []) positions.add(at);
    return [...positions].sort((a, b) => a - b).flatMap((at) => this.lock.entries[at] ?? []);
  }

  /** Clusters of the trace whose MAC entries name `host`. */
  macUsersOf(host: string): ReadonlySet<ClusterKey> {
    return this.#macUsers.get(host) ?? new Set();
  }
}

/**
 * The fixed claims of the changed site: those of the trace, fixed again for the hosts the change
 * reaches. Those are the hosts the changed clusters' MAC entries name (before and after) and, when a
 * cluster joins or leaves the site, the hosts its lock entries or SIP labels name.
 */
export function fixAgain(
  index: RefixIndex,
  clusters: PlanClusters,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
  /** Hosts whose facts changed, as the inventory has them now, and those a moved MAC names. */
  changedHosts: readonly Host[],
): { claims: FixedClaims; refixed: ReadonlySet<Host>; moved: readonly Host[] } {
  const { trace, inventory } = index;
  const isLive = (key: ClusterKey) => clusters.bpaByKey.has(key) || clusters.sipByKey.has(key);
  const wasLive = (key: ClusterKey) => trace.clusters.bpaByKey.has(key) || trace.clusters.sipByKey.has(key);
  const refixed = new Set<Host>(changedHosts);
  const addHost = (id: string) => {
    const host = inventory.byId(id);
    if (host) refixed.add(host);
  };
  for (const [key, change] of changes) {
    for (const group of [trace.clusters.bpaByKey.get(key), change.bpa])
      if (group) for (const host of macNamedHosts(group, inventory, trace.cache)) refixed.add(host);
    if (isLive(key) !== wasLive(key))
      for (const entry of index.lockEntriesAbout([], [key])) addHost(entry.host);
    // Whether SIP labels claim a host depends on whether the lock records their cluster at all, which
    // a lock entry's host joining or leaving can change (a host labelled in part is no member
    // the cluster keeps, so it stays outside the lock and only this refix reaches it: decision 0032).
    for (const host of inventory.ownedBySip(key)) refixed.add(host);
  }
  const ids = new Set([...refixed].map((host) => host.id));
  // Whether a SIP label claims a host depends on whether the lock records its owner at all.
  const owners = [...refixed].flatMap((host) => sipOwnerKey(host) ?? []);
  const lockEntries = index.lockEntriesAbout(ids, [...changes.keys(), ...owners]);
  // Only the MAC entries that name a refixed host, so no other host gets a claim here.
  const groups = new Map<ClusterKey, BpaGroup>();
  const users = new Set<ClusterKey>([...changes.keys()]);
  for (const id of ids) for (const user of index.macUsersOf(id)) users.add(user);
  for (const key of users) {
    const group = clusters.bpaByKey.get(key);
    const provisioning = group?.provisioning;
    if (!group || !provisioning) continue;
    const names = (requests: typeof provisioning.masters) =>
      requests.filter((request) => request.kind === "mac" && ids.has(inventory.byMac(request.mac)?.id ?? ""));
    groups.set(key, {
      ...group,
      provisioning: {
        ...provisioning,
        masters: names(provisioning.masters),
        workers: names(provisioning.workers),
      },
    });
  }
  // Only the refixed hosts' answers are read from it (see `claims` below).
  const again = fixClaims({ lockEntries, groups, inventory, cache: trace.cache, labelled: refixed, isLive });
  const before = trace.fixed;
  const changed = (key: ClusterKey) => changes.has(key);
  const claims: FixedClaims = {
    claimOf: (host) => (ids.has(host.id) ? again : before).claimOf(host),
    claimedHosts: () => [
      ...before.claimedHosts().filter((host) => !ids.has(host.id)),
      ...again.claimedHosts().filter((host) => ids.has(host.id)),
    ],
    releasing: (key) => (changed(key) ? again : before).releasing(key),
    releasingClusters: () => [
      ...before.releasingClusters().filter((key) => !changed(key)),
      ...again.releasingClusters().filter(changed),
    ],
    heldByLock: (key) => (changed(key) ? again : before).heldByLock(key),
    vanished: (key) => (changed(key) ? again : before).vanished(key),
    contested: {
      get: (request) => {
        const host = request.kind === "mac" ? inventory.byMac(request.mac) : undefined;
        return (host && ids.has(host.id) ? again : before).contested.get(request);
      },
    },
    // Not copied: a site's hosts with claim errors may be many, and a review reads a few.
    issuesByHost: new Overlay(before.issuesByHost, ids, (id) => again.issuesByHost.get(id)),
  };
  // Only hosts whose claim really changed reach the turns that read them.
  const moved = [...refixed].filter((host) => !sameClaim(before.claimOf(host), claims.claimOf(host)));
  return { claims, refixed, moved };
}
