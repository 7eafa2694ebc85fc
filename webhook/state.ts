/**
 * What the webhook knows right now, assembled from its feeds (inventory and site files, or the API
 * server), and whether that knowledge is good enough to serve (`/readyz`).
 */
import { Inventory } from "../synth/inventory/inventory.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock } from "../synth/model/lock.ts";
import { readResources } from "../synth/site/resources.ts";
import type { AnyResource, InvalidResource } from "../synth/model/resource.ts";
import { NOT_LOADED } from "./admission.ts";
import type { InventoryStats } from "./metrics.ts";
import { AllocationReviewer } from "./allocation-review.ts";
import { DEFAULT_ALLOCATION_TRUST, type AllocationTrust } from "./allocation-trust.ts";
import { NO_DAMAGE, type LockDamage } from "./allocations.ts";
import { SiteReviewer, knownResources, objectDocument, type Reviewer } from "./site-review.ts";
import { SiteSnapshot } from "../synth/snapshot.ts";

/** Whether something is fit to serve, and what an operator should know about it. */
export interface Readiness {
  readonly ready: boolean;
  /** One line per feed, for `/readyz` and the logs. */
  readonly detail: string;
}

/** A source of knowledge that keeps the state current: files being watched, or informers. */
export interface Feed {
  /** Whether its data is loaded and current, and why not. */
  status(): Readiness;
  /** Stops watching. */
  close(): Promise<void>;
}

/** The parts a feed can set; each replaces the previous value of that part. */
export interface KnowledgeUpdate {
  readonly inventory?: Inventory;
  /** CRs read from the site's specs. */
  readonly siteResources?: readonly AnyResource[];
  /**
   * With `siteResources`: the site's CRs that fail their schema (they replace the previous ones too).
   * @default none
   */
  readonly siteInvalid?: readonly InvalidResource[];
  /** CRs listed from the cluster. */
  readonly clusterResources?: readonly AnyResource[];
  /**
   * With `clusterResources`: the cluster's CRs that fail their schema (they replace the previous ones too).
   * @default none
   */
  readonly clusterInvalid?: readonly InvalidResource[];
  readonly lock?: Lock;
  /**
   * With `lock`: what is wrong with the allocation set it came from, and what that touches: the
   * CRs of damaged clusters are refused, contested hosts are given to no new node (decision 0056).
   * @default none
   */
  readonly damage?: LockDamage;
  /**
   * `Kind/namespace/name` of each CR the informers delivered (added, changed or deleted) → when (ms,
   * the state's clock): an admitted object held since no later is no longer held.
   * @default none
   */
  readonly delivered?: ReadonlyMap<string, number>;
}

/**
 * How long an admitted CREATE or UPDATE is held when no informer delivers it (milliseconds). An
 * informer delivers within a few hundred ms; the hold only has to outlast that, and a request the API
 * server refused after admitting it (another webhook, a conflict) blocks a retry no longer than this
 * (docs/decisions/0041-the-webhook-reviews-with-gits-allocations.md).
 */
export const HOLD_MS = 5000;

/** What the HTTP app needs of the state (tests substitute their own). */
export interface Knowledge {
  /** The reviewer for the current knowledge; `undefined` until an inventory is loaded. */
  reviewer(): Reviewer | undefined;
  /** The reviewer of Allocations (the `/validate/allocation` endpoint); `undefined` until loaded. */
  allocationReviewer(): Reviewer | undefined;
  /**
   * An admitted CREATE or UPDATE (not a dry run), as reviewed: later requests are reviewed as if it
   * were stored, until an informer delivers it or {@link HOLD_MS} pass. `at`: when it was admitted
   * (the state's clock; default now).
   */
  hold(object: unknown, at?: number): void;
  /**
   * Counts the holds so far: a review decided at one count and committed at another may have missed
   * an admission, and is decided again (decision 0056).
   */
  holdCount(): number;
  /** Whether {@link hold} holds anything (only where an informer delivers CRs). */
  readonly holdsAdmitted: boolean;
  /**
   * Whether `object` (admitted) is, in all a review reads of it (spec, labels, annotations), the
   * object the cluster already holds: nothing to hold (a GitOps agent's reconcile re-applying it).
   */
  unchanged(object: unknown): boolean;
  readiness(): Readiness;
  /**
   * Why a review now would not see what the sources hold (nothing loaded, a feed listing again or
   * failing, decision 0056); `undefined` when it would. Draining does not count: requests in flight
   * are still answered.
   */
  staleness(): string | undefined;
  inventoryStats(): InventoryStats;
}

/** A change of the state as it was applied: what a copy of it repeats. */
export type KnowledgeChange =
  | { readonly type: "update"; readonly parts: KnowledgeUpdate }
  | { readonly type: "hold"; readonly object: unknown; readonly at: number };

/** The webhook's current knowledge. Requests read it; feeds replace parts of it. */
export class WebhookState implements Knowledge {
  #inventory: Inventory | undefined;
  #siteResources: readonly AnyResource[] = [];
  #clusterResources: readonly AnyResource[] = [];
  #siteInvalid: readonly InvalidResource[] = [];
  #clusterInvalid: readonly InvalidResource[] = [];
  #lock: Lock = EMPTY_LOCK;
  #damage: LockDamage = NO_DAMAGE;
  /** The inventory with the contested hosts marked, made when the damage or the hosts change. */
  #reviewed:
    { readonly from: Inventory; readonly damage: LockDamage; readonly inventory: Inventory } | undefined;
  /** Admitted objects no informer has delivered yet, by key, with when they were admitted. */
  readonly #held = new Map<
    string,
    { readonly resource: AnyResource; readonly object: unknown; readonly at: number }
  >();
  #holds = 0;
  #byKey:
    { readonly from: readonly AnyResource[]; readonly map: ReadonlyMap<string, AnyResource> } | undefined;
  readonly #listeners = new Set<(change: KnowledgeChange) => void>();
  /** The evaluated site the reviewer reviews against; carried over while only CRs change. */
  #snapshot: SiteSnapshot | undefined;
  #reviewer: SiteReviewer | undefined;
  #currentAt: number | undefined;
  #draining = false;
  readonly #feeds: Feed[] = [];

  /**
   * @param clock wall clock in milliseconds.
   * @param holdsAdmitted whether {@link hold} holds anything: only a feed that watches the CRs
   *   (`--from-cluster`) ever delivers an admitted object, so with files alone a hold would only make
   *   the same CR conflict with its own retry for {@link HOLD_MS}.
   */
  constructor(
    private readonly clock: () => number = Date.now,
    readonly holdsAdmitted = false,
    /** Which Allocations the site's are: what the Allocation endpoint admits (decision 0056). */
    readonly trust: AllocationTrust = DEFAULT_ALLOCATION_TRUST,
  ) {}

  /**
   * Tells `listener` every change as it is applied, for a copy kept elsewhere (the review workers,
   * decision 0056); the result stops telling.
   */
  subscribe(listener: (change: KnowledgeChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Everything known now, as the changes that make a new copy equal to this state. */
  knowledge(): KnowledgeChange[] {
    return [
      {
        type: "update",
        parts: {
          ...(this.#inventory && { inventory: this.#inventory }),
          siteResources: this.#siteResources,
          siteInvalid: this.#siteInvalid,
          clusterResources: this.#clusterResources,
          clusterInvalid: this.#clusterInvalid,
          lock: this.#lock,
          damage: this.#damage,
        },
      },
      ...[...this.#held.values()].map(({ object, at }) => ({ type: "hold", object, at }) as const),
    ];
  }

  #tell(change: KnowledgeChange): void {
    for (const listener of this.#listeners) listener(change);
  }

  /** Registers a feed: the state is ready only while every feed is. */
  addFeed(feed: Feed): void {
    this.#feeds.push(feed);
  }

  /**
   * Replaces parts of the knowledge; the next request reviews against the result. A change of CRs or
   * of BareMetalHosts carries the evaluated site over (`SiteSnapshot.withResources` and
   * `withInventory`: only what the change reaches is planned again). A changed lock is evaluated
   * anew, on the next request, so a burst of updates costs one evaluation.
   */
  update(parts: KnowledgeUpdate): void {
    const lockChanged = parts.lock !== undefined && !sameLock(parts.lock, this.#lock);
    const inventoryChanged = parts.inventory !== undefined && !this.#inventory?.sameHosts(parts.inventory);
    if (parts.inventory) {
      if (inventoryChanged) this.#inventory = parts.inventory;
      this.#currentAt = this.clock();
    }
    if (parts.siteResources) {
      this.#siteResources = parts.siteResources;
      this.#siteInvalid = parts.siteInvalid ?? [];
    }
    if (parts.clusterResources) {
      this.#clusterResources = parts.clusterResources;
      this.#clusterInvalid = parts.clusterInvalid ?? [];
    }
    let released = false;
    for (const [key, at] of parts.delivered ?? []) {
      const held = this.#held.get(key);
      if (held !== undefined && at >= held.at) released = this.#held.delete(key);
    }
    const damageBefore = this.#damage;
    if (parts.lock) this.#damage = parts.damage ?? NO_DAMAGE;
    const contestChanged = !sameContest(damageBefore, this.#damage);
    this.#lock = parts.lock ?? this.#lock;
    if (lockChanged) this.#snapshot = undefined;
    if (this.#snapshot && (inventoryChanged || contestChanged))
      this.#snapshot = this.#snapshot.withInventory(this.#reviewedInventory());
    if (parts.siteResources || parts.clusterResources || released) this.#resourcesChanged();
    this.#reviewer = undefined;
    if (this.#listeners.size > 0) {
      // A copy needs the inventory only when it changed, not each sign that it is current.
      const rest: KnowledgeUpdate = { ...parts, inventory: undefined };
      this.#tell({ type: "update", parts: inventoryChanged ? parts : rest });
    }
  }

  hold(object: unknown, at: number = this.clock()): void {
    if (!this.holdsAdmitted) return;
    const [resource] = readResources([objectDocument(object, "admitted")]).resources;
    // The reviewer read it as this kind already; one it could not read was not admitted.
    if (resource === undefined) return;
    this.#held.set(resource.key, { resource, object, at });
    this.#holds += 1;
    this.#resourcesChanged();
    this.#tell({ type: "hold", object, at });
  }

  holdCount(): number {
    return this.#holds;
  }

  unchanged(object: unknown): boolean {
    const [resource] = readResources([objectDocument(object, "admitted")]).resources;
    const known = resource && this.#clusterByKey().get(resource.key);
    return resource !== undefined && known !== undefined && reviewedText(known) === reviewedText(resource);
  }

  #clusterByKey(): ReadonlyMap<string, AnyResource> {
    if (this.#byKey?.from !== this.#clusterResources)
      this.#byKey = {
        from: this.#clusterResources,
        map: new Map(this.#clusterResources.map((resource) => [resource.key, resource])),
      };
    return this.#byKey.map;
  }

  /** The CRs known changed: the evaluated site is carried over, the reviewer made anew. */
  #resourcesChanged(): void {
    if (this.#snapshot)
      this.#snapshot = this.#snapshot.withResources(this.#knownResources(), this.#knownInvalid());
    this.#reviewer = undefined;
  }

  /** Lets go of admitted objects held longer than {@link HOLD_MS}. */
  #expireHolds(): void {
    const now = this.clock();
    let expired = false;
    for (const [key, { at }] of this.#held) if (now - at >= HOLD_MS) expired = this.#held.delete(key);
    if (expired) this.#resourcesChanged();
  }

  /** The inventory was known to be current at `at` (ms) without changing, e.g. by a watch heartbeat. */
  confirmCurrent(at: number): void {
    if (this.#inventory) this.#currentAt = at;
  }

  reviewer(): SiteReviewer | undefined {
    if (this.#held.size > 0) this.#expireHolds();
    if (this.#reviewer === undefined && this.#inventory !== undefined) {
      this.#snapshot ??= SiteSnapshot.of({
        inventory: this.#reviewedInventory(),
        resources: this.#knownResources(),
        invalid: this.#knownInvalid(),
        lock: this.#lock,
      });
      this.#reviewer = new SiteReviewer(this.#snapshot, this.#damage);
    }
    return this.#reviewer;
  }

  allocationReviewer(): Reviewer | undefined {
    if (this.#inventory === undefined) return undefined;
    return new AllocationReviewer(this.#lock, this.trust);
  }

  /**
   * The inventory the reviews use: the feeds' hosts, the contested ones marked unavailable
   * (`contested`), so a CR that names one hears which Allocations disagree and no best fit picks it.
   */
  #reviewedInventory(): Inventory {
    const inventory = this.#inventory;
    if (inventory === undefined) throw new Error("no inventory to review against");
    const damage = this.#damage;
    if (damage.hosts.size === 0) return inventory;
    if (this.#reviewed?.from === inventory && this.#reviewed.damage === damage)
      return this.#reviewed.inventory;
    const hosts = inventory.hosts.map((host) => {
      const why = damage.hosts.get(host.id);
      if (why === undefined) return host;
      const reasons = [{ reason: "contested", fact: why } as const, ...(host.availability?.reasons ?? [])];
      return { ...host, availability: { ...host.availability, reasons } };
    });
    const reviewed = new Inventory(hosts, inventory.setAside);
    this.#reviewed = { from: inventory, damage, inventory: reviewed };
    return reviewed;
  }

  /** The site's and the cluster's CRs, an admitted object held in place of the one it replaces. */
  #knownResources(): AnyResource[] {
    if (this.#held.size === 0) return knownResources(this.#siteResources, this.#clusterResources);
    const held = [...this.#held.values()].map(({ resource }) => resource);
    const cluster = this.#clusterResources.filter((resource) => !this.#held.has(resource.key));
    return knownResources(this.#siteResources, [...cluster, ...held]);
  }

  #knownInvalid(): InvalidResource[] {
    return [...this.#siteInvalid, ...this.#clusterInvalid];
  }

  /** Shutting down: report not ready, so the endpoint is removed while in-flight requests finish. */
  startDraining(): void {
    this.#draining = true;
  }

  readiness(): Readiness {
    const statuses = this.#feeds.map((feed) => feed.status());
    const lines = statuses.map((status) => status.detail);
    if (this.#draining) lines.unshift("shutting down");
    return {
      ready: !this.#draining && this.#inventory !== undefined && statuses.every((status) => status.ready),
      detail: lines.join("\n"),
    };
  }

  staleness(): string | undefined {
    if (this.#inventory === undefined) return NOT_LOADED;
    const behind = this.#feeds.map((feed) => feed.status()).filter((status) => !status.ready);
    if (behind.length === 0) return undefined;
    return `metalsynth is not current with what it watches (${behind.map((status) => status.detail).join("; ")})`;
  }

  inventoryStats(): InventoryStats {
    return {
      damage: { allocations: this.#damage.allocations.size, hosts: this.#damage.hosts.size },
      hosts: this.#inventory?.size ?? 0,
      ageSeconds: this.#currentAt === undefined ? undefined : (this.clock() - this.#currentAt) / 1000,
    };
  }

  /** Stops every feed. */
  async close(): Promise<void> {
    await Promise.all(this.#feeds.map((feed) => feed.close()));
  }
}

/**
 * What a review reads of a CR, as text: its spec, labels and annotations but kubectl's last-applied
 * copy, which the informers do not keep (`trimmed`, cluster-feed.ts).
 */
function reviewedText(resource: AnyResource): string {
  const annotations = Object.fromEntries(
    Object.entries(resource.annotations).filter(
      ([key]) => key !== "kubectl.kubernetes.io/last-applied-configuration",
    ),
  );
  return JSON.stringify([resource.object.spec, resource.labels, annotations]);
}

/** Whether two damages contest the same hosts for the same reasons. */
function sameContest(a: LockDamage, b: LockDamage): boolean {
  if (a.hosts.size !== b.hosts.size) return false;
  for (const [host, why] of a.hosts) if (b.hosts.get(host) !== why) return false;
  return true;
}

/** Whether two locks record the same allocations (a feed reads the lock file again on any change). */
function sameLock(a: Lock, b: Lock): boolean {
  return a === b || JSON.stringify(a.entries) === JSON.stringify(b.entries);
}
