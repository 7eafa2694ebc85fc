/**
 * The map's capacity summary: the free hosts by shape (CPUs × memory × features), and for each shape
 * the site's requests use, how many more nodes of it the free hosts could take. Fit is decided by the
 * planner's own filters, so "fits" here means what it means to best fit and SIP placement.
 */
import { compareText } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import type { LabelSelector } from "../inventory/selector.ts";
import { FILTER_PLUGINS, rejection, resourceFilters } from "../rules/filters.ts";
import { addressed } from "../rules/filters/interface.ts";
import type { SitePlan } from "../plan/model.ts";
import { serviceInterfaces } from "../plan/sip-placement.ts";
import { formatBytes } from "../quantity.ts";
import type { NodeRequest, ResourceNeeds } from "../model/bpa.ts";

/** Free hosts of one shape. Unknown CPUs or memory (a host not inspected) are their own shape. */
export interface FreeShape {
  readonly cpus?: number;
  readonly memoryBytes?: number;
  readonly sriov: boolean;
  readonly qat: boolean;
  readonly hosts: number;
}

/** A shape the site asks for, and room for more of it. */
export interface RequestedShape {
  readonly kind: "bpa" | "sip";
  /** What a node of this shape needs, in words: `≥ 16 CPUs × ≥ 64Gi × SR-IOV`. */
  readonly shape: string;
  /** How many BPA node entries (or SIP roles) ask for it. */
  readonly requests: number;
  /** How many clusters those belong to. */
  readonly clusters: number;
  /**
   * How many more nodes of this shape the free hosts could take, the shape on its own (shapes
   * compete for the same hosts). For a SIP role with a topology key: one per topology value.
   */
  readonly fit: number;
}

/** The capacity summary. */
export interface Capacity {
  readonly freeHosts: number;
  /** Smallest first; unknown hardware last. */
  readonly free: readonly FreeShape[];
  /** BPA shapes first, each kind by its description. */
  readonly requested: readonly RequestedShape[];
}

/** The capacity left in `free` (the hosts nobody holds) for the shapes `plan`'s clusters ask for. */
export function freeCapacity(inventory: Inventory, free: readonly Host[], plan: SitePlan): Capacity {
  return {
    freeHosts: free.length,
    free: freeShapes(free),
    requested: [...bpaShapes(plan, free), ...sipShapes(plan, inventory, free)],
  };
}

function freeShapes(free: readonly Host[]): FreeShape[] {
  const byShape = new Map<string, { shape: Omit<FreeShape, "hosts">; hosts: number }>();
  for (const host of free) {
    const key = `${host.cpus ?? ""}|${host.memoryBytes ?? ""}|${host.sriov}|${host.qat}`;
    const known = byShape.get(key);
    if (known) known.hosts++;
    else {
      const shape = {
        ...(host.cpus === undefined ? {} : { cpus: host.cpus }),
        ...(host.memoryBytes === undefined ? {} : { memoryBytes: host.memoryBytes }),
        sriov: host.sriov,
        qat: host.qat,
      };
      byShape.set(key, { shape, hosts: 1 });
    }
  }
  const unknownLast = (value: number | undefined) => value ?? Number.POSITIVE_INFINITY;
  return [...byShape.values()]
    .map(({ shape, hosts }) => ({ ...shape, hosts }))
    .sort(
      (a, b) =>
        unknownLast(a.cpus) - unknownLast(b.cpus) ||
        unknownLast(a.memoryBytes) - unknownLast(b.memoryBytes) ||
        Number(a.sriov) - Number(b.sriov) ||
        Number(a.qat) - Number(b.qat),
    );
}

/** A free shape in words: `32 CPUs × 128Gi × SR-IOV × QAT`, `not inspected` when unknown. */
export function freeShapeText(shape: FreeShape): string {
  const hardware =
    shape.cpus === undefined || shape.memoryBytes === undefined
      ? ["not inspected"]
      : [`${shape.cpus} CPUs`, formatBytes(shape.memoryBytes)];
  return [...hardware, ...features(shape)].join(" × ");
}

function features(needs: { readonly sriov: boolean; readonly qat: boolean }): string[] {
  return [...(needs.sriov ? ["SR-IOV"] : []), ...(needs.qat ? ["QAT"] : [])];
}

/** The resources a BPA entry states: resource-only entries, and MAC entries that state any. */
function statedNeeds(request: NodeRequest): ResourceNeeds | undefined {
  if (request.kind === "resources") return request;
  return request.kind === "mac" && askedOf(request).length > 0 ? request : undefined;
}

function bpaShapes(plan: SitePlan, free: readonly Host[]): RequestedShape[] {
  const byShape = new Map<string, { needs: ResourceNeeds; requests: number; clusters: Set<string> }>();
  for (const cluster of plan.clusters) {
    if (cluster.kind !== "bpa" || cluster.provisioning === undefined) continue;
    for (const request of [...cluster.provisioning.masters, ...cluster.provisioning.workers]) {
      const needs = statedNeeds(request);
      if (needs === undefined) continue;
      // Each resource plugin words what it is asked differently, so the words name the shape.
      const key = needsText(needs);
      const known = byShape.get(key) ?? { needs, requests: 0, clusters: new Set<string>() };
      known.requests++;
      known.clusters.add(cluster.key);
      byShape.set(key, known);
    }
  }
  return [...byShape.values()]
    .map(({ needs, requests, clusters }) => {
      const filters = resourceFilters(needs);
      return {
        kind: "bpa" as const,
        shape: needsText(needs),
        requests,
        clusters: clusters.size,
        fit: free.filter((host) => rejection(filters, host) === undefined).length,
      };
    })
    .sort((a, b) => compareText(a.shape, b.shape));
}

/** `≥ 16 CPUs × ≥ 64Gi × SR-IOV`; `any host` for an entry that asks for nothing in particular. */
function needsText(needs: ResourceNeeds): string {
  const parts = askedOf(needs);
  return parts.length === 0 ? "any host" : parts.join(" × ");
}

/** What `needs` asks of each resource, in the words of its plugin, in registry order. */
function askedOf(needs: ResourceNeeds): string[] {
  return FILTER_PLUGINS.flatMap((plugin) => plugin.asked?.(needs) ?? []);
}

function sipShapes(plan: SitePlan, inventory: Inventory, free: readonly Host[]): RequestedShape[] {
  const freeIds = new Set(free.map((host) => host.id));
  const byShape = new Map<
    string,
    { shape: string; fit: () => number; requests: number; clusters: Set<string> }
  >();
  for (const cluster of plan.clusters) {
    if (cluster.kind !== "sip") continue;
    const interfaces = serviceInterfaces(cluster.sip);
    for (const role of cluster.sip.roles.filter((candidate) => candidate.plannable)) {
      const shape = [
        selectorText(role.selector),
        ...askedOf(role.needs),
        ...(role.topologyKey === undefined ? [] : [`one per ${role.topologyKey}`]),
        ...(interfaces.length === 0 ? [] : [`an IP on ${interfaces.join(", ")}`]),
      ].join(", ");
      const known = byShape.get(shape) ?? {
        shape,
        fit: () => {
          const filters = [...resourceFilters(role.needs), ...interfaces.map(addressed)];
          const fitting = inventory
            .matching(role.selector)
            .filter((host) => freeIds.has(host.id) && rejection(filters, host) === undefined);
          return topologySlots(fitting, role.topologyKey);
        },
        requests: 0,
        clusters: new Set<string>(),
      };
      known.requests++;
      known.clusters.add(cluster.key);
      byShape.set(shape, known);
    }
  }
  return [...byShape.values()]
    .map(({ shape, fit, requests, clusters }) => ({
      kind: "sip" as const,
      shape,
      requests,
      clusters: clusters.size,
      fit: fit(),
    }))
    .sort((a, b) => compareText(a.shape, b.shape));
}

/** How many of `hosts` one role could take: one per value of `key`; hosts without it are unconstrained. */
function topologySlots(hosts: readonly Host[], key: string | undefined): number {
  if (key === undefined) return hosts.length;
  const values = new Set<string>();
  let unlabelled = 0;
  for (const host of hosts) {
    const value = host.labels[key];
    if (value === undefined) unlabelled++;
    else values.add(value);
  }
  return values.size + unlabelled;
}

/** A label selector as kubectl writes one: `flavor=worker, zone in (a, b), !retired`. */
export function selectorText(selector: LabelSelector): string {
  const labels = Object.entries(selector.matchLabels ?? {})
    .sort(([a], [b]) => compareText(a, b))
    .map(([key, value]) => `${key}=${value}`);
  const expressions = (selector.matchExpressions ?? []).map((requirement) => {
    const values = (requirement.values ?? []).join(", ");
    switch (requirement.operator) {
      case "In":
        return `${requirement.key} in (${values})`;
      case "NotIn":
        return `${requirement.key} notin (${values})`;
      case "Exists":
        return requirement.key;
      case "DoesNotExist":
        return `!${requirement.key}`;
      default:
        return `${requirement.key} ${requirement.operator} (${values})`;
    }
  });
  const parts = [...labels, ...expressions];
  return parts.length === 0 ? "every host" : parts.join(", ");
}
