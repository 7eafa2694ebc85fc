/**
 * A site evaluated once and kept, so a change to one CR is evaluated at the cost of what that CR can
 * reach, not of the site (docs/contract.md §8: the webhook answers in milliseconds with a hub's clusters loaded).
 *
 * - The checks across CRs (`siteModel`) run on the CRs the changed one shares something with: its
 *   cluster, the names its references use, its NodePorts, the names its cluster renders. Each of those checks groups CRs by exactly
 *   such a value, so on that subset it finds what it finds on the whole site about those CRs.
 * - Planning runs again from the evaluation's trace (`plan/engine/replan.ts`), re-placing only the turns
 *   the change reaches, whether CRs changed or BareMetalHosts did.
 */
import { clusterKey, type ClusterKey } from "./cluster-key.ts";
import { pushTo } from "./group.ts";
import { compareIssues, compareText, type Issue } from "./issue.ts";
import type { Inventory } from "./inventory/inventory.ts";
import type { Lock } from "./model/lock.ts";
import type { SitePlan } from "./plan/model.ts";
import type { SiteModel } from "./model/site.ts";
import { planClusters, tracePlan, type PlanClusters, type PlanTrace } from "./plan/plan-site.ts";
import {
  replanClusters,
  replanFindings,
  replanHosts,
  TraceIndex,
  type ClusterChange,
} from "./plan/engine/replan.ts";
import { renderedNames } from "./rules/names.ts";
import { siteModel } from "./site/model.ts";
import { resourceKey } from "./site/resources.ts";
import type { AnyResource, InvalidResource } from "./model/resource.ts";

/** Scope values naming a cluster start so; the rest is its key. */
const CLUSTER_SCOPE = "cluster\u0000";
/** Scope values naming what a cluster renders start so (`name-clash`). */
const RENDERED_SCOPE = "rendered\u0000";

/** What a snapshot is taken of: the site's CRs (sorted by key), the inventory, the lock. */
export interface SnapshotInput {
  readonly resources: readonly AnyResource[];
  readonly inventory: Inventory;
  readonly lock: Lock;
  /** CRs that failed their schema: references to them are not reported as references to nothing. */
  readonly invalid?: readonly InvalidResource[];
}

/** The site's evaluation, and how to evaluate one change to it. */
export class SiteSnapshot {
  /** Every finding of the site as it is, sorted (docs/contract.md §7). */
  readonly issues: readonly Issue[];
  /** The site's plan (the turns placed again by {@link withResources} explain nothing). */
  readonly plan: SitePlan;
  readonly #input: SnapshotInput;
  /** What the checks across CRs found: they read no inventory, so a change of hosts keeps it. */
  readonly #evaluated: { readonly model: SiteModel; readonly issues: readonly Issue[] };
  readonly #index: TraceIndex;
  /** Scope value (see {@link scopesOf}) → the CRs sharing it, in site order. */
  readonly #scoped = new Map<string, AnyResource[]>();
  /** CR → its scope values. */
  readonly #scopes: ReadonlyMap<AnyResource, readonly string[]>;
  /** CR → its position in the site, to keep site order in a subset. */
  readonly #position = new Map<AnyResource, number>();

  /** The inventory the site was evaluated against. */
  get inventory(): Inventory {
    return this.#input.inventory;
  }

  /** The site's CRs that fail their schema. */
  get invalid(): readonly InvalidResource[] {
    return this.#input.invalid ?? [];
  }

  /** Evaluates the whole site. */
  static of(input: SnapshotInput): SiteSnapshot {
    const evaluated = siteModel(input.resources, input.invalid);
    const trace = tracePlan({ model: evaluated.model, inventory: input.inventory, lock: input.lock });
    return new SiteSnapshot(input, evaluated, trace);
  }

  private constructor(
    input: SnapshotInput,
    evaluated: { model: SiteModel; issues: readonly Issue[] },
    trace: PlanTrace,
  ) {
    const { model, issues: modelIssues } = evaluated;
    this.#input = input;
    this.#evaluated = evaluated;
    this.#index = new TraceIndex(trace, input.inventory, input.lock);
    this.issues = [...modelIssues, ...trace.issues].sort(compareIssues);
    this.plan = trace.plan;
    input.resources.forEach((resource, position) => this.#position.set(resource, position));
    this.#scopes = scopesOf(model);
    for (const [resource, values] of this.#scopes) {
      for (const value of values) pushTo(this.#scoped, value, resource);
    }
    // Found by a glue's namespace, for its "found:" list; they don't reach the namespace themselves.
    for (const { resource } of [...model.provisionings, ...model.softwares]) {
      pushTo(this.#scoped, namespaceScope(resource.namespace), resource);
    }
  }

  /**
   * The snapshot of this site with `resources` (sorted by key) and `invalid` as its CRs, the
   * inventory and lock unchanged (a CR added, changed or deleted in the cluster or the site's
   * files). The checks across CRs run again on the whole site, which is cheap; planning runs again
   * only for the clusters whose CRs changed, and for what their new claims reach.
   */
  withResources(resources: readonly AnyResource[], invalid: readonly InvalidResource[] = []): SiteSnapshot {
    const before = new Map(this.#input.resources.map((resource) => [resource.key, resource]));
    const evaluated = siteModel(resources, invalid);
    const scopes = scopesOf(evaluated.model);
    const touched = new Set<string>();
    const touch = (values: readonly string[] | undefined) => {
      for (const value of values ?? []) if (value.startsWith(CLUSTER_SCOPE)) touched.add(value);
    };
    for (const resource of resources) {
      const old = before.get(resource.key);
      before.delete(resource.key);
      if (old !== undefined && sameObject(old, resource)) continue;
      touch(scopes.get(resource));
      if (old !== undefined) touch(this.#scopes.get(old));
    }
    for (const removed of before.values()) touch(this.#scopes.get(removed));
    const clusters = planClusters(evaluated.model);
    const trace =
      touched.size === 0
        ? this.#index.trace
        : replanClusters(this.#index, clusterChanges(touched, clusters)).complete();
    return new SiteSnapshot({ ...this.#input, resources, invalid }, evaluated, trace);
  }

  /**
   * The snapshot of this site against `inventory` (BareMetalHosts changed, joined or left), the CRs
   * and lock unchanged. Planning runs again only for what the changed hosts reach (`replanHosts`):
   * the turns that read them, and the clusters their MACs, lock entries and SIP labels name.
   */
  withInventory(inventory: Inventory): SiteSnapshot {
    if (inventory.sameHosts(this.inventory)) return this;
    const trace = replanHosts(this.#index, inventory).complete();
    return new SiteSnapshot({ ...this.#input, inventory }, this.#evaluated, trace);
  }

  /**
   * The findings of the site with `resource` in place of every CR of its key that can differ from
   * {@link issues}: all of those about `resource`, and those about any CR or cluster the change
   * reaches, except the warnings of clusters placed again only because the change moved hosts they
   * held (see `replanFindings`). An error not among them is the same as before the change.
   */
  change(resource: AnyResource): Issue[] {
    const sameKey = (known: InvalidResource) =>
      resourceKey(known.kind, known.namespace, known.name) === resource.key;
    const invalid = this.invalid.filter((known) => !sameKey(known));
    const alone = siteModel([resource], invalid);
    const replaced = this.#scoped.get(keyScope(resource.key)) ?? [];
    const touched = new Set(scopesOf(alone.model).get(resource) ?? [keyScope(resource.key)]);
    for (const known of replaced) for (const value of this.#scopes.get(known) ?? []) touched.add(value);
    // A known CR of the key that fails its schema leaves its cluster too (a fix may relabel it).
    for (const known of this.invalid.filter(sameKey)) {
      if (known.cluster !== undefined) touched.add(clusterScope(clusterKey(known.namespace, known.cluster)));
    }
    // What a cluster renders depends on all its CRs (a Provisioning makes its Software's ConfigMap
    // real), so the names its known CRs render relate too.
    for (const value of [...touched]) {
      if (scopedCluster(value) === undefined) continue;
      for (const known of this.#scoped.get(value) ?? []) {
        for (const scope of this.#scopes.get(known) ?? [])
          if (scope.startsWith(RENDERED_SCOPE)) touched.add(scope);
      }
    }
    // A glue's "no Provisioning … (found: …)" lists the namespace's CRs of that kind.
    if (resource.kind === "Cluster") touched.add(namespaceScope(resource.namespace));
    const related = new Set<AnyResource>();
    for (const value of touched) for (const known of this.#scoped.get(value) ?? []) related.add(known);
    // In site order, the CR under review where `knownResources` order puts it: by key.
    const subset = [...related]
      .filter((known) => known.key !== resource.key)
      .sort((a, b) => (this.#position.get(a) ?? 0) - (this.#position.get(b) ?? 0));
    const at = subset.findIndex((known) => compareText(known.key, resource.key) > 0);
    subset.splice(at === -1 ? subset.length : at, 0, resource);
    // A CR nothing else shares a scope with (a new cluster's) is its own subset, evaluated already.
    const { model, issues } = subset.length === 1 ? alone : siteModel(subset, invalid);

    // The subset holds every CR of each cluster the change touches, so its groups are the site's.
    return [...issues, ...replanFindings(this.#index, clusterChanges(touched, planClusters(model)))];
  }
}

/** What `clusters` has under each cluster of `scopes` (scope values; the others are skipped). */
function clusterChanges(scopes: Iterable<string>, clusters: PlanClusters): Map<ClusterKey, ClusterChange> {
  const changes = new Map<ClusterKey, ClusterChange>();
  for (const value of scopes) {
    const key = scopedCluster(value);
    if (key === undefined) continue;
    const bpa = clusters.bpaByKey.get(key);
    const sip = clusters.sipByKey.get(key);
    changes.set(key, { ...(bpa && { bpa }), ...(sip && { sip }) });
  }
  return changes;
}

/** Whether two CRs of one key say the same (a feed that reads everything again makes new objects). */
function sameObject(a: AnyResource, b: AnyResource): boolean {
  return a === b || JSON.stringify(a.object) === JSON.stringify(b.object);
}

function clusterScope(key: ClusterKey): string {
  return `${CLUSTER_SCOPE}${key}`;
}

/** The cluster a scope value names, if it names one. */
function scopedCluster(value: string): ClusterKey | undefined {
  // Only clusterScope writes this prefix, and it writes a ClusterKey after it: nothing to parse.
  return value.startsWith(CLUSTER_SCOPE) ? (value.slice(CLUSTER_SCOPE.length) as ClusterKey) : undefined;
}

function keyScope(key: string): string {
  return `key\u0000${key}`;
}

function namespaceScope(namespace: string): string {
  return `namespace\u0000${namespace}`;
}

/**
 * The values each CR of `model` shares with the CRs a check across CRs relates it to: its key
 * (`duplicate-object`), its cluster (`cluster-ref`: one Provisioning/Software/glue a cluster, a
 * Software needs a Provisioning; planning: the SIPCluster and BPA CRs of one key), the names glue
 * references use, its NodePorts (`node-port`), and what its cluster renders (`name-clash`).
 */
function scopesOf(model: SiteModel): Map<AnyResource, string[]> {
  const scopes = new Map<AnyResource, string[]>();
  const add = (resource: AnyResource, ...values: string[]) => {
    const list = scopes.get(resource) ?? [keyScope(resource.key)];
    list.push(...values);
    scopes.set(resource, list);
  };
  const cluster = (namespace: string, name: string | undefined) =>
    name === undefined ? [] : [clusterScope(clusterKey(namespace, name))];
  const named = (kind: string, namespace: string, name: string | undefined) =>
    name === undefined ? [] : [`name\u0000${resourceKey(kind, namespace, name)}`];
  // Provisionings and Softwares are what glue references name.
  for (const { resource, cluster: label } of [...model.provisionings, ...model.softwares]) {
    const { kind, namespace, name } = resource;
    add(resource, ...cluster(namespace, label), ...named(kind, namespace, name));
  }
  for (const glue of model.glues) {
    const { namespace } = glue.resource;
    add(
      glue.resource,
      ...cluster(namespace, glue.cluster),
      ...named("Provisioning", namespace, glue.provisioningCR),
      ...named("Software", namespace, glue.softwareCR),
    );
  }
  for (const sip of model.sips) {
    add(
      sip.resource,
      ...cluster(sip.resource.namespace, sip.resource.name),
      ...[...new Set(sip.ports.map((port) => port.port))].map((port) => `port\u0000${port}`),
    );
  }
  // What a cluster renders relates every CR of the cluster: a CR reached through a shared name
  // brings its cluster's other CRs, without which it would render nothing (or be an orphan Software).
  const rendered = new Map<string, Set<string>>();
  for (const { what, source } of renderedNames(model, true)) {
    const scope = clusterScope(source.cluster);
    rendered.set(scope, (rendered.get(scope) ?? new Set()).add(`${RENDERED_SCOPE}${what}`));
  }
  for (const [resource, values] of scopes) {
    const names = values.flatMap((value) => [...(rendered.get(value) ?? [])]);
    if (names.length > 0) add(resource, ...new Set(names));
  }
  return scopes;
}
