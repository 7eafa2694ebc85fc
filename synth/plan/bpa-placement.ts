/**
 * BPA placement (docs/contract.md §3.1): a MAC entry gets the host with that MAC, a resource-only entry the best
 * fitting free host, a null entry its master's host. What is wrong with the host found is for the
 * rules in `synth/rules/hosts.ts`; this module decides which host.
 */
import { clusterKey, type ClusterKey } from "../cluster-key.ts";
import { pushTo } from "../group.ts";
import type { DnsLabel, IpAddress } from "../checked.ts";
import { compareText, type Issue } from "../issue.ts";
import { ipForMac, unavailableFor, type Host } from "../inventory/host.ts";
import { alikeIn, type AlikeHosts, type HostFacts } from "../inventory/host-facts.ts";
import type { Inventory } from "../inventory/inventory.ts";
import { formatBytes } from "../quantity.ts";
import {
  chosenHostWithoutIp,
  hostNamedTwice,
  hostNotReady,
  macHostClaimed,
  macUnknown,
  macWithoutIp,
  missingResources,
  nodeNoFit,
} from "../rules/hosts.ts";
import { hostUnavailable, hostVanished } from "../rules/availability.ts";
import type {
  ClusterGlue,
  MacRequest,
  NodeRequest,
  Provisioning,
  ResourceRequest,
  Software,
} from "../model/bpa.ts";
import { reporter } from "../rules/reporter.ts";
import type { Reporter } from "../model/resource.ts";
import type { ClaimLedger } from "./claim-ledger.ts";
import type { ClaimView } from "../model/claims.ts";
import type { Placed, PlanningContext, PlanningInventory } from "./context.ts";
import { RejectionTally, resourceFilters } from "../rules/filters.ts";
import { AVAILABLE } from "../rules/filters/available.ts";
import { NAMED } from "../rules/filters/named.ts";
import { PICK } from "../rules/filters/pick.ts";
import { rejectionBy, type HostFilter, type Rejection } from "../rules/filters/plugin.ts";
import { CLAIMED, UNCLAIMED, unclaimed } from "../rules/filters/unclaimed.ts";
import { unused } from "../rules/filters/unused.ts";
import type { LockEntry } from "../model/lock.ts";
import type { Derived, PlanCache } from "../model/plan-cache.ts";
import type { BpaClusterPlan, Decision, NodePlacement, RejectedHost } from "./model.ts";
import type { SiteModel } from "../model/site.ts";

/** The BPA CRs of one cluster, joined by (namespace, `cluster` label). */
export interface BpaGroup {
  readonly namespace: DnsLabel;
  readonly name: DnsLabel;
  readonly provisioning?: Provisioning;
  readonly software?: Software;
  readonly glue?: ClusterGlue;
}

/** A BPA cluster that has a Provisioning: one with hosts to place. */
export type ProvisionedGroup = BpaGroup & { readonly provisioning: Provisioning };

/** Whether `group` has a Provisioning, so it has a turn (the group itself, not a copy, is the turn's). */
export function isProvisioned(group: BpaGroup): group is ProvisionedGroup {
  return group.provisioning !== undefined;
}

/**
 * MAC entries whose host another cluster has: never placed, explained with this `host-claimed`
 * problem (`<rule>: <message>`).
 */
export type ContestedEntries = Pick<ReadonlyMap<MacRequest, string>, "get">;

/** BPA CRs joined by (namespace, cluster label); duplicates are reported by the site checks. */
export function groupBpa(model: SiteModel): Map<ClusterKey, BpaGroup> {
  const groups = new Map<ClusterKey, { -readonly [K in keyof BpaGroup]: BpaGroup[K] }>();
  const groupFor = (namespace: DnsLabel, cluster: DnsLabel) => {
    const key = clusterKey(namespace, cluster);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { namespace, name: cluster }));
    return group;
  };
  for (const provisioning of model.provisionings) {
    if (provisioning.cluster && provisioning.supported)
      groupFor(provisioning.resource.namespace, provisioning.cluster).provisioning ??= provisioning;
  }
  for (const software of model.softwares) {
    if (software.cluster) groupFor(software.resource.namespace, software.cluster).software ??= software;
  }
  for (const glue of model.glues) {
    if (glue.cluster) groupFor(glue.resource.namespace, glue.cluster).glue ??= glue;
  }
  return groups;
}

/**
 * Claims the host each MAC entry names, before anything is placed: the host is fixed, so conflicts
 * with the lock, with SIP labels or with another cluster's MAC entry are reported here.
 */
export function claimMacHosts(
  groups: ReadonlyMap<ClusterKey, BpaGroup>,
  inventory: Inventory,
  ledger: ClaimLedger,
  cache: PlanCache,
): { contested: ContestedEntries; issues: Issue[]; issuesByHost: Map<string, Issue[]> } {
  const issues: Issue[] = [];
  const issuesByHost = new Map<string, Issue[]>();
  const contested = new Map<MacRequest, string>();
  type User = { host: Host; cluster: ClusterKey; request: MacRequest; provisioning: Provisioning };
  const users = new Map<string, User[]>();
  for (const [key, group] of groups) {
    if (!group.provisioning) continue;
    for (const { request } of cache.get(PREPARED, group.provisioning).entries) {
      const host = request.kind === "mac" ? inventory.byMac(request.mac) : undefined;
      if (host && request.kind === "mac")
        pushTo(users, host.id, { host, cluster: key, request, provisioning: group.provisioning });
    }
  }
  const reportContested = (user: User, found: Issue) => {
    contested.set(user.request, `${found.rule}: ${found.message}`);
    issues.push(found);
    pushTo(issuesByHost, user.host.id, found);
  };
  for (const named of users.values()) {
    const existing = named[0] && ledger.claimOf(named[0].host);
    if (existing) {
      for (const user of named.filter((candidate) => candidate.cluster !== existing.cluster)) {
        const report = cache.get(PREPARED, user.provisioning).report;
        reportContested(
          user,
          macHostClaimed(user.host, user.request.mac, existing, user.request.path, report),
        );
      }
      continue;
    }
    // Two clusters name the same host and no lock decides: the first cluster key keeps it, so the
    // error lands on one side and is stable (docs/decisions/0004-contested-hosts.md).
    const winner = [...new Set(named.map((user) => user.cluster))].sort(compareText)[0];
    const first = named.find((user) => user.cluster === winner);
    if (!first) continue;
    const { resource } = first.provisioning;
    const owner = `${resource.kind} ${resource.namespace}/${resource.name}`;
    ledger.claim(first.host, first.cluster, `requested by mac-address in ${owner}`);
    for (const user of named.filter((candidate) => candidate.cluster !== first.cluster)) {
      const report = cache.get(PREPARED, user.provisioning).report;
      reportContested(
        user,
        macHostClaimed(
          user.host,
          user.request.mac,
          { cluster: first.cluster, requestedIn: owner },
          user.request.path,
          report,
        ),
      );
    }
  }
  return { contested, issues, issuesByHost };
}

/**
 * What placing reads of a Provisioning again and again, made once per Provisioning and plan
 * ({@link PREPARED}): the webhook places the same clusters again review after review (decision
 * 0042), and one lookup a turn costs less than one per entry and kind of fact.
 */
interface PreparedProvisioning {
  readonly report: Reporter;
  /** Its masters, then its workers: placing order. */
  readonly entries: readonly PreparedEntry[];
}

/** One entry of a {@link PreparedProvisioning}. */
interface PreparedEntry {
  readonly request: NodeRequest;
  /** How findings and decisions name the entry: `master master-1`. */
  readonly subject: string;
  /**
   * Why the cluster holds the host the entry chose by resources. The very string each time, so a
   * claim compared with the trace's compares at once (`changedClaims` in replan.ts).
   */
  readonly chosenFor: string;
  /** The filters of what the entry asks for (`resourceFilters`); none for a null or malformed entry. */
  readonly needs: readonly HostFilter[];
}

const PREPARED: Derived<Provisioning, PreparedProvisioning> = {
  derive: (provisioning) => {
    const cluster = clusterKey(provisioning.resource.namespace, provisioning.cluster ?? "");
    const entries = [...provisioning.masters, ...provisioning.workers].map((request): PreparedEntry => {
      const subject = `${request.role} ${request.label}`;
      const needs = request.kind === "mac" || request.kind === "resources" ? resourceFilters(request) : [];
      return { request, subject, chosenFor: `chosen for ${subject} of ${cluster}`, needs };
    });
    return { report: reporter(provisioning.resource, cluster), entries };
  },
};

/** The hosts a BPA cluster's MAC entries name, of those the inventory has, in CR order. */
export function macNamedHosts(group: BpaGroup, inventory: Inventory, cache: PlanCache): Host[] {
  // A loop, not flatMap over a spread: a review asks this of each cluster it touches several times.
  const hosts: Host[] = [];
  if (group.provisioning === undefined) return hosts;
  for (const { request } of cache.get(PREPARED, group.provisioning).entries) {
    const host = request.kind === "mac" ? inventory.byMac(request.mac) : undefined;
    if (host) hosts.push(host);
  }
  return hosts;
}

/** The plan of a cluster with Software or Cluster CRs but no Provisioning: no hosts, nothing to place. */
export function unprovisionedPlan(key: ClusterKey, group: BpaGroup): BpaClusterPlan {
  return bpaPlan(key, group, [], [], []);
}

/**
 * A BPA cluster's plan, its group's CRs written field by field: a spread followed by new keys takes
 * V8's slow path, once for every turn a review places again.
 */
function bpaPlan(
  key: ClusterKey,
  group: BpaGroup,
  masters: NodePlacement[],
  workers: NodePlacement[],
  decisions: Decision[],
): BpaClusterPlan {
  const { namespace, name, provisioning, software, glue } = group;
  return { kind: "bpa", key, namespace, name, provisioning, software, glue, masters, workers, decisions };
}

/**
 * Places one BPA cluster's nodes in CR order (docs/contract.md §3.1). `key` is the cluster's, the one
 * its Provisioning names (`groupBpa`).
 */
export function placeBpaCluster(
  key: ClusterKey,
  group: ProvisionedGroup,
  context: PlanningContext & { readonly contested: ContestedEntries },
): Placed<BpaClusterPlan> {
  const { provisioning } = group;
  const { report, entries } = context.cache.get(PREPARED, provisioning);
  const issues: Issue[] = [];
  const masters: NodePlacement[] = [];
  const workers: NodePlacement[] = [];
  const decisions: Decision[] = [];
  const lock: LockEntry[] = [];
  // Made on first use, as are `namedBy` and `reserved`: most clusters a review places again have
  // no MAC entry, no lock entry and no null entry.
  let placedMasters: Map<string, NodePlacement> | undefined;
  // Hosts this cluster already uses: a resource-only entry must not land on another entry's host.
  const used = new Set<string>();
  const reserved = reservedHosts(key, entries, context);
  // The first MAC entry naming each host: a later one under another label by another NIC is a duplicate.
  let namedBy: Map<string, MacRequest> | undefined;
  const unfit: UnfitEntries = new Map();
  const open: OpenHostsSlot = {};
  const place = (placement: NodePlacement, decision: Decision | undefined) => {
    const { request } = placement;
    // A host in both lists is master and worker (upstream semantics).
    (request.role === "master" ? masters : workers).push(placement);
    if (request.role === "master") (placedMasters ??= new Map()).set(request.label, placement);
    used.add(placement.host.id);
    if (decision) decisions.push(decision);
    lock.push({
      host: placement.host.id,
      cluster: key,
      kind: "bpa",
      role: request.role,
      node: request.label,
    });
  };

  // An entry that names no usable host is still explained, with the error that says why.
  const unresolved = ({ request, subject }: PreparedEntry, problem: string, reason: Rejection) => {
    if (context.explains)
      decisions.push({
        subject,
        path: request.path,
        chosen: [],
        rejected: everyHost(context.inventory, reason),
        problem,
      });
  };

  for (const entry of entries) {
    const { request, subject } = entry;
    switch (request.kind) {
      case "sameAsMaster": {
        const master = placedMasters?.get(request.label);
        const notMasters = named("other-master", request.label);
        if (!master) {
          const listed = provisioning.masters.some((entry) => entry.label === request.label);
          unresolved(
            entry,
            listed
              ? `master ${request.label} has no host, so neither has this entry`
              : `node-ref: there is no master ${request.label} to share a host with`,
            notMasters,
          );
          break;
        }
        const reason = `same host as master ${request.label}`;
        // The master's host: already counted as used, and the entry is no master itself.
        (request.role === "master" ? masters : workers).push({
          request,
          host: master.host,
          ...(master.ip === undefined ? {} : { ip: master.ip }),
          reason,
        });
        if (context.explains)
          decisions.push({
            subject,
            path: request.path,
            chosen: [{ host: master.host.id, reason }],
            rejected: otherHosts(context.inventory, master.host, notMasters),
          });
        lock.push({
          host: master.host.id,
          cluster: key,
          kind: "bpa",
          role: request.role,
          node: request.label,
        });
        break;
      }
      case "mac": {
        const otherMac = named("other-mac", request.mac);
        const placed = placeByMac(request, entry.needs, context, report);
        issues.push(...placed.issues);
        if (placed.placement === undefined) {
          if (context.explains)
            decisions.push({
              subject,
              path: request.path,
              chosen: [],
              rejected: namedHostHeld(context.inventory, request.mac, otherMac),
              problem: placed.problem,
            });
          break;
        }
        const { host } = placed.placement;
        const earlier = namedBy?.get(host.id);
        if (earlier === undefined) (namedBy ??= new Map()).set(host.id, request);
        else if (earlier.label !== request.label && earlier.mac !== request.mac)
          issues.push(hostNamedTwice(host, request, earlier, report));
        context.bestFit.take(placed.placement.host);
        place(
          placed.placement,
          context.explains
            ? {
                subject,
                path: request.path,
                chosen: [{ host: placed.placement.host.id, reason: placed.placement.reason }],
                rejected: otherHosts(context.inventory, placed.placement.host, otherMac),
              }
            : undefined,
        );
        break;
      }
      case "invalid":
        unresolved(entry, `mac-format: ${request.macProblem}`, named("malformed-mac"));
        break;
      case "resources": {
        const placed = placeByResources(
          entry,
          request,
          key,
          { used, reserved, unfit, open },
          context,
          report,
        );
        issues.push(...placed.issues);
        if (placed.placement) place(placed.placement, placed.decision);
        else if (placed.decision) decisions.push(placed.decision);
        break;
      }
    }
  }
  return { plan: bpaPlan(key, group, masters, workers, decisions), lock, issues };
}

/**
 * Hosts that belong to one entry of this cluster whatever the planning order: the host a MAC entry
 * names, and the locked host of a resource-only entry that still fits it. Best fit for another entry
 * must not take them, or one lost host would move the entry planned before its siblings onto a
 * sibling's host and shift every sibling along (docs/contract.md §3.4).
 */
function reservedHosts(
  cluster: ClusterKey,
  entries: readonly PreparedEntry[],
  context: PlanningContext,
): ReadonlyMap<string, NodeRequest> {
  // Made on the first host reserved: most clusters a review places again reserve none.
  let reserved: Map<string, NodeRequest> | undefined;
  for (const { request } of entries) {
    const host = request.kind === "mac" ? context.inventory.byMac(request.mac) : undefined;
    if (host && !reserved?.has(host.id)) (reserved ??= new Map()).set(host.id, request);
  }
  if (context.lockEntries.length === 0) return reserved ?? NOTHING_RESERVED;
  for (const { request, needs } of entries) {
    if (request.kind !== "resources") continue;
    const host = lockedHost(request, context);
    if (
      host &&
      !reserved?.has(host.id) &&
      context.rejection(needs, host) === undefined &&
      context.ledger.claimOf(host)?.cluster === cluster
    )
      (reserved ??= new Map()).set(host.id, request);
  }
  return reserved ?? NOTHING_RESERVED;
}

const NOTHING_RESERVED: ReadonlyMap<string, NodeRequest> = new Map();

/** The host the lock records for a BPA entry, if it is still in the inventory. */
function lockedHost(request: NodeRequest, context: PlanningContext): Host | undefined {
  // A loop, not `find`: most entries have no lock entry, and a review asks for each entry it places.
  for (const entry of context.lockEntries) {
    if (entry.kind === "bpa" && entry.role === request.role && entry.node === request.label)
      return context.inventory.byId(entry.host);
  }
  return undefined;
}

/** For a decision the CR made itself (a MAC, a null entry): every other host, with one reason. */
function otherHosts(inventory: PlanningInventory, chosen: Host, rejection: Rejection): () => RejectedHost[] {
  return () =>
    inventory.hosts.flatMap((host) => (host.id === chosen.id ? [] : [{ host: host.id, rejection }]));
}

/** For an entry that names no usable host: every host, with one reason. */
function everyHost(inventory: PlanningInventory, rejection: Rejection): () => RejectedHost[] {
  return () => inventory.hosts.map((host) => ({ host: host.id, rejection }));
}

/**
 * For a MAC entry that got no host: every host has no such NIC but the one that has it, which is
 * there and held by another cluster (the entry's `host-claimed` problem says which). Telling the user
 * that host lacks the NIC would send them hunting for a typo that is not there.
 */
function namedHostHeld(inventory: PlanningInventory, mac: string, otherMac: Rejection): () => RejectedHost[] {
  return () => {
    const named = inventory.byMac(mac);
    return inventory.hosts.map((host) => ({
      host: host.id,
      rejection: host.id === named?.id ? CLAIMED : otherMac,
    }));
  };
}

/** What the entries of one cluster placed before a resource-only entry leave it. */
interface Siblings {
  /** Hosts placed for earlier entries of this cluster. */
  readonly used: ReadonlySet<string>;
  /** Hosts that belong to one entry of this cluster (see {@link reservedHosts}). */
  readonly reserved: ReadonlyMap<string, NodeRequest>;
  /** The entries placed before that no host fitted. */
  readonly unfit: UnfitEntries;
  /** The hosts open to entries no host fits, as last judged (see {@link openHosts}). */
  readonly open: OpenHostsSlot;
}

/**
 * The hosts open to a resource-only entry with no host reserved, before its own needs: not claimed
 * by another cluster, available, not used by or reserved for another entry of the cluster. The
 * same for every such entry while the claims and used hosts are (as {@link UnfitEntries}), so each
 * `no-fit` walk after the first judges only these, against the entry's needs: judging a host's
 * claim is most of what the walk costs (decision 0056).
 */
interface OpenHosts {
  readonly revision: number;
  readonly used: number;
  readonly hosts: readonly Host[];
  /** The rejections of the other hosts, counted. */
  readonly closed: RejectionTally;
  /** `hosts` grouped by the facts an entry's filters read, made when an entry first needs them. */
  readonly alike: Map<HostFacts, readonly AlikeHosts[]>;
}

/** Where one cluster's placement keeps its {@link OpenHosts}, once an entry fitted nowhere. */
type OpenHostsSlot = { current?: OpenHosts };

/**
 * Entries of one cluster no host fitted, by what they ask ({@link asks}), with the claims and used
 * hosts they were judged against and the `no-fit` histogram they got. A later entry that asks the
 * same, has no host reserved and meets the same claims and used hosts would be judged host by host
 * alike: it gets the histogram without the walk. Hosts only leave the candidates while a cluster is
 * placed, so none can fit it. A Provisioning of a thousand workers no host fits walks the inventory
 * once, not a thousand times (decision 0056).
 */
type UnfitEntries = Map<
  string,
  { readonly revision: number; readonly used: number; readonly histogram: string }
>;

/**
 * What `request` asks of its host, as the key of {@link UnfitEntries}: everything but its label and
 * path. A field added to the model later is part of the key unless removed here, so two entries
 * share a key only when they ask alike (the model is plain data, as the door's parsers make it:
 * strings, numbers, booleans, lists). Made only in a cluster that has an unfit entry: a review
 * places hundreds of entries again, and this text costs more than their filters.
 */
function asks(request: NodeRequest): string {
  return JSON.stringify(Object.entries(request).filter(([field]) => field !== "label" && field !== "path"));
}

/**
 * The filters of a resource-only entry: the host must be free, not used for another entry of this
 * cluster (`used`, as the earlier entries left it), and fit the entry's resources.
 */
function entryFilters(
  { request, needs }: PreparedEntry,
  cluster: ClusterKey,
  claims: ClaimView,
  used: ReadonlySet<string>,
  reserved: ReadonlyMap<string, NodeRequest>,
): HostFilter[] {
  const filters = [
    unclaimed(claims, cluster),
    AVAILABLE,
    unused((host) => used.has(host.id) || (reserved.get(host.id) ?? request) !== request),
  ];
  for (const filter of needs) filters.push(filter);
  return filters;
}

/** Why a host is passed over when the CR named another one. */
function named(reason: keyof typeof NAMED.reasons, requested?: string): Rejection {
  return rejectionBy(NAMED, reason, requested === undefined ? undefined : { requested });
}

/**
 * Why a host that passed every filter was not the one picked: the lock's host was kept, a smaller
 * host chosen, or nothing chosen at all.
 */
const NOT_PICKED = {
  lockedKept: rejectionBy(PICK, "locked-kept"),
  smallerChosen: rejectionBy(PICK, "smaller-chosen"),
  fits: rejectionBy(PICK, "fits"),
  lockedVanished: rejectionBy(PICK, "locked-vanished"),
} as const satisfies Record<string, Rejection>;

/** A MAC entry: that host, checked against the resources the entry asks for. */
function placeByMac(
  request: MacRequest,
  needs: readonly HostFilter[],
  context: PlanningContext & { readonly contested: ContestedEntries },
  report: Reporter,
):
  | { placement: NodePlacement; issues: Issue[] }
  | { placement?: undefined; problem: string; issues: Issue[] } {
  const { mac } = request;
  const host = context.inventory.byMac(mac);
  if (!host) {
    // The lock's host for this node is gone too: most likely the very host, and the lock says which.
    const gone = vanishedEntry(request, context);
    const problem =
      gone === undefined
        ? macUnknown(context.inventory, mac, request.path, report, context.cache)
        : hostVanished(context.inventory, gone, request.path, report);
    return { problem: `${problem.rule}: ${problem.message}`, issues: [problem] };
  }
  // The lock's host for the node is gone and the MAC names another: the CR moves the node, said once.
  const gone = context.warns ? vanishedEntry(request, context) : undefined;
  const moved = gone === undefined ? [] : [hostVanished(context.inventory, gone, request.path, report, host)];
  const contested = context.contested.get(request);
  if (contested !== undefined) return { problem: contested, issues: moved };
  const ip = ipForMac(host, mac);
  const held = context.lockEntries.some((entry) => entry.host === host.id);
  const subject = `${request.role} ${request.label}`;
  const unavailable = hostUnavailable(
    host,
    unavailableFor(host, held),
    held,
    subject,
    [...request.path, "mac-address"],
    report,
  ).filter((found) => context.warns || found.severity === "error");
  return {
    placement: { request, host, ...(ip === undefined ? {} : { ip }), reason: `mac-address ${mac}` },
    issues: [
      ...moved,
      ...unavailable,
      ...missingResources(request, needs, host, report).filter(
        (found) => context.warns || found.severity === "error",
      ),
      ...macWithoutIp(host, mac, request.path, report),
      // A host going away is not ready either; one finding says so.
      ...(context.warns && unavailable.length === 0 ? hostNotReady(host, request.path, report) : []),
    ],
  };
}

/** The lock's entry for `request`'s node when the inventory no longer has its host. */
function vanishedEntry(request: NodeRequest, context: PlanningContext): LockEntry | undefined {
  // A loop, not `find`: almost every cluster has none.
  for (const entry of context.vanished)
    if (entry.kind === "bpa" && entry.role === request.role && entry.node === request.label) return entry;
  return undefined;
}

/** What placing says of a host chosen by resources: its address, and its size as the reason words it. */
interface ChosenHostFacts {
  /**
   * The IPv4 of its boot NIC, else of the first NIC by name that has one (see
   * docs/decisions/0003-resource-only-host-address.md).
   */
  readonly ip: IpAddress | undefined;
  /** The reason for a host chosen by best fit, and for the smallest host when nothing is asked. */
  readonly bestFit: string;
  readonly smallest: string;
}

/**
 * {@link ChosenHostFacts} of a host, kept per plan as hosts are immutable: the webhook places again,
 * review after review, the same turns on the same hosts (decision 0042), sorting the NICs each time.
 */
const CHOSEN_FACTS: Derived<Host, ChosenHostFacts> = {
  derive: (host) => {
    const size =
      host.cpus === undefined
        ? "no hardware details"
        : `${host.cpus} CPUs, ${formatBytes(host.memoryBytes ?? 0)}`;
    return {
      ip: addressOf(host),
      bestFit: `best fit: ${size}`,
      smallest: `smallest free host (no cpu or memory requested): ${size}`,
    };
  },
};

function addressOf(host: Host): IpAddress | undefined {
  const boot = host.bootMac === undefined ? undefined : ipForMac(host, host.bootMac);
  if (boot?.includes(".")) return boot;
  return (
    [...host.nics]
      .sort((a, b) => compareText(a.name, b.name) || compareText(a.mac, b.mac))
      .find((nic) => nic.ipv4)?.ipv4 ?? boot
  );
}

/**
 * A resource-only entry: sticky from the lock if still valid, else best fit among free hosts.
 * `request` is `entry`'s, known to ask by resources.
 */
function placeByResources(
  entry: PreparedEntry,
  request: ResourceRequest,
  cluster: ClusterKey,
  siblings: Siblings,
  context: PlanningContext,
  report: Reporter,
): { placement?: NodePlacement; decision?: Decision; issues: Issue[] } {
  const { inventory } = context;
  const { subject, chosenFor } = entry;
  const claims = context.ledger.view();
  // Nothing is used while this entry is placed: the siblings' hosts are read as they are.
  const filters = entryFilters(entry, cluster, claims, siblings.used, siblings.reserved);
  // Every host not chosen gets a reason, including those that fit but lost the best-fit comparison.
  // An explanation is read after later entries used more hosts, so it keeps those used before.
  const rejectedBesides = (chosen: Host | undefined, lost: Rejection) => {
    const judged = entryFilters(entry, cluster, claims, new Set(siblings.used), siblings.reserved);
    return (): RejectedHost[] =>
      inventory.hosts.flatMap((host) => {
        if (host.id === chosen?.id) return [];
        return [{ host: host.id, rejection: context.rejection(judged, host) ?? lost }];
      });
  };
  // `facts`: the host's, looked up once by the caller, which words the reason from them.
  const take = (host: Host, { ip }: ChosenHostFacts, reason: string, lost: Rejection) => {
    context.ledger.claim(host, cluster, chosenFor);
    context.bestFit.take(host);
    // Built without spreads: a review places hundreds of entries again (decision 0042).
    const placement: NodePlacement =
      ip === undefined ? { request, host, reason } : { request, host, ip, reason };
    const issues = chosenHostWithoutIp(host, ip, subject, request.path, report);
    if (context.warns) issues.push(...hostNotReady(host, request.path, report));
    if (!context.explains) return { placement, issues };
    const chosen = [{ host: host.id, reason }];
    const rejected = rejectedBesides(host, lost);
    return { placement, decision: { subject, path: request.path, chosen, rejected }, issues };
  };

  // The node's host is gone from the snapshot: it is not placed anywhere else (decision 0052).
  const gone = vanishedEntry(request, context);
  if (gone !== undefined) {
    const problem = hostVanished(inventory, gone, request.path, report);
    return {
      ...(context.explains && {
        decision: {
          subject,
          path: request.path,
          chosen: [],
          rejected: everyHost(inventory, NOT_PICKED.lockedVanished),
          problem: `${problem.rule}: ${problem.message}`,
        },
      }),
      issues: [problem],
    };
  }
  const locked = lockedHost(request, context);
  // The locked host is checked against every filter but the claim's, which it passes as the
  // cluster's own only when the lock still gives it to this cluster, and availability's: the node
  // stays on a host that went off or into error, with a warning, until the user moves it.
  if (
    locked &&
    context.rejection(
      filters.filter((filter) => filter.name !== UNCLAIMED.name && filter.name !== AVAILABLE.name),
      locked,
    ) === undefined &&
    context.ledger.claimOf(locked)?.cluster === cluster
  ) {
    const kept = take(
      locked,
      context.cache.get(CHOSEN_FACTS, locked),
      "kept from rendered/metalsynth.lock.yaml",
      NOT_PICKED.lockedKept,
    );
    if (context.warns)
      kept.issues.push(
        ...hostUnavailable(locked, unavailableFor(locked, true), true, subject, request.path, report),
      );
    return kept;
  }

  const explained = () => (context.explains ? rejectedBesides(undefined, NOT_PICKED.fits) : undefined);
  const asked = siblings.unfit.size === 0 ? undefined : asks(request);
  const before = asked === undefined ? undefined : siblings.unfit.get(asked);
  if (
    before?.revision === context.ledger.revision &&
    before.used === siblings.used.size &&
    !hasReservation(siblings.reserved, request)
  )
    return unplaced(subject, request, before.histogram, report, explained());

  const needsKnownResources = request.cpus !== undefined || request.memoryBytes !== undefined;
  const fits = (host: Host) => {
    if (context.rejection(filters, host) === undefined) return true;
    // Held by a cluster that is done planning: no later request can have it, so later scans skip it.
    const owner = context.ledger.claimOf(host)?.cluster;
    if (owner !== undefined && owner !== cluster && !context.stillPlanning(owner)) context.bestFit.take(host);
    return false;
  };
  // Without cpu/memory the candidates are still in best-fit order, the hosts of unknown size last.
  const chosen =
    context.bestFit.firstFitting(request.cpus ?? 0, request.memoryBytes ?? 0, fits) ??
    (needsKnownResources ? undefined : inventory.withUnknownResources().find(fits));
  if (chosen !== undefined) {
    const facts = context.cache.get(CHOSEN_FACTS, chosen);
    // The smallest free host wins when nothing is asked.
    return take(
      chosen,
      facts,
      needsKnownResources ? facts.bestFit : facts.smallest,
      NOT_PICKED.smallerChosen,
    );
  }
  // An entry with a host reserved for it meets another `unused` filter than its siblings: it is
  // judged on every host, against all its filters.
  const reservedForIt = hasReservation(siblings.reserved, request);
  const open = reservedForIt ? undefined : openHosts(cluster, claims, siblings, context);
  const histogram =
    open === undefined
      ? noFitHistogram(new RejectionTally(), inventory.hosts, filters, inventory.size, context)
      : openNoFitHistogram(open, entry.needs, inventory.size, context);
  if (!reservedForIt)
    siblings.unfit.set(asked ?? asks(request), {
      revision: context.ledger.revision,
      used: siblings.used.size,
      histogram,
    });
  return unplaced(subject, request, histogram, report, explained());
}

/**
 * The `no-fit` histogram of an entry no host fits: `tally` (the hosts already counted) and each of
 * `hosts` counted by the first of `filters` to reject it, as it is judged, with no record per host.
 */
function noFitHistogram(
  tally: RejectionTally,
  hosts: Iterable<Host>,
  filters: readonly HostFilter[],
  total: number,
  context: PlanningContext,
): string {
  for (const host of hosts) tally.add(context.rejection(filters, host) ?? NOT_PICKED.fits);
  return tally.histogram(total, 0);
}

/**
 * The `no-fit` histogram of an entry no open host fits: each group of open hosts alike in what
 * `needs` reads counted by the first of `needs` to reject one of them. Only the entry's resource
 * filters are judged by group: the claim, availability and used-host filters were judged host by
 * host when the open hosts were found (`openHosts`). A Provisioning of a thousand workers, each
 * asking another CPU count, judges the site's few hundred kinds of host a thousand times, not its
 * ten thousand hosts (decision 0069).
 */
function openNoFitHistogram(
  open: OpenHosts,
  needs: readonly HostFilter[],
  total: number,
  context: PlanningContext,
): string {
  const facts = needs.reduce((read, filter) => read | filter.reads, 0);
  let groups = open.alike.get(facts);
  if (groups === undefined) open.alike.set(facts, (groups = alikeIn(open.hosts, facts)));
  const tally = open.closed.copy();
  for (const { host, count } of groups) tally.add(context.rejection(needs, host) ?? NOT_PICKED.fits, count);
  return tally.histogram(total, 0);
}

/** The {@link OpenHosts} of `cluster` now: kept from the last entry judged, or judged again. */
function openHosts(
  cluster: ClusterKey,
  claims: ClaimView,
  { used, reserved, open }: Siblings,
  context: PlanningContext,
): OpenHosts {
  const { revision } = context.ledger;
  const kept = open.current;
  if (kept?.revision === revision && kept.used === used.size) return kept;
  // An entry with no host reserved meets `entryFilters`' `unused` as this.
  const filters = [
    unclaimed(claims, cluster),
    AVAILABLE,
    unused((host) => used.has(host.id) || reserved.has(host.id)),
  ];
  const hosts: Host[] = [];
  const closed = new RejectionTally();
  for (const host of context.inventory.hosts) {
    const rejected = context.rejection(filters, host);
    if (rejected === undefined) hosts.push(host);
    else closed.add(rejected);
  }
  open.current = { revision, used: used.size, hosts, closed, alike: new Map() };
  return open.current;
}

/** An entry no host fits: its `no-fit` finding, and its decision when placing explains. */
function unplaced(
  subject: string,
  request: ResourceRequest,
  histogram: string,
  report: Reporter,
  rejected: (() => RejectedHost[]) | undefined,
): { decision?: Decision; issues: Issue[] } {
  return {
    ...(rejected && { decision: { subject, path: request.path, chosen: [], rejected } }),
    issues: [nodeNoFit(subject, histogram, request.path, report)],
  };
}

/** Whether a host is reserved for `request` (see {@link reservedHosts}): it is judged unlike its siblings. */
function hasReservation(reserved: ReadonlyMap<string, NodeRequest>, request: NodeRequest): boolean {
  for (const owner of reserved.values()) if (owner === request) return true;
  return false;
}
