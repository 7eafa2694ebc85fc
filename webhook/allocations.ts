/**
 * Git's lock as the cluster holds it: one Allocation object per cluster, each parsed once when its
 * informer delivers it, and the lock reassembled from the parsed entries (decision 0041). An event
 * costs the parse of one object and a sort of the entries, not a parse of every allocation.
 *
 * What is wrong with the set is confined to what it touches (decision 0056): a damaged Allocation
 * (one that fails the lock file's checks, or that the site's trust refuses, `allocation-trust.ts`)
 * marks its cluster damaged and every host it names contested; a host two sound Allocations list
 * (a pull request that freed it and the next that took it, synced in the other order) is contested
 * but damages neither. A contested host is taken by no new node until the set is whole again.
 */
import { compareText, issue, issueText, type Issue } from "../synth/issue.ts";
import { field, isRecord, stringField } from "../synth/inventory/raw.ts";
import { compareLockEntries, EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock, LockEntry } from "../synth/model/lock.ts";
import { distrust, type AllocationTrust } from "./allocation-trust.ts";

/** Reads allocation objects into the lock's entries (`lockFromAllocations`, synth/rules/allocation.ts). */
export type AllocationReader = (objects: readonly unknown[]) => {
  readonly lock: Lock;
  readonly issues: readonly Issue[];
};

/** What one Allocation gave. */
interface Parsed {
  /** Its sound entries: none when it is not trusted. */
  readonly entries: readonly LockEntry[];
  /** What is wrong with it: it is damaged when there is anything. */
  readonly issues: readonly Issue[];
  /** Every host its spec names, sound entry or not. */
  readonly named: readonly string[];
}

/**
 * What is wrong with an allocation set, and what it touches: the reviews refuse the CRs of damaged
 * clusters and give contested hosts to no new node; nothing else.
 */
export interface LockDamage {
  /** Damaged Allocations by id (`namespace/name`, their cluster's key), with their findings. */
  readonly allocations: ReadonlyMap<string, readonly Issue[]>;
  /** Contested hosts (`namespace/name`), with why, naming the Allocations. */
  readonly hosts: ReadonlyMap<string, string>;
  /** How many contested hosts only two sound Allocations list (in transit, no damage). */
  readonly inTransit: number;
}

/** No damage. */
export const NO_DAMAGE: LockDamage = { allocations: new Map(), hosts: new Map(), inTransit: 0 };

/** The lock an allocation set gives, and what is wrong with the set. */
export interface AllocationLock {
  readonly lock: Lock;
  /** Every finding, for the log. */
  readonly issues: readonly Issue[];
  readonly damage: LockDamage;
}

/** The allocations known, by `namespace/name`, each parsed once. */
export class AllocationLedger {
  readonly #read: AllocationReader;
  readonly #trust: AllocationTrust | undefined;
  readonly #parsed = new Map<string, Parsed>();
  #assembled: AllocationLock | undefined;

  /** `trust`: what the site declares; absent, every Allocation is trusted. */
  constructor(read: AllocationReader, trust?: AllocationTrust) {
    this.#read = read;
    this.#trust = trust;
  }

  /** How many allocations are known. */
  get size(): number {
    return this.#parsed.size;
  }

  /** The ids (`namespace/name`) of the allocations known. */
  ids(): IterableIterator<string> {
    return this.#parsed.keys();
  }

  /** Allocation `id` is now `object` (as the API server holds it, with kind and apiVersion). */
  set(id: string, object: unknown): void {
    const named = namedHosts(object);
    const why = this.#trust && distrust(object, this.#trust);
    if (why !== undefined) {
      const found = issue("lock-invalid", `Allocation/${id}`, `not trusted: ${why}`, {
        object: `Allocation/${id}`,
      });
      this.#parsed.set(id, { entries: [], issues: [found], named });
    } else {
      const { lock, issues } = this.#read([object]);
      this.#parsed.set(id, { entries: lock.entries, issues, named });
    }
    this.#assembled = undefined;
  }

  /** Allocation `id` is gone. */
  delete(id: string): void {
    if (this.#parsed.delete(id)) this.#assembled = undefined;
  }

  /**
   * The lock: every allocation's sound entries in the lock file's order, and the damage. Each object
   * is checked on its own by the reader; what only the whole set can show, a host recorded in two
   * allocations, is checked here, and such a host is left out, as `parseLock` leaves out a host the
   * lock file records for two clusters, and contested.
   */
  result(): AllocationLock {
    if (this.#assembled) return this.#assembled;
    const issues: Issue[] = [];
    const allocations = new Map<string, Issue[]>();
    const hosts = new Map<string, string>();
    const holders = new Map<string, string[]>();
    const ids = [...this.#parsed.keys()].sort(compareText);
    for (const id of ids) {
      const parsed = this.#parsed.get(id);
      if (parsed === undefined) continue;
      if (parsed.issues.length > 0) {
        issues.push(...parsed.issues);
        allocations.set(id, [...parsed.issues]);
        const first = parsed.issues[0];
        const why = first === undefined ? "" : `: ${issueText(first)}`;
        for (const host of parsed.named)
          if (!hosts.has(host)) hosts.set(host, `named by Allocation ${id}, which is damaged${why}`);
      }
      for (const entry of parsed.entries) {
        const holding = holders.get(entry.host);
        if (holding === undefined) holders.set(entry.host, [id]);
        else if (!holding.includes(id)) holding.push(id);
      }
    }
    let inTransit = 0;
    const contested = new Set<string>();
    for (const [host, holding] of holders) {
      if (holding.length < 2) continue;
      contested.add(host);
      const listed = holding.map((id) => `Allocation ${id}`).join(" and ");
      issues.push(
        issue(
          "lock-invalid",
          "spec.hosts",
          `${host} is allocated by ${listed}: a host belongs to one cluster; it is left to neither until one of them no longer lists it (a directory synced before the one that frees the host), or restore the allocations from Git`,
          { object: `Allocation/${holding[1] ?? ""}` },
        ),
      );
      if (hosts.has(host)) continue;
      inTransit += 1;
      hosts.set(host, `listed by ${listed}: in transit until one of them no longer lists it`);
    }
    const entries = ids
      .flatMap((id) => this.#parsed.get(id)?.entries ?? [])
      .filter((entry) => !contested.has(entry.host));
    this.#assembled = {
      lock: entries.length === 0 ? EMPTY_LOCK : { entries: entries.sort(compareLockEntries) },
      issues,
      damage: allocations.size === 0 && hosts.size === 0 ? NO_DAMAGE : { allocations, hosts, inTransit },
    };
    return this.#assembled;
  }
}

/** Every `spec.hosts[].host` string of an Allocation, whatever else is wrong with its entries. */
function namedHosts(object: unknown): string[] {
  const listed = field(field(object, "spec"), "hosts");
  if (!Array.isArray(listed)) return [];
  return listed.flatMap((item: unknown) => {
    const host = isRecord(item) ? stringField(item, "host") : undefined;
    return host === undefined || host === "" ? [] : [host];
  });
}
