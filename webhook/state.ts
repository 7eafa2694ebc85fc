/**
 * What the webhook knows right now, assembled from its feeds (inventory and site files, or the API
 * server), and whether that knowledge is good enough to serve (`/readyz`).
 */
import type { Inventory } from "../synth/inventory/inventory.ts";
import type { Issue } from "../synth/issue.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock } from "../synth/model/lock.ts";
import { readResources } from "../synth/site/resources.ts";
import type { AnyResource, InvalidResource } from "../synth/model/resource.ts";
import type { InventoryStats } from "./metrics.ts";
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
   * With `lock`: what is wrong with it (a damaged allocation set). While there is any, every
   * request is refused with it, as `metalsynth validate` refuses a damaged lock.
   * @default none
   */
  readonly lockIssues?: readonly Issue[];
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
  /**
   * An admitted CREATE or UPDATE (not a dry run), as reviewed: later requests are reviewed as if it
   * were stored, until an informer delivers it or {@link HOLD_MS} pass.
   */
  hold(object: unknown): void;
  readiness(): Readiness;
  inventoryStats(): InventoryStats;
}

/** The webhook's current knowledge. Requests read it; feeds replace parts of it. */
export class WebhookState implements Knowledge {
  #inventory: Inventory | undefined;
  #siteResources: readonly AnyResource[] = [];
  #clusterResources: readonly AnyResource[] = [];
  #siteInvalid: readonly InvalidResource[] = [];
  #clusterInvalid: readonly InvalidResource[] = [];
  #lock: Lock = EMPTY_LOCK;
  #lockIssues: readonly Issue[] = [];
  /** Admitted objects no informer has delivered yet, by key, with when they were admitted. */
  readonly #held = new Map<string, { readonly resource: AnyResource; readonly at: number }>();
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
    private readonly holdsAdmitted = false,
  ) {}

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
    if (parts.lock) this.#lockIssues = parts.lockIssues ?? [];
    this.#lock = parts.lock ?? this.#lock;
    if (lockChanged) this.#snapshot = undefined;
    if (this.#snapshot && inventoryChanged) this.#snapshot = this.#snapshot.withInventory(parts.inventory);
    if (parts.siteResources || parts.clusterResources || released) this.#resourcesChanged();
    this.#reviewer = undefined;
  }

  hold(object: unknown): void {
    if (!this.holdsAdmitted) return;
    const [resource] = readResources([objectDocument(object, "admitted")]).resources;
    // The reviewer read it as this kind already; one it could not read was not admitted.
    if (resource === undefined) return;
    this.#held.set(resource.key, { resource, at: this.clock() });
    this.#resourcesChanged();
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
        inventory: this.#inventory,
        resources: this.#knownResources(),
        invalid: this.#knownInvalid(),
        lock: this.#lock,
      });
      this.#reviewer = new SiteReviewer(this.#snapshot, this.#lockIssues);
    }
    return this.#reviewer;
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

  inventoryStats(): InventoryStats {
    return {
      hosts: this.#inventory?.size ?? 0,
      ageSeconds: this.#currentAt === undefined ? undefined : (this.clock() - this.#currentAt) / 1000,
    };
  }

  /** Stops every feed. */
  async close(): Promise<void> {
    await Promise.all(this.#feeds.map((feed) => feed.close()));
  }
}

/** Whether two locks record the same allocations (a feed reads the lock file again on any change). */
function sameLock(a: Lock, b: Lock): boolean {
  return a === b || JSON.stringify(a.entries) === JSON.stringify(b.entries);
}
