/**
 * The files of metalsynth's caches outside Git (the synth cache, the inventory cache, the plan
 * cache; decisions 0066, 0068 and 0070): each entry a file whose first bytes are the SHA-256 of the
 * rest, written whole or not at all, the least recently used going first. An entry that does not
 * check out is a miss; failing to write one is no error, since the next run evaluates again.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { deserialize } from "node:v8";

/** Where entries of one kind are kept, and how many. */
export interface CacheShelf {
  readonly directory: string;
  /** The entries' file name ending (`.json`); only files with it are counted and pruned. */
  readonly suffix: string;
  /** How many entries are kept, the least recently used going first. */
  readonly kept: number;
}

/** The SHA-256 of `content`, hex. */
export function sha256(content: string | Uint8Array): string {
  return createHash("sha256").update(content).digest("hex");
}

/** The body of entry `name` when it is whole (its checksum holds), marked used; undefined otherwise. */
export function readEntryBody(shelf: CacheShelf, name: string): Buffer | undefined {
  const file = path.join(shelf.directory, `${name}${shelf.suffix}`);
  let content: Buffer;
  try {
    content = readFileSync(file);
  } catch {
    return undefined;
  }
  const body = content.subarray(CHECKSUM_BYTES);
  const checksum = content.subarray(0, CHECKSUM_BYTES).toString("latin1");
  if (content.length < CHECKSUM_BYTES || checksum !== `${sha256(body)}\n`) return undefined;
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // A cache that can't be touched still answers.
  }
  return body;
}

/**
 * The value entry `name` holds, serialised with `node:v8` (the inventory's and the plan's entries):
 * undefined when the entry is not whole or not such a value.
 */
export function readSerialisedEntry(shelf: CacheShelf, name: string): unknown {
  const body = readEntryBody(shelf, name);
  if (body === undefined) return undefined;
  try {
    return deserialize(body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Writes entry `name` with its checksum and prunes the shelf. A body of bytes is written as it is,
 * never copied (an inventory's is 93 MiB at 100,000 hosts), to a temporary file whose checksum goes
 * in front last, and which is then renamed.
 */
export function writeEntry(shelf: CacheShelf, name: string, body: string | Uint8Array): void {
  const file = path.join(shelf.directory, `${name}${shelf.suffix}`);
  const temporary = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    mkdirSync(shelf.directory, { recursive: true, mode: 0o700 });
    fd = openSync(temporary, "w", 0o600);
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    writeAll(fd, bytes, CHECKSUM_BYTES);
    writeAll(fd, Buffer.from(`${sha256(bytes)}\n`), 0);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, file);
    prune(shelf);
  } catch {
    if (fd !== undefined) closeSync(fd);
    rmSync(temporary, { force: true });
  }
}

/** The checksum in front of an entry: 64 hex digits and a newline. */
const CHECKSUM_BYTES = 65;

/** Writes all of `bytes` at `position`. */
function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length;)
    done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** Leaves the shelf's most recently used entries. */
function prune(shelf: CacheShelf): void {
  const entries = readdirSync(shelf.directory)
    .filter((name) => name.endsWith(shelf.suffix))
    .map((name) => ({ name, used: statSync(path.join(shelf.directory, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const { name } of entries.slice(shelf.kept)) rmSync(path.join(shelf.directory, name), { force: true });
}
