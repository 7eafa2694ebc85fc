/**
 * Git's lock as the cluster holds it: one Allocation object per cluster, each parsed once when its
 * informer delivers it, and the lock reassembled from the parsed entries (decision 0041). An event
 * costs the parse of one object and a sort of the entries, not a parse of every allocation.
 */
import { compareText, issue, type Issue } from "../synth/issue.ts";
import { compareLockEntries, EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock, LockEntry } from "../synth/model/lock.ts";

/** Reads allocation objects into the lock's entries (`lockFromAllocations`, synth/rules/allocation.ts). */
export type AllocationReader = (objects: readonly unknown[]) => {
  readonly lock: Lock;
  readonly issues: readonly Issue[];
};

/** What one Allocation gave. */
interface Parsed {
  readonly entries: readonly LockEntry[];
  readonly issues: readonly Issue[];
}

/** The lock an allocation set gives, and what is wrong with the set (any finding damages it). */
export interface AllocationLock {
  readonly lock: Lock;
  readonly issues: readonly Issue[];
}

/** The allocations known, by `namespace/name`, each parsed once. */
export class AllocationLedger {
  readonly #read: AllocationReader;
  readonly #parsed = new Map<string, Parsed>();
  #assembled: AllocationLock | undefined;

  constructor(read: AllocationReader) {
    this.#read = read;
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
    const { lock, issues } = this.#read([object]);
    this.#parsed.set(id, { entries: lock.entries, issues });
    this.#assembled = undefined;
  }

  /** Allocation `id` is gone. */
  delete(id: string): void {
    if (this.#parsed.delete(id)) this.#assembled = undefined;
  }

  /**
   * The lock: every allocation's entries in the lock file's order, and the findings. Each object is
   * checked on its own by the reader; what only the whole set can show, a host recorded in two
   * allocations, is checked here, and such a host is left out, as `parseLock` leaves out a host the
   * lock file records for two clusters.
   */
  result(): AllocationLock {
    if (this.#assembled) return this.#assembled;
    const issues: Issue[] = [];
    const holder = new Map<string, string>();
    const contested = new Set<string>();
    const ids = [...this.#parsed.keys()].sort(compareText);
    for (const id of ids) {
      const parsed = this.#parsed.get(id);
      if (parsed === undefined) continue;
      issues.push(...parsed.issues);
      for (const entry of parsed.entries) {
        const other = holder.get(entry.host);
        if (other === undefined) holder.set(entry.host, id);
        else if (other !== id && !contested.has(entry.host)) {
          contested.add(entry.host);
          issues.push(
            issue(
              "lock-invalid",
              "spec.hosts",
              `${entry.host} is allocated by Allocation ${other} and by Allocation ${id}: a host belongs to one cluster; restore the allocations from Git`,
              { object: `Allocation/${id}` },
            ),
          );
        }
      }
    }
    const entries = ids
      .flatMap((id) => this.#parsed.get(id)?.entries ?? [])
      .filter((entry) => !contested.has(entry.host));
    this.#assembled = {
      lock: entries.length === 0 ? EMPTY_LOCK : { entries: entries.sort(compareLockEntries) },
      issues,
    };
    return this.#assembled;
  }
}
