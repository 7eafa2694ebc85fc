/**
 * The files of metalsynth's caches outside Git (the synth cache, the inventory cache; decisions 0066
 * and 0068): each entry a file whose first bytes are the SHA-256 of the rest, written whole or not
 * at all, the least recently used going first. An entry that does not check out is a miss; failing
 * to write one is no error, since the next run evaluates again.
 */
import { createHash } from "node:crypto";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

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
  // 64 hex digits and a newline, then the body.
  const body = content.subarray(65);
  if (content.length < 65 || content[64] !== 0x0a || content.toString("latin1", 0, 64) !== sha256(body))
    return undefined;
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // A cache that can't be touched still answers.
  }
  return body;
}

/** Writes entry `name` with its checksum (to a temporary file, then renamed) and prunes the shelf. */
export function writeEntry(shelf: CacheShelf, name: string, body: string | Uint8Array): void {
  const file = path.join(shelf.directory, `${name}${shelf.suffix}`);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(shelf.directory, { recursive: true, mode: 0o700 });
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${sha256(body)}\n`), Buffer.from(body)]), {
      mode: 0o600,
    });
    renameSync(temporary, file);
    prune(shelf);
  } catch {
    rmSync(temporary, { force: true });
  }
}

/** Leaves the shelf's most recently used entries. */
function prune(shelf: CacheShelf): void {
  const entries = readdirSync(shelf.directory)
    .filter((name) => name.endsWith(shelf.suffix))
    .map((name) => ({ name, used: statSync(path.join(shelf.directory, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const { name } of entries.slice(shelf.kept)) rmSync(path.join(shelf.directory, name), { force: true });
}
