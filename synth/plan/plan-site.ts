import { formatPath } from "../field-path.ts";
import { pushTo } from "../group.ts";
import { compareText, type Issue } from "../issue.ts";
import { ipForInterface, ipForMac, sipOwnerKey, type Host } from "../inventory/host.ts";
import type { BestFit, Inventory } from "../inventory/inventory.ts";
import { matchesSelector } from "../inventory/selector.ts";
import { editDistance } from "../mac.ts";
import { formatBytes } from "../quantity.ts";
import type { NodeRequest, Provisioning } from "../site/bpa.ts";
import { reporter } from "../site/resources.ts";
import { sipKey, type SipCluster, type SipRole } from "../site/sip.ts";
import { fitHistogram, rejection, resourceFilters, unclaimed, type HostFilter } from "./filters.ts";
import { ClaimLedger, type ClaimView, type Release } from "./claim-ledger.ts";
import { compareLockEntries, type Lock, type LockEntry } from "./lock.ts";
import type {
  BpaClusterPlan,
  ClusterPlan,
  Decision,
  NodePlacement,
  Rejection,
  RetiredSipCluster,
  SipClusterPlan,
  SipMember,
  SiteModel,
  SitePlan,
} from "./model.ts";

/** What planning needs: the site's CRs, the inventory and the previous lock. */
export interface PlanInput {
  readonly model: SiteModel;
  readonly inventory: Inventory;
  readonly lock: Lock;
}

/**
 * Decides which host serves which cluster (SPEC §3), deterministically: fixed claims first (lock,
 * SIP labels, MAC entries), then SIP roles and BPA resource-only entries in cluster-key order. Every
 * problem is an issue; the plan is returned even with errors so `explain` can still show it.
 */
export function planSite({ model, inventory, lock }: PlanInput): { plan: SitePlan; issues: Issue[] } {
  const issues: Issue[] = [];
  const bestFit = inventory.bestFit();
  const bpaByKey = groupBpa(model);
  const sipKeys = new Set(model.sips.map((sip) => sipKey(sip.resource)));
  const liveClusters = new Set([...bpaByKey.keys(), ...sipKeys]);

  // 1. The lock: allocations of clusters that still exist stay where they are. Hosts a SIPCluster
  // is releasing (given up, or the cluster left the site) stay with it while their labels are
  // removed: another cluster taking one now would patch the same BareMetalHost from two directories.
  const heldByLock = new Map<string, LockEntry[]>();
  // 2. SIP labels in the inventory: what the live cluster says, for clusters the lock doesn't know
  // yet (the lock is authoritative for the clusters it records).
  const ledger = new ClaimLedger((host) => {
    const owner = sipOwnerKey(host);
    if (owner === undefined || heldByLock.has(owner)) return undefined;
    return {
      cluster: owner,
      why: `labelled for SIPCluster ${owner} (sip.airshipit.org labels in the inventory)`,
    };
  });
  for (const entry of lock.entries) {
    const host = inventory.byId(entry.host);
    if (!host) continue;
    if (entry.kind === "sip" && (entry.released === true || !liveClusters.has(entry.cluster))) {
      // An earlier release is repeated only while the inventory still shows the labels.
      if (entry.released === true && sipOwnerKey(host) !== entry.cluster) continue;
      ledger.release(
        host,
        entry.cluster,
        entry.role,
        `being released by SIPCluster ${entry.cluster} (its labels are removed first)`,
      );
      continue;
    }
    if (!liveClusters.has(entry.cluster)) continue;
    if (!ledger.isRecorded(host))
      ledger.claim(host, entry.cluster, `recorded for ${entry.cluster} in rendered/metalsynth.lock.yaml`);
    pushTo(heldByLock, entry.cluster, entry);
  }

  // 3. MAC entries: the host is named, so the claim is fixed; conflicts are reported here.
  const macHosts = new Map<
    string,
    { host: Host; cluster: string; request: NodeRequest; provisioning: Provisioning }[]
  >();
  for (const [key, group] of bpaByKey) {
    if (!group.provisioning) continue;
    for (const request of [...group.provisioning.masters, ...group.provisioning.workers]) {
      const host = request.mac === undefined ? undefined : inventory.byMac(request.mac);
      if (host) pushTo(macHosts, host.id, { host, cluster: key, request, provisioning: group.provisioning });
    }
  }
  // MAC entries whose host another cluster has: reported here (the message kept for explain), never placed.
  const contested = new Map<NodeRequest, string>();
  const reportContested = (user: { request: NodeRequest; provisioning: Provisioning }, message: string) => {
    contested.set(user.request, `host-claimed: ${message}`);
    issues.push(
      reportRequest(user.provisioning)("host-claimed", [...user.request.path, "mac-address"], message),
    );
  };
  for (const [hostId, users] of macHosts) {
    const clusters = new Set(users.map((user) => user.cluster));
    const existing = users[0] && ledger.claimOf(users[0].host);
    if (existing) {
      for (const user of users.filter((candidate) => candidate.cluster !== existing.cluster)) {
        reportContested(
          user,
          `host ${hostId} (${user.request.mac}) already belongs to ${existing.cluster}: ${existing.why}`,
        );
      }
      continue;
    }
    // Two clusters name the same host and no lock decides: the first cluster key keeps it, so the
    // error lands on one side and is stable (docs/decisions/0004-contested-hosts.md).
    const winner = [...clusters].sort(compareText)[0];
    const first = users.find((user) => user.cluster === winner);
    if (!first) continue;
    const owner = `${first.provisioning.resource.kind} ${first.provisioning.resource.namespace}/${first.provisioning.resource.name}`;
    ledger.claim(first.host, first.cluster, `requested by mac-address in ${owner}`);
    for (const user of users.filter((candidate) => candidate.cluster !== first.cluster)) {
      reportContested(
        user,
        `host ${hostId} (${user.request.mac}) is already requested by mac-address for cluster ${first.cluster} in ${owner}; a host belongs to at most one cluster`,
      );
    }
  }

  // 4. SIPClusters, then BPA clusters, each pass in key order, each against the claims so far. SIP
  // roles ask for hosts by label, BPA resource-only entries for any host big enough, so the narrower
  // requests go first: a BPA cluster must not take the host a SIPCluster's selector was written for
  // just because its key sorts earlier (decision 0004).
  const plans: ClusterPlan[] = [];
  const nextLock: LockEntry[] = [];
  const keys = [...liveClusters].sort(compareText);
  const sipsByKey = new Map<string, SipCluster[]>();
  for (const sip of model.sips) pushTo(sipsByKey, sipKey(sip.resource), sip);
  // Clusters not planned yet: only they can still take a host another cluster has claimed.
  const unplanned = new Set(keys);
  const stillPlanning = (cluster: string) => unplanned.has(cluster);
  const contextFor = (key: string): PlanningContext => ({
    inventory,
    bestFit,
    ledger,
    lockEntries: heldByLock.get(key) ?? [],
    issues,
    stillPlanning,
  });
  for (const key of keys) {
    for (const sip of sipsByKey.get(key) ?? []) {
      const planned = planSipCluster(sip, { ...contextFor(key), releasing: ledger.releasing(key) });
      plans.push(planned.plan);
      nextLock.push(...planned.lock);
    }
    if (!bpaByKey.has(key)) unplanned.delete(key);
  }
  for (const key of keys) {
    const group = bpaByKey.get(key);
    if (group?.provisioning) {
      const bpa = planBpaCluster(
        key,
        { ...group, provisioning: group.provisioning },
        { ...contextFor(key), contested },
      );
      plans.push(bpa.plan);
      nextLock.push(...bpa.lock);
    } else if (group) {
      plans.push({
        kind: "bpa",
        key,
        namespace: group.namespace,
        name: group.name,
        ...optional(group),
        masters: [],
        workers: [],
        decisions: [],
      });
    }
    unplanned.delete(key);
  }
  // Output order: by key, BPA before SIP for the same key (the SitePlan contract).
  plans.sort((a, b) => compareText(a.key, b.key) || compareText(a.kind, b.kind));
  const retired = ledger
    .releasingClusters()
    .filter((key) => !liveClusters.has(key))
    .sort(compareText)
    .map((key) => retireSipCluster(key, ledger.releasing(key)));
  for (const cluster of retired) nextLock.push(...cluster.lock);
  return {
    plan: {
      clusters: plans,
      retired: retired.map((cluster) => cluster.plan),
      lock: { entries: nextLock.sort(compareLockEntries) },
    },
    issues,
  };
}

/** The lock entry recording that `cluster` is releasing `host`, which served it as `role`. */
function releaseEntry(host: Host, cluster: string, role: string): LockEntry {
  return { host: host.id, cluster, kind: "sip", role, released: true };
}

/** A SIPCluster gone from the site: its hosts lose their labels (decision 0012). */
function retireSipCluster(
  key: string,
  hosts: readonly Release[],
): { plan: RetiredSipCluster; lock: LockEntry[] } {
  const [namespace = "", name = ""] = key.split("/");
  const sorted = [...hosts].sort((a, b) => compareText(a.host.id, b.host.id));
  return {
    plan: { key, namespace, name, released: sorted.map(({ host }) => host) },
    lock: sorted.map(({ host, role }) => releaseEntry(host, key, role)),
  };
}

interface BpaGroup {
  readonly namespace: string;
  readonly name: string;
  provisioning?: Provisioning;
  software?: SiteModel["softwares"][number];
  glue?: SiteModel["glues"][number];
}

function optional(group: BpaGroup) {
  return {
    ...(group.provisioning ? { provisioning: group.provisioning } : {}),
    ...(group.software ? { software: group.software } : {}),
    ...(group.glue ? { glue: group.glue } : {}),
  };
}

/** BPA CRs joined by (namespace, cluster label); duplicates are reported by the site checks. */
function groupBpa(model: SiteModel): Map<string, BpaGroup> {
  const groups = new Map<string, BpaGroup>();
  const groupFor = (namespace: string, cluster: string): BpaGroup => {
    const key = `${namespace}/${cluster}`;
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

function reportRequest(provisioning: Provisioning) {
  return reporter(provisioning.resource, `${provisioning.resource.namespace}/${provisioning.cluster ?? ""}`);
}

interface PlanningContext {
  readonly inventory: Inventory;
  /** Best-fit candidates; every placed host is taken out, since no later request may have it. */
  readonly bestFit: BestFit;
  /** Who holds which host, as far as planning has got. */
  readonly ledger: ClaimLedger;
  readonly lockEntries: readonly LockEntry[];
  readonly issues: Issue[];
  /** Whether `cluster` is yet to be planned (or being planned), so it may still take hosts. */
  stillPlanning(cluster: string): boolean;
}

/** Plans one BPA cluster's nodes in CR order (SPEC §3.1). */
function planBpaCluster(
  key: string,
  group: BpaGroup & { provisioning: Provisioning },
  context: PlanningContext & { readonly contested: ReadonlyMap<NodeRequest, string> },
): { plan: BpaClusterPlan; lock: LockEntry[] } {
  const { provisioning } = group;
  const report = reportRequest(provisioning);
  const masters: NodePlacement[] = [];
  const workers: NodePlacement[] = [];
  const decisions: Decision[] = [];
  const lock: LockEntry[] = [];
  const placedMasters = new Map<string, NodePlacement>();
  // Hosts this cluster already uses: a resource-only entry must not land on another entry's host.
  const used = new Set<string>();
  const reserved = reservedHosts(key, provisioning, context);

  for (const request of [...provisioning.masters, ...provisioning.workers]) {
    const placements = request.role === "master" ? masters : workers;
    const subject = `${request.role} ${request.label}`;
    // An entry that names no usable host is still explained, with the error that says why.
    const unresolved = (problem: string, reason: string) =>
      decisions.push({
        subject,
        path: request.path,
        chosen: [],
        rejected: () => context.inventory.hosts.map((host) => ({ host: host.id, reason })),
        problem,
      });
    if (request.sameAsMaster) {
      const master = placedMasters.get(request.label);
      if (master) {
        placements.push({
          request,
          host: master.host,
          ...(master.ip === undefined ? {} : { ip: master.ip }),
          reason: `same host as master ${request.label}`,
        });
        decisions.push({
          subject,
          path: request.path,
          chosen: [{ host: master.host.id, reason: `same host as master ${request.label}` }],
          rejected: otherHosts(context.inventory, master.host, `not master ${request.label}'s host`),
        });
        lock.push({
          host: master.host.id,
          cluster: key,
          kind: "bpa",
          role: request.role,
          node: request.label,
        });
      } else {
        const named = provisioning.masters.some((entry) => entry.label === request.label);
        unresolved(
          named
            ? `master ${request.label} has no host, so neither has this entry`
            : `node-ref: there is no master ${request.label} to share a host with`,
          `not master ${request.label}'s host`,
        );
      }
      continue;
    }
    if (request.mac !== undefined) {
      const placed = placeByMac(request, request.mac, context, report);
      if ("problem" in placed) {
        unresolved(placed.problem, `has no NIC ${request.mac}`);
        continue;
      }
      const { placement } = placed;
      context.bestFit.take(placement.host);
      if (request.role === "master") placedMasters.set(request.label, placement);
      placements.push(placement); // a host in both lists is master and worker (upstream semantics)
      used.add(placement.host.id);
      decisions.push({
        subject,
        path: request.path,
        chosen: [{ host: placement.host.id, reason: placement.reason }],
        rejected: otherHosts(context.inventory, placement.host, `has no NIC ${request.mac}`),
      });
      lock.push({
        host: placement.host.id,
        cluster: key,
        kind: "bpa",
        role: request.role,
        node: request.label,
      });
      continue;
    }
    if (request.macProblem !== undefined) {
      unresolved(`mac-format: ${request.macProblem}`, "not considered: the mac-address is malformed");
      continue;
    }
    const placed = placeByResources(request, key, { used, reserved }, context, report);
    decisions.push(placed.decision);
    if (!placed.placement) continue;
    placements.push(placed.placement);
    used.add(placed.placement.host.id);
    if (request.role === "master") placedMasters.set(request.label, placed.placement);
    lock.push({
      host: placed.placement.host.id,
      cluster: key,
      kind: "bpa",
      role: request.role,
      node: request.label,
    });
  }
  const plan: BpaClusterPlan = {
    kind: "bpa",
    key,
    namespace: group.namespace,
    name: group.name,
    ...optional(group),
    masters,
    workers,
    decisions,
  };
  return { plan, lock };
}

/**
 * Hosts that belong to one entry of this cluster whatever the planning order: the host a MAC entry
 * names, and the locked host of a resource-only entry that still fits it. Best fit for another entry
 * must not take them, or one lost host would move the entry planned before its siblings onto a
 * sibling's host and shift every sibling along (SPEC §3.4).
 */
function reservedHosts(
  cluster: string,
  provisioning: Provisioning,
  context: PlanningContext,
): Map<string, NodeRequest> {
  const reserved = new Map<string, NodeRequest>();
  const requests = [...provisioning.masters, ...provisioning.workers];
  for (const request of requests) {
    const host = request.mac === undefined ? undefined : context.inventory.byMac(request.mac);
    if (host && !reserved.has(host.id)) reserved.set(host.id, request);
  }
  for (const request of requests) {
    if (request.mac !== undefined || request.macProblem !== undefined || request.sameAsMaster) continue;
    const host = lockedHost(request, context);
    if (
      host &&
      !reserved.has(host.id) &&
      rejection(resourceFilters(request), host) === undefined &&
      context.ledger.claimOf(host)?.cluster === cluster
    )
      reserved.set(host.id, request);
  }
  return reserved;
}

/** The host the lock records for a BPA entry, if it is still in the inventory. */
function lockedHost(request: NodeRequest, context: PlanningContext): Host | undefined {
  const locked = context.lockEntries.find(
    (entry) => entry.kind === "bpa" && entry.role === request.role && entry.node === request.label,
  );
  return locked && context.inventory.byId(locked.host);
}

/** For a decision the CR made itself (a MAC, a null entry): every other host, with one reason. */
function otherHosts(inventory: Inventory, chosen: Host, reason: string): () => Rejection[] {
  return () => inventory.hosts.flatMap((host) => (host.id === chosen.id ? [] : [{ host: host.id, reason }]));
}

/** A MAC entry: that host, checked against the resources the entry asks for. */
function placeByMac(
  request: NodeRequest,
  mac: string,
  context: PlanningContext & { readonly contested: ReadonlyMap<NodeRequest, string> },
  report: ReturnType<typeof reporter>,
): { placement: NodePlacement } | { problem: string } {
  const { inventory, issues } = context;
  const macPath = [...request.path, "mac-address"];
  const host = inventory.byMac(mac);
  if (!host) {
    const closest = inventory.closestMac(mac);
    const hint = closest
      ? ` (closest: ${closest.mac} on ${closest.host.id})`
      : " (the inventory has no hosts)";
    const message = `${mac} matches no BareMetalHost${hint}${uninspectedHint(inventory)}`;
    issues.push(report("mac-unknown", macPath, message));
    return { problem: `mac-unknown: ${message}` };
  }
  const contested = context.contested.get(request);
  if (contested !== undefined) return { problem: contested };
  checkResources(request, host, report, issues);
  const ip = ipForMac(host, mac);
  if (ip === undefined && !inspected(host)) {
    issues.push(
      report(
        "ip-missing",
        macPath,
        `NIC ${mac} of host ${host.id} has no usable IP address: host ${host.id} has not been inspected yet (no hardware details, no NIC IPs): take a new snapshot once inspection is done`,
      ),
    );
  } else if (ip === undefined) {
    const withIp = host.nics
      .filter((nic) => nic.ipv4)
      .map((nic) => `${nic.mac} (${nic.name || "unnamed"}, ${nic.ipv4})`);
    const hint =
      withIp.length > 0
        ? `; NICs with an IPv4: ${withIp.join(", ")}`
        : "; the host reports no IPv4 on any NIC";
    issues.push(
      report("ip-missing", macPath, `NIC ${mac} of host ${host.id} has no usable IP address${hint}`),
    );
  }
  notReady(request, host, report, issues);
  return { placement: { request, host, ...(ip === undefined ? {} : { ip }), reason: `mac-address ${mac}` } };
}

/**
 * Whether the BMH's hardware was inspected: without `status.hardware` (or a HardwareData) the
 * snapshot knows nothing but the boot MAC, so neither resources nor NIC addresses can be read.
 */
function inspected(host: Host): boolean {
  return host.nics.length > 0 || host.cpus !== undefined || host.memoryBytes !== undefined;
}

/** The hosts of each inventory not inspected yet, listed on the first unknown MAC. */
const uninspectedByInventory = new WeakMap<Inventory, readonly Host[]>();

/**
 * For `mac-unknown`: hosts not inspected yet list no NICs beyond their boot MAC, so the MAC may well
 * be one of theirs; the message says so instead of letting the closest MAC look like the answer.
 */
function uninspectedHint(inventory: Inventory): string {
  let hosts = uninspectedByInventory.get(inventory);
  if (hosts === undefined) {
    hosts = inventory.hosts.filter((host) => !inspected(host));
    uninspectedByInventory.set(inventory, hosts);
  }
  if (hosts.length === 0) return "";
  const named = hosts.slice(0, 3).map((host) => host.id);
  const more = hosts.length > named.length ? `, … (${hosts.length} in all)` : "";
  const count = hosts.length === 1 ? "1 host has" : `${hosts.length} hosts have`;
  const nics = hosts.length === 1 ? "its NICs are" : "their NICs are";
  return `; ${count} not been inspected yet, so ${nics} unknown: ${named.join(", ")}${more}`;
}

function checkResources(
  request: NodeRequest,
  host: Host,
  report: ReturnType<typeof reporter>,
  issues: Issue[],
): void {
  const path = request.path;
  if (request.cpus !== undefined) {
    if (host.cpus === undefined)
      issues.push(
        report(
          "resources-unknown",
          [...path, "cpu"],
          `host ${host.id} has no hardware details; can't check cpu: ${request.cpus}`,
        ),
      );
    else if (host.cpus < request.cpus)
      issues.push(
        report(
          "cpu-insufficient",
          [...path, "cpu"],
          `host ${host.id} has ${host.cpus} CPUs, ${request.cpus} requested`,
        ),
      );
  }
  if (request.memoryBytes !== undefined) {
    if (host.memoryBytes === undefined)
      issues.push(
        report(
          "resources-unknown",
          [...path, "memory"],
          `host ${host.id} has no hardware details; can't check memory: ${formatBytes(request.memoryBytes)}`,
        ),
      );
    else if (host.memoryBytes < request.memoryBytes)
      issues.push(
        report(
          "memory-insufficient",
          [...path, "memory"],
          `host ${host.id} has ${formatBytes(host.memoryBytes)} memory, ${formatBytes(request.memoryBytes)} requested`,
        ),
      );
  }
  if (request.sriov && !host.sriov)
    issues.push(
      report(
        "sriov-missing",
        [...path, "sriov"],
        `host ${host.id} is not labelled feature.metalsynth.io/sriov: "true"`,
      ),
    );
  if (request.qat && !host.qat)
    issues.push(
      report(
        "qat-missing",
        [...path, "qat"],
        `host ${host.id} is not labelled feature.metalsynth.io/qat: "true"`,
      ),
    );
}

function notReady(
  request: NodeRequest,
  host: Host,
  report: ReturnType<typeof reporter>,
  issues: Issue[],
): void {
  if (!host.osInstalled) {
    const state =
      host.provisioningState === undefined
        ? "has no provisioning state yet (no status: not inspected or provisioned)"
        : `is in provisioning state "${host.provisioningState}"`;
    issues.push(
      report(
        "host-not-ready",
        request.path,
        `host ${host.id} ${state}; KUD needs an installed OS (provisioned or externally provisioned)`,
      ),
    );
  }
}

/**
 * The address of a host chosen by resources: the IPv4 of its boot NIC, else of the first NIC by name
 * that has one (see docs/decisions/0003-resource-only-host-address.md).
 */
function hostAddress(host: Host): string | undefined {
  const boot = host.bootMac === undefined ? undefined : ipForMac(host, host.bootMac);
  if (boot?.includes(".")) return boot;
  return (
    [...host.nics]
      .sort((a, b) => compareText(a.name, b.name) || compareText(a.mac, b.mac))
      .find((nic) => nic.ipv4)?.ipv4 ?? boot
  );
}

/** A resource-only entry: sticky from the lock if still valid, else best fit among free hosts. */
function placeByResources(
  request: NodeRequest,
  cluster: string,
  siblings: {
    /** Hosts placed for earlier entries of this cluster. */
    readonly used: ReadonlySet<string>;
    /** Hosts that belong to one entry of this cluster (see {@link reservedHosts}). */
    readonly reserved: ReadonlyMap<string, NodeRequest>;
  },
  context: PlanningContext,
  report: ReturnType<typeof reporter>,
): { placement?: NodePlacement; decision: Decision } {
  const { inventory, issues } = context;
  const subject = `${request.role} ${request.label}`;
  const claims = context.ledger.view();
  const usedBefore = new Set(siblings.used);
  const servesSibling = (host: Host) =>
    usedBefore.has(host.id) || (siblings.reserved.get(host.id) ?? request) !== request;
  // What the host itself must be; a locked host is checked against these, its claim separately.
  const fitFilters: HostFilter[] = [
    {
      name: "Unused",
      check: (host) => (servesSibling(host) ? "serves another node of this cluster" : undefined),
    },
    ...resourceFilters(request),
  ];
  const filters: HostFilter[] = [unclaimed(claims, cluster), ...fitFilters];
  // Every host not chosen gets a reason, including those that fit but lost the best-fit comparison.
  const rejectedBesides = (chosen: Host | undefined, lost: string) => (): Rejection[] =>
    inventory.hosts.flatMap((host) => {
      if (host.id === chosen?.id) return [];
      return [{ host: host.id, reason: rejection(filters, host) ?? lost }];
    });
  const take = (host: Host, reason: string, lost: string) => {
    context.ledger.claim(host, cluster, `chosen for ${subject} of ${cluster}`);
    context.bestFit.take(host);
    const ip = hostAddress(host);
    if (ip === undefined)
      issues.push(
        report(
          "ip-missing",
          request.path,
          `host ${host.id}, chosen for ${subject}, reports no IP address on any NIC`,
        ),
      );
    notReady(request, host, report, issues);
    const placement: NodePlacement = { request, host, ...(ip === undefined ? {} : { ip }), reason };
    return {
      placement,
      decision: {
        subject,
        path: request.path,
        chosen: [{ host: host.id, reason }],
        rejected: rejectedBesides(host, lost),
      },
    };
  };

  const locked = lockedHost(request, context);
  if (
    locked &&
    rejection(fitFilters, locked) === undefined &&
    context.ledger.claimOf(locked)?.cluster === cluster
  ) {
    return take(locked, "kept from rendered/metalsynth.lock.yaml", "fits, but the locked host is kept");
  }

  const needsKnownResources = request.cpus !== undefined || request.memoryBytes !== undefined;
  const candidates = needsKnownResources
    ? context.bestFit.fitting(request.cpus ?? 0, request.memoryBytes ?? 0)
    : chain(context.bestFit.fitting(), inventory.withUnknownResources());
  for (const host of candidates) {
    if (rejection(filters, host) !== undefined) {
      // Held by a cluster that is done planning: no later request can have it, so later scans skip it.
      const owner = context.ledger.claimOf(host)?.cluster;
      if (owner !== undefined && owner !== cluster && !context.stillPlanning(owner))
        context.bestFit.take(host);
    } else {
      const size =
        host.cpus === undefined
          ? "no hardware details"
          : `${host.cpus} CPUs, ${formatBytes(host.memoryBytes ?? 0)}`;
      // Without cpu/memory the candidates are still in best-fit order: the smallest free host wins.
      const why = needsKnownResources ? "best fit" : "smallest free host (no cpu or memory requested)";
      return take(host, `${why}: ${size}`, "fits, but a smaller host was chosen");
    }
  }
  const rejected = rejectedBesides(undefined, "fits");
  const reasons = rejected();
  issues.push(
    report(
      "no-fit",
      request.path,
      `no host for ${subject}: ${fitHistogram(
        inventory.size,
        0,
        reasons.map((found) => found.reason),
      )}`,
    ),
  );
  return { decision: { subject, path: request.path, chosen: [], rejected } };
}

/** Plans one SIPCluster's roles (SPEC §3.2). */
function planSipCluster(
  sip: SipCluster,
  context: PlanningContext & {
    /** Hosts the cluster is still releasing from earlier runs (their labels still in the inventory). */
    readonly releasing: readonly Release[];
  },
): { plan: SipClusterPlan; lock: LockEntry[] } {
  const key = sipKey(sip.resource);
  const { inventory, issues } = context;
  const report = reporter(sip.resource, key);
  const members: SipMember[] = [];
  const decisions: Decision[] = [];
  const chosenIds = new Set<string>();
  const interfaceIds = serviceInterfaces(sip);
  const previous = previousMembers(sip, context);

  for (const role of sip.roles.filter((candidate) => candidate.plannable)) {
    const wanted = role.active + role.standby;
    const filters = sipFilters(role, key, interfaceIds, context.ledger.view());
    const topologyTaken = new Set<string>();
    const roleMembers: { host: Host; reason: string; wasStandby: boolean }[] = [];
    const fitsTopology = (host: Host) => {
      const value = role.topologyKey === undefined ? undefined : host.labels[role.topologyKey];
      return value === undefined || !topologyTaken.has(value);
    };
    const add = (host: Host, reason: string, wasStandby: boolean) => {
      const value = role.topologyKey === undefined ? undefined : host.labels[role.topologyKey];
      if (value !== undefined) topologyTaken.add(value);
      chosenIds.add(host.id);
      roleMembers.push({ host, reason, wasStandby });
    };
    // Keep what this role already has (active before standby, then by id), if it still qualifies.
    const kept = previous
      .filter((entry) => entry.role === role.role)
      .sort((a, b) => Number(a.standby) - Number(b.standby) || compareText(a.host.id, b.host.id));
    for (const entry of kept) {
      if (rejection(filters, entry.host) === undefined && fitsTopology(entry.host))
        add(entry.host, entry.why, entry.standby);
    }
    // Shrink: release standby hosts first, then the highest names.
    roleMembers.sort(
      (a, b) => Number(a.wasStandby) - Number(b.wasStandby) || compareText(a.host.id, b.host.id),
    );
    for (const dropped of roleMembers.splice(wanted)) chosenIds.delete(dropped.host.id);
    const candidates = inventory.matching(role.selector);
    const topologyProblem = unusedTopologyKey(role, candidates);
    if (topologyProblem) issues.push(report("topology-key", [...role.path, "topologyKey"], topologyProblem));
    // Fill from free hosts that match, in name order, one per topology value.
    for (const host of candidates) {
      if (roleMembers.length >= wanted) break;
      if (chosenIds.has(host.id) || rejection(filters, host) !== undefined || !fitsTopology(host)) continue;
      add(host, `matches ${formatPath(role.path)}.labelSelector`, false);
    }
    const roleIds = new Set(roleMembers.map((member) => member.host.id));
    const otherRoles = new Set([...chosenIds].filter((id) => !roleIds.has(id)));
    const rejected = (): Rejection[] =>
      sipRejections(
        inventory.hosts,
        role,
        filters,
        roleMembers.map((member) => member.host),
        otherRoles,
      );
    if (roleMembers.length < wanted) {
      const reasons = rejected().map((found) => found.reason);
      issues.push(
        report(
          "no-fit",
          role.path,
          `role ${role.role} needs ${wanted} hosts (active ${role.active} + standby ${role.standby}), found ${roleMembers.length}: ${fitHistogram(inventory.size, roleMembers.length, reasons)}`,
        ),
      );
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
      name: sip.resource.name,
      sip,
      members,
      released: released.map(({ host }) => host),
      decisions,
    },
    lock,
  };
}

/**
 * Why a role's `topologyKey` is a mistake even though it is a valid label key: no host the selector
 * matches carries it, so every host is unconstrained and the role's hosts may share a rack. The
 * usual cause is a typo, so the message names the closest key those hosts do carry.
 */
function unusedTopologyKey(role: SipRole, candidates: readonly Host[]): string | undefined {
  const key = role.topologyKey;
  // No candidates at all is a no-fit, reported on its own.
  if (key === undefined || candidates.length === 0) return undefined;
  if (candidates.some((host) => host.labels[key] !== undefined)) return undefined;
  const carried = new Set(candidates.flatMap((host) => Object.keys(host.labels)));
  const closest = [...carried]
    .map((label) => ({ label, distance: editDistance(key, label) }))
    .sort((a, b) => a.distance - b.distance || compareText(a.label, b.label))[0];
  const hint = closest ? ` (did you mean ${closest.label}?)` : " (they carry no labels)";
  return `no host matching the labelSelector (${candidates.length} hosts) carries label "${key}", so it would constrain nothing${hint}`;
}

/** Every `nodeInterfaceId` the cluster's services target: member hosts need an IP on each. */
function serviceInterfaces(sip: SipCluster): string[] {
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

function sipFilters(
  role: SipRole,
  cluster: string,
  interfaceIds: readonly string[],
  claims: ClaimView,
): HostFilter[] {
  return [
    {
      name: "Selector",
      check: (host) =>
        matchesSelector(host.labels, role.selector) ? undefined : "not matching the labelSelector",
    },
    unclaimed(claims, cluster),
    ...interfaceIds.map((id): HostFilter => ({
      name: "Interface",
      check: (host) => (ipForInterface(host, id) === undefined ? `no IP on interface ${id}` : undefined),
    })),
  ];
}

function sipRejections(
  hosts: readonly Host[],
  role: SipRole,
  filters: readonly HostFilter[],
  members: readonly Host[],
  otherRoles: ReadonlySet<string>,
): Rejection[] {
  const memberIds = new Set(members.map((host) => host.id));
  const takenValues = new Set(
    members.flatMap((host) =>
      role.topologyKey && host.labels[role.topologyKey] !== undefined ? [host.labels[role.topologyKey]!] : [],
    ),
  );
  return hosts.flatMap((host): Rejection[] => {
    if (memberIds.has(host.id)) return [];
    const reason = rejection(filters, host);
    if (reason !== undefined) return [{ host: host.id, reason }];
    if (otherRoles.has(host.id)) return [{ host: host.id, reason: "serves another role of this cluster" }];
    const value = role.topologyKey === undefined ? undefined : host.labels[role.topologyKey];
    if (value !== undefined && takenValues.has(value))
      return [{ host: host.id, reason: `same ${role.topologyKey} as a chosen host` }];
    return [{ host: host.id, reason: "not needed: the role is full" }];
  });
}

/** `first`, then `second`, lazily. */
function* chain<T>(first: Iterable<T>, second: Iterable<T>): Generator<T> {
  yield* first;
  yield* second;
}
