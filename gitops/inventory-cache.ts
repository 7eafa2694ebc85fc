/**
 * The inventory cache (decision 0068): the hosts and findings a read of the inventory gave, kept
 * beside the synth cache under the inventory's own digest (site-digest.ts), so a synth whose specs
 * or settings changed, and the inventory did not, takes them instead of parsing it again.
 *
 * An entry is what the loader built, serialised with `node:v8`: plain data (hosts, hosts set aside,
 * findings), which Node.js reads back in a tenth of the time parsing and building took. The digest
 * covers metalsynth's code and Node.js's version, so an entry is read only by the code that wrote
 * it, in the serialisation format it wrote.
 */
import path from "node:path";
import { serialize } from "node:v8";
import type { Issue } from "../synth/issue.ts";
import type { Host, SetAsideHost } from "../synth/inventory/host.ts";
import { Inventory } from "../synth/inventory/inventory.ts";
import type { InventoryResult } from "../synth/inventory/load.ts";
import { readSerialisedEntry, writeEntry, type CacheShelf } from "./cache-files.ts";
import type { InventorySeen } from "./site-digest.ts";

/** How a read of the inventory uses the inventory cache. */
export interface InventoryCacheUse {
  /** The synth cache's directory (the entries are in `inventory/` there). */
  readonly directory: string;
  /** The inventory as the site digest saw it: the entry is looked for under its digest. */
  readonly seen: InventorySeen;
  /**
   * Whether what a read builds on a miss is kept. A first render (no lock) keeps nothing: the
   * entry's buffer would add to the highest peak of memory a synth has, and the run after it reads
   * a lock no run has read, so it reads the inventory again anyway and keeps it then.
   */
  readonly keep: boolean;
}

/** One entry: what the loader built from the inventory whose digest it names. */
interface InventoryEntry {
  readonly digest: string;
  readonly hosts: readonly Host[];
  readonly setAside: readonly SetAsideHost[];
  readonly issues: readonly Issue[];
}

/**
 * Where the inventory cache of the synth cache in `directory` keeps its entries: two of them, since
 * one is a site's whole inventory (9 MiB at 10,000 hosts) and a second serves going back and forth
 * between two snapshots.
 */
function shelf(directory: string): CacheShelf {
  return { directory: path.join(directory, "inventory"), suffix: ".v8", kept: 2 };
}

/** The inventory read under `digest`, from the cache in `directory`; undefined when it holds none whole. */
export function cachedInventory(directory: string, digest: string): InventoryResult | undefined {
  const entry = readSerialisedEntry(shelf(directory), digest);
  if (!isEntryOf(entry, digest)) return undefined;
  return { inventory: new Inventory(entry.hosts, entry.setAside), issues: [...entry.issues] };
}

/**
 * Keeps what reading the inventory under `digest` gave, serialised whole and written without a
 * copy. One buffer (93 MiB at 100,000 hosts) goes back to the system once it is collected; the same
 * hosts serialised a thousand at a time left the process holding 120 MiB more after a collection,
 * and a copy with the checksum in front doubled the buffer.
 */
export function storeInventory(directory: string, digest: string, read: InventoryResult): void {
  const { inventory, issues } = read;
  const entry: InventoryEntry = { digest, hosts: inventory.hosts, setAside: inventory.setAside, issues };
  writeEntry(shelf(directory), digest, serialize(entry));
}

/**
 * Whether `value` is the entry of `digest`. Its bytes are those {@link storeInventory} wrote (their
 * checksum holds), and the digest covers metalsynth's own code, so it was written by this very
 * code: checking the digest and the shape's top is enough.
 */
function isEntryOf(value: unknown, digest: string): value is InventoryEntry {
  if (typeof value !== "object" || value === null) return false;
  const entry = value as Record<string, unknown>;
  return (
    entry["digest"] === digest &&
    Array.isArray(entry["hosts"]) &&
    Array.isArray(entry["setAside"]) &&
    Array.isArray(entry["issues"])
  );
}
