/**
 * SIP placement (docs/contract.md §3.2), per role in planning order: keep the hosts the cluster already has while
 * they still qualify, fill up to active + standby from free matching hosts, at most one per topology
 * value, and release what it no longer needs (standby first, then the highest names).
 */
import { checkedClusterKeyParts, sipKey, type ClusterKey } from "../cluster-key.ts";
import { formatPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import { unavailableFor, type Host } from "../inventory/host.ts";
import { hostUnavailable, hostVanished } from "../rules/availability.ts";
import { roleNoFit } from "../rules/hosts.ts";
import { unusedTopologyKey } from "../rules/sip.ts";
import { reporter } from "../rules/reporter.ts";
import type { SipCluster, SipRole } from "../model/sip.ts";
import type { Release } from "./claim-ledger.ts";
import type { ClaimView } from "../model/claims.ts";
import type { Placed, PlanningContext } from "./context.ts";
import { fitHistogram, resourceFilters } from "../rules/filters.ts";
import { AVAILABLE } from "../rules/filters/available.ts";
import { addressed } from "../rules/filters/interface.ts";
import { otherRole } from "../rules/filters/other-role.ts";
import { PICK } from "../rules/filters/pick.ts";
import { rejectionBy, type HostFilter, type Rejection } from "../rules/filters/plugin.ts";
import { selected } from "../rules/filters/selector.ts";
import { topologySpread } from "../rules/filters/topology.ts";
import { unclaimed } from "../rules/filters/unclaimed.ts";
import { hostSnapshot } from "./lock.ts";
import type { LockEntry } from "../model/lock.ts";
import type { ResourceNeeds } from "../model/bpa.ts";
import type { Derived, PlanCache } from "../model/plan-cache.ts";
import type { Decision, RejectedHost, RetiredSipCluster, SipClusterPlan, SipMember } from "./model.ts";

/** Places one SIPCluster's roles (docs/contract.md §3.2). */
export function placeSipCluster(
  sip: SipCluster,
  context: PlanningContext & {
    /** Hosts the cluster is still releasing from earlier runs (their labels still in the inventory). */
    readonly releasing: readonly Release[];
  },
): Placed<SipClusterPlan> {
  const key = sipKey(sip.resource);
  const { inventory } = context;
  const issues: Issue[] = [];
  const report = reporter(sip.resource, key);
  const members: SipMember[] = [];
  const decisions: Decision[] = [];
  const chosenIds = new Set<string>();
  const interfaceIds = serviceInterfaces(sip);
  const previous = previousMembers(sip, context);

  for (const role of sip.roles.filter((candidate) => candidate.plannable)) {
    // A host the lock gives the role that the inventory lost keeps its place: no other host is
    // labelled in its stead until the user releases it (decision 0052).
    const vanished = context.vanished.filter((entry) => entry.kind === "sip" && entry.role === role.role);
    for (const entry of vanished) issues.push(hostVanished(inventory, entry, role.path, report));
    const wanted = Math.max(0, role.active + role.standby - vanished.length);
    const filters = sipFilters(role, key, interfaceIds, context.ledger.view(), context.cache);
    // Values of the topology label the role's hosts have so far, counting kept hosts too.
    const topologyTaken = new Set<string>();
    const spread = topologySpread(role.topologyKey, topologyTaken);
    const roleMembers: { host: Host; reason: string; wasStandby: boolean }[] = [];
    const add = (host: Host, reason: string, wasStandby: boolean) => {
      for (const value of topologyValues(role, [host])) topologyTaken.add(value);
      chosenIds.add(host.id);
      roleMembers.push({ host, reason, wasStandby });
    };
    // Keep what this role already has (active before standby, then by id), if it still qualifies.
    const kept = previous
      .filter((entry) => entry.role === role.role)
      .sort((a, b) => Number(a.standby) - Number(b.standby) || compareText(a.host.id, b.host.id));
    for (const entry of kept) {
      if (context.rejection([...filters, spread], entry.host) === undefined)
        add(entry.host, entry.why, entry.standby);
    }
    // Shrink: release standby hosts first, then the highest names.
    roleMembers.sort(
      (a, b) => Number(a.wasStandby) - Number(b.wasStandby) || compareText(a.host.id, b.host.id),
    );
    for (const dropped of roleMembers.splice(wanted)) chosenIds.delete(dropped.host.id);
    // Availability is no filter of a kept host: its node stays, with a warning, until the user moves it.
    if (context.warns)
      for (const { host } of roleMembers)
        issues.push(
          ...hostUnavailable(host, unavailableFor(host, true), true, `role ${role.role}`, role.path, report),
        );
    const candidates = inventory.matching(role.selector);
    issues.push(...unusedTopologyKey(role, candidates, report));
    // Fill from free hosts that match, in name order, one per topology value.
    const fill = [...filters, AVAILABLE, otherRole((host) => chosenIds.has(host.id)), spread];
    for (const host of context.openMatches(candidates, role.selector)) {
      if (roleMembers.length >= wanted) break;
      if (context.rejection(fill, host) === undefined)
        add(host, `matches ${formatPath(role.path)}.labelSelector`, false);
    }
    const roleIds = new Set(roleMembers.map((member) => member.host.id));
    const otherRoles = new Set([...chosenIds].filter((id) => !roleIds.has(id)));
    const rejected = (): RejectedHost[] =>
      sipRejections(
        context.rejection,
        inventory.hosts,
        role,
        filters,
        roleMembers.map((member) => member.host),
        otherRoles,
      );
    if (roleMembers.length < wanted) {
      const reasons = rejected().map((found) => found.rejection);
      const histogram = fitHistogram(inventory.size, roleMembers.length, reasons);
      issues.push(roleNoFit(role, roleMembers.length, histogram, report));
    }
    roleMembers.forEach((member, index) => {
      context.ledger.claim(member.host, key, `chosen for role ${role.role} of SIPCluster ${key}`);
      context.bestFit.take(member.host);
      members.push({
        host: member.host,
        role: role.role,
        standby: index >= role.active,
        reason: member.reason,
      });
    });
    if (context.explains)
      decisions.push({
        subject: role.role,
        path: role.path,
        chosen: roleMembers.map((member) => ({ host: member.host.id, reason: member.reason })),
        rejected,
      });
  }
  // Released: hosts it had and no longer has, and hosts still being released from earlier runs.
  const memberIds = new Set(members.map((member) => member.host.id));
  const releasedRoles = new Map<string, { host: Host; role: string }>();
  for (const { host, role } of [...previous, ...context.releasing]) {
    if (!memberIds.has(host.id) && !releasedRoles.has(host.id)) releasedRoles.set(host.id, { host, role });
  }
  const released = [...releasedRoles.values()].sort((a, b) => compareText(a.host.id, b.host.id));
  const lock: LockEntry[] = [
    ...members.map((member): LockEntry => ({
      host: member.host.id,
      cluster: key,
      kind: "sip",
      role: member.role,
      ...(member.standby ? { standby: true } : {}),
    })),
    ...released.map(({ host, role }) => releaseEntry(host, key, role)),
  ];
  return {
    plan: {
      kind: "sip",
      key,
      namespace: sip.resource.namespace,
      name: sip.name,
      sip,
      members,
      released: released.map(({ host }) => host),
      decisions,
    },
    lock,
    issues,
  };
}

/** Every `nodeInterfaceId` the cluster's services target: member hosts need an IP on each. */
export function serviceInterfaces(sip: SipCluster): string[] {
  const services = [
    ...(sip.services.loadBalancerControlPlane ?? []),
    ...(sip.services.loadBalancerWorker ?? []),
    ...(sip.services.jumpHost ?? []),
  ];
  return [...new Set(services.map((service) => service.nodeInterfaceId))].sort(compareText);
}

/** Hosts this SIPCluster had: from the lock when it records the cluster, else from inventory labels. */
function previousMembers(
  sip: SipCluster,
  context: PlanningContext,
): { host: Host; role: string; standby: boolean; why: string }[] {
  const key = sipKey(sip.resource);
  const fromLock = context.lockEntries.filter((entry) => entry.kind === "sip");
  if (fromLock.length > 0) {
    return fromLock.flatMap((entry) => {
      const host = context.inventory.byId(entry.host);
      return host
        ? [
            {
              host,
              role: entry.role,
              standby: entry.standby === true,
              why: "kept from rendered/metalsynth.lock.yaml",
            },
          ]
        : [];
    });
  }
  return context.inventory.ownedBySip(key).flatMap((host) =>
    host.sipOwner
      ? [
          {
            host,
            role: host.sipOwner.nodeType,
            standby: false,
            why: "kept: already labelled for this SIPCluster",
          },
        ]
      : [],
  );
}

/** What every host of the cluster must be: selected, free, with an address on each service interface. */
function sipFilters(
  role: SipRole,
  cluster: ClusterKey,
  interfaceIds: readonly string[],
  claims: ClaimView,
  cache: PlanCache,
): HostFilter[] {
  return [
    selected(role.selector),
    unclaimed(claims, cluster),
    ...cache.get(NEEDS_FILTERS, role.needs),
    ...interfaceIds.map(addressed),
  ];
}

/** A role's resource filters, kept per plan: the webhook places the same roles review after review. */
const NEEDS_FILTERS: Derived<ResourceNeeds, readonly HostFilter[]> = { derive: resourceFilters };

/** Why each host not in the role was passed over, as the role stood when it was complete. */
function sipRejections(
  judge: PlanningContext["rejection"],
  hosts: readonly Host[],
  role: SipRole,
  filters: readonly HostFilter[],
  members: readonly Host[],
  otherRoles: ReadonlySet<string>,
): RejectedHost[] {
  const memberIds = new Set(members.map((host) => host.id));
  const complete = [
    ...filters,
    AVAILABLE,
    otherRole((host) => otherRoles.has(host.id)),
    topologySpread(role.topologyKey, topologyValues(role, members)),
  ];
  const full: Rejection = rejectionBy(PICK, "role-full");
  return hosts.flatMap((host): RejectedHost[] =>
    memberIds.has(host.id) ? [] : [{ host: host.id, rejection: judge(complete, host) ?? full }],
  );
}

/** The values of the role's topology label among `hosts`. */
function topologyValues(role: SipRole, hosts: readonly Host[]): Set<string> {
  const key = role.topologyKey;
  return new Set(hosts.flatMap((host) => (key === undefined ? [] : (host.labels[key] ?? []))));
}

/**
 * The lock entry recording that `cluster` is releasing `host`, which served it as `role`, with the
 * host as this run's inventory shows it: the release lasts until a snapshot shows it changed and
 * unlabelled (decision 0034).
 */
function releaseEntry(host: Host, cluster: ClusterKey, role: string): LockEntry {
  return { host: host.id, cluster, kind: "sip", role, released: true, snapshot: hostSnapshot(host) };
}

/** A SIPCluster gone from the site: its hosts lose their labels (decision 0012). */
export function retireSipCluster(
  key: ClusterKey,
  hosts: readonly Release[],
): { plan: RetiredSipCluster; lock: LockEntry[] } {
  const parts = checkedClusterKeyParts(key);
  // Releasing clusters come from the lock, whose reader admits only clusters named by two labels.
  if (parts === undefined) throw new Error(`bug: retiring cluster ${key}, which no lock entry can name`);
  const { namespace, name } = parts;
  const sorted = [...hosts].sort((a, b) => compareText(a.host.id, b.host.id));
  return {
    plan: { key, namespace, name, released: sorted.map(({ host }) => host) },
    lock: sorted.map(({ host, role }) => releaseEntry(host, key, role)),
  };
}
