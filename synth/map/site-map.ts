/**
 * What `metalsynth map` shows, as values: every host in its group (rack), who holds it and as what,
 * the findings about it, whether it changes hands against a previous lock; per cluster its hosts and
 * the nodes it could not place; the free capacity. Pure: `map-html.ts` draws it.
 */
import { parseClusterKey, type ClusterKey } from "../cluster-key.ts";
import { explainDecision } from "../explain.ts";
import { formatPath } from "../field-path.ts";
import { pushTo } from "../group.ts";
import { compareText, type Issue } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import { sipLabelHolder } from "../plan/fixed-claims.ts";
import type { Lock, LockEntry } from "../model/lock.ts";
import type { SitePlan } from "../plan/model.ts";
import { freeCapacity, type Capacity } from "./capacity.ts";

/** A lock to compare with, and where it came from as the map names it. */
export interface PreviousLock {
  readonly lock: Lock;
  /** `HEAD:examples/site/rendered/metalsynth.lock.yaml`, or the lock file's path. */
  readonly source: string;
}

/** What the map is drawn from: an evaluated site. */
export interface MapInput {
  readonly inventory: Inventory;
  readonly plan: SitePlan;
  /** Every finding of the site; those about a host (`Issue.host`) mark its tile. */
  readonly issues: readonly Issue[];
  /**
   * The label whose value groups hosts.
   * @default the coarsest `topologyKey` the site's SIPClusters use, else the host's namespace
   */
  readonly groupBy?: string;
  /** When given, hosts whose clusters differ between it and the plan's lock are marked. */
  readonly previous?: PreviousLock;
}

/** How a host serves a cluster. */
export interface Holding {
  readonly cluster: ClusterKey;
  /**
   * `bpa` and `sip` from the plan's lock; `label` for the SIP labels of a SIPCluster the site does
   * not define, which planning treats as that cluster's claim.
   */
  readonly kind: "bpa" | "sip" | "label";
  /** `master`, `worker`, or the SIP role (`ControlPlane`, `Worker`, …). */
  readonly role: string;
  /** The BPA node label the host serves as. */
  readonly node?: string;
  readonly standby: boolean;
  /** The cluster gave the host up; its SIP labels are being removed. */
  readonly released: boolean;
}

/** One host on the map. */
export interface MapHost {
  readonly host: Host;
  /** Sorted by cluster, then role order (control plane first), then node. */
  readonly holdings: readonly Holding[];
  /** The findings about this host, in report order. */
  readonly findings: readonly Issue[];
  /** When the host's clusters differ between the previous lock and the plan's: both. */
  readonly change?: HostChange;
}

/** Hosts sharing a value of the grouping label (a rack), sorted by host id. */
export interface MapGroup {
  /** The label's value, or the namespace; `undefined` for hosts without the label. */
  readonly name?: string;
  readonly hosts: readonly MapHost[];
}

/** A node or role a cluster asked for and did not get (all of). */
export interface Unplaced {
  /** `worker big-1`, `ControlPlane`. */
  readonly subject: string;
  /** The field path of the request. */
  readonly path: string;
  /** SIP: how many hosts the role asks for; BPA nodes ask for one. */
  readonly wanted: number;
  readonly found: number;
  /** The `no-fit` histogram: `0/24 hosts fit: 15 claimed by other clusters, …`. */
  readonly histogram: string;
  /** When the entry itself is at fault (`mac-unknown: …`), why. */
  readonly problem?: string;
}

/** A cluster's part of the map: its hosts, what it could not place, its findings. */
export interface MapCluster {
  readonly key: ClusterKey;
  /** What defines it: `Provisioning`, `SIPCluster`, both, `retired SIPCluster`, `SIP labels only`. */
  readonly kinds: readonly string[];
  /** Index into the map's palette: clusters in key order, so the same site keeps its colours. */
  readonly colour: number;
  readonly hosts: readonly { readonly host: string; readonly holding: Holding }[];
  readonly unplaced: readonly Unplaced[];
  readonly findings: readonly Issue[];
}

/** A host whose clusters differ between the previous lock and the plan's. */
export interface HostChange {
  readonly host: string;
  readonly before: readonly ClusterKey[];
  readonly after: readonly ClusterKey[];
}

/** The whole map. */
export interface SiteMap {
  /** The grouping: a label key, or the namespace when no label was given and the site uses none. */
  readonly groupBy: { readonly label: string } | { readonly namespace: true };
  readonly groups: readonly MapGroup[];
  readonly clusters: readonly MapCluster[];
  readonly capacity: Capacity;
  /** Only when a previous lock was given. */
  readonly changes?: { readonly source: string; readonly hosts: readonly HostChange[] };
  /** Findings about no cluster (reading, settings, inventory), in report order. */
  readonly siteFindings: readonly Issue[];
  readonly hostCount: number;
}

/** The map of an evaluated site. */
export function siteMap(input: MapInput): SiteMap {
  const { inventory, plan } = input;
  const holdings = holdingsByHost(plan, inventory);
  const findingsByHost = new Map<string, Issue[]>();
  const namedTwice = namedTwiceFindings(plan, input.issues);
  for (const found of input.issues) {
    const host = found.host ?? namedTwice.get(found);
    if (host !== undefined) pushTo(findingsByHost, host, found);
  }
  const before = input.previous && clustersByHost(input.previous.lock.entries);
  const after = clustersByHost(plan.lock.entries);

  const changes = before && hostChanges(before, after);
  const changeOf = new Map(changes?.map((change) => [change.host, change]));
  const mapHosts = inventory.hosts.map((host): MapHost => {
    const change = changeOf.get(host.id);
    return {
      host,
      holdings: holdings.get(host.id) ?? [],
      findings: findingsByHost.get(host.id) ?? [],
      ...(change === undefined ? {} : { change }),
    };
  });
  const groupBy = grouping(input.groupBy, plan, inventory);
  const clusters = mapClusters(plan, inventory, mapHosts, input.issues);
  const shown = new Set<string>(clusters.map((cluster) => cluster.key));
  return {
    groupBy,
    groups: groupHosts(mapHosts, groupBy),
    clusters,
    // A host nobody holds that can take no new node (off, in error, consumed: decision 0052) is no room.
    capacity: freeCapacity(
      inventory,
      mapHosts
        .filter((mapHost) => mapHost.holdings.length === 0 && mapHost.host.availability === undefined)
        .map((mapHost) => mapHost.host),
      plan,
    ),
    ...(input.previous && changes ? { changes: { source: input.previous.source, hosts: changes } } : {}),
    // A finding of a cluster the map has no section for (no plan, no hosts) is the site's, and so is
    // one about a host that has no tile (set aside by the loader, decision 0031).
    siteFindings: input.issues.filter((found) =>
      found.host === undefined
        ? !(found.cluster !== undefined && shown.has(found.cluster))
        : inventory.byId(found.host) === undefined,
    ),
    hostCount: inventory.size,
  };
}

/**
 * The host of each finding about a node entry whose host another entry of the same Provisioning,
 * under another label, names too (`mac-duplicate`: two labels, one MAC). Such a finding is about the
 * CR's text and carries no host, but the host is what is wrong on the map: it would serve as two nodes.
 */
function namedTwiceFindings(plan: SitePlan, issues: readonly Issue[]): Map<Issue, string> {
  const hosts = new Map<Issue, string>();
  for (const cluster of plan.clusters) {
    if (cluster.kind !== "bpa" || cluster.provisioning === undefined) continue;
    const labels = new Map<string, Set<string>>();
    const entries = [...cluster.masters, ...cluster.workers];
    for (const { host, request } of entries) {
      const seen = labels.get(host.id);
      if (seen === undefined) labels.set(host.id, new Set([request.label]));
      else seen.add(request.label);
    }
    const object = cluster.provisioning.resource.key;
    for (const { host, request } of entries) {
      if ((labels.get(host.id)?.size ?? 0) < 2) continue;
      const entry = formatPath(request.path);
      for (const found of issues) {
        const within =
          found.path === entry || found.path.startsWith(`${entry}.`) || found.path.startsWith(`${entry}[`);
        if (found.host === undefined && found.object === object && within) hosts.set(found, host.id);
      }
    }
  }
  return hosts;
}

/** Roles drawn as the control plane (solid) rather than as workers (striped). */
const CONTROL_PLANE_ROLES: ReadonlySet<string> = new Set(["master", "ControlPlane"]);

/** Whether a role is a control-plane role (BPA master, SIP ControlPlane). */
export function isControlPlane(role: string): boolean {
  return CONTROL_PLANE_ROLES.has(role);
}

function compareHoldings(a: Holding, b: Holding): number {
  return (
    compareText(a.cluster, b.cluster) ||
    Number(isControlPlane(b.role)) - Number(isControlPlane(a.role)) ||
    compareText(a.role, b.role) ||
    compareText(a.node ?? "", b.node ?? "")
  );
}

/**
 * Who holds each host: the plan's lock (what synth would write), and for hosts it does not mention,
 * SIP labels of a SIPCluster the site does not define (planning treats those as that cluster's).
 */
function holdingsByHost(plan: SitePlan, inventory: Inventory): Map<string, Holding[]> {
  const byHost = new Map<string, Holding[]>();
  for (const entry of plan.lock.entries) {
    const cluster = parseClusterKey(entry.cluster);
    if (cluster === undefined) continue;
    pushTo(byHost, entry.host, {
      cluster,
      kind: entry.kind,
      role: entry.role,
      ...(entry.node === undefined ? {} : { node: entry.node }),
      standby: entry.standby === true,
      released: entry.released === true,
    });
  }
  for (const host of inventory.hosts) {
    // A partial label set holds its host as planning has it (decision 0032), so it is never shown free.
    const cluster = byHost.has(host.id) ? undefined : sipLabelHolder(host);
    if (cluster === undefined) continue;
    const role = host.sipOwner?.nodeType ?? host.sipPartial?.nodeType ?? "no node-type";
    byHost.set(host.id, [{ cluster, kind: "label", role, standby: false, released: false }]);
  }
  for (const list of byHost.values()) list.sort(compareHoldings);
  return byHost;
}

/** The clusters each host serves (releases left out: a host being released has left its cluster). */
function clustersByHost(entries: readonly LockEntry[]): Map<string, ClusterKey[]> {
  const byHost = new Map<string, ClusterKey[]>();
  for (const entry of entries) {
    const cluster = parseClusterKey(entry.cluster);
    if (entry.released === true || cluster === undefined) continue;
    const list = byHost.get(entry.host);
    if (list === undefined) byHost.set(entry.host, [cluster]);
    else if (!list.includes(cluster)) list.push(cluster);
  }
  for (const list of byHost.values()) list.sort(compareText);
  return byHost;
}

/** `before` when the clusters differ (a host that was free is `[]`), else undefined. */
function changed(
  before: readonly ClusterKey[] | undefined,
  after: readonly ClusterKey[] | undefined,
): readonly ClusterKey[] | undefined {
  const was = before ?? [];
  const now = after ?? [];
  const same = was.length === now.length && was.every((cluster, index) => cluster === now[index]);
  return same ? undefined : was;
}

function hostChanges(
  before: ReadonlyMap<string, readonly ClusterKey[]>,
  after: ReadonlyMap<string, readonly ClusterKey[]>,
): HostChange[] {
  const hosts = [...new Set([...before.keys(), ...after.keys()])].sort(compareText);
  return hosts.flatMap((host) => {
    const was = changed(before.get(host), after.get(host));
    return was === undefined ? [] : [{ host, before: was, after: after.get(host) ?? [] }];
  });
}

/**
 * The grouping: the label asked for; else the coarsest topology key the site's SIP roles use (the
 * one with the fewest values among the hosts, a rack before a host) that puts some hosts together,
 * so hosts sit in the racks the site spreads over; else the namespace.
 */
function grouping(
  asked: string | undefined,
  plan: SitePlan,
  inventory: Inventory,
): { label: string } | { namespace: true } {
  if (asked !== undefined) return { label: asked };
  const keys = new Set<string>();
  for (const cluster of plan.clusters) {
    if (cluster.kind !== "sip") continue;
    for (const role of cluster.sip.roles) if (role.topologyKey !== undefined) keys.add(role.topologyKey);
  }
  let best: { key: string; values: number } | undefined;
  for (const key of [...keys].sort(compareText)) {
    const labelled = inventory.hosts.flatMap((host) => host.labels[key] ?? []);
    const values = new Set(labelled).size;
    // A key with a value per host (vino.airshipit.org/host) would make each host its own group.
    const groups = values > 0 && values < labelled.length;
    if (groups && (best === undefined || values < best.values)) best = { key, values };
  }
  return best === undefined ? { namespace: true } : { label: best.key };
}

function groupHosts(hosts: readonly MapHost[], groupBy: SiteMap["groupBy"]): MapGroup[] {
  const byName = new Map<string | undefined, MapHost[]>();
  for (const mapHost of hosts) {
    const name = "label" in groupBy ? mapHost.host.labels[groupBy.label] : mapHost.host.namespace;
    pushTo(byName, name, mapHost);
  }
  // Hosts without the label come last, after the named groups in order.
  return [...byName]
    .sort(([a], [b]) => (a === undefined ? 1 : b === undefined ? -1 : compareText(a, b)))
    .map(([name, members]) => ({ ...(name === undefined ? {} : { name }), hosts: members }));
}

/** Every cluster that holds a host or is defined by the site, in key order. */
function mapClusters(
  plan: SitePlan,
  inventory: Inventory,
  hosts: readonly MapHost[],
  issues: readonly Issue[],
): MapCluster[] {
  const kinds = new Map<ClusterKey, string[]>();
  const unplaced = new Map<ClusterKey, Unplaced[]>();
  for (const cluster of plan.clusters) {
    pushTo(kinds, cluster.key, cluster.kind === "bpa" ? "Provisioning" : "SIPCluster");
    for (const found of unplacedOf(cluster, inventory.size)) pushTo(unplaced, cluster.key, found);
  }
  for (const retired of plan.retired) pushTo(kinds, retired.key, "retired SIPCluster");
  const members = new Map<ClusterKey, { host: string; holding: Holding }[]>();
  for (const mapHost of hosts) {
    for (const holding of mapHost.holdings) {
      pushTo(members, holding.cluster, { host: mapHost.host.id, holding });
      if (holding.kind === "label" && !kinds.has(holding.cluster))
        kinds.set(holding.cluster, ["SIP labels only"]);
    }
  }
  const findings = new Map<string, Issue[]>();
  for (const found of issues) if (found.cluster !== undefined) pushTo(findings, found.cluster, found);
  return [...kinds.keys()].sort(compareText).map((key, colour) => ({
    key,
    kinds: kinds.get(key) ?? [],
    colour,
    hosts: (members.get(key) ?? []).sort(
      (a, b) => compareHoldings(a.holding, b.holding) || compareText(a.host, b.host),
    ),
    unplaced: unplaced.get(key) ?? [],
    findings: findings.get(key) ?? [],
  }));
}

/**
 * The decisions that chose fewer hosts than asked: a BPA node with none, a SIP role short of
 * active + standby, each with its `no-fit` histogram (computed only for these: explaining every
 * decision of a hub would walk every host once per node).
 */
function unplacedOf(cluster: SitePlan["clusters"][number], hostCount: number): Unplaced[] {
  const wanted = new Map<string, number>();
  if (cluster.kind === "sip")
    for (const role of cluster.sip.roles) wanted.set(role.role, role.active + role.standby);
  return cluster.decisions.flatMap((decision) => {
    const asked = wanted.get(decision.subject) ?? 1;
    if (decision.chosen.length >= asked) return [];
    const explained = explainDecision(decision, hostCount);
    return [
      {
        subject: explained.subject,
        path: explained.path,
        wanted: asked,
        found: decision.chosen.length,
        histogram: explained.summary,
        ...(explained.problem === undefined ? {} : { problem: explained.problem }),
      },
    ];
  });
}
