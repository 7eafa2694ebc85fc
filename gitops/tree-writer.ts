import {
  copyFile,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from "node:fs/promises";
import { type Dirent } from "node:fs";
import path from "node:path";
import { UsageError } from "./errors.ts";
import { LOCK_FILE } from "../synth/plan/lock.ts";

/** How a written tree differs from the one it replaced. Every list is sorted. */
export interface TreeChange {
  /** Paths that did not exist before. */
  readonly added: string[];
  /** Paths whose bytes differ (or that were not a regular file before). */
  readonly changed: string[];
  /** Paths that existed before and are not in the new tree. */
  readonly removed: string[];
  /** How many files were kept as they were (same inode, same mtime). */
  readonly unchanged: number;
}

/** Options of {@link writeTree}. */
export interface WriteTreeOptions {
  /**
   * Test-only failure injection (the filesystem edge docs/style.md allows): throw once this many files
   * have been placed in the temporary tree, as if the process died there. With `0` the run fails
   * right after the temporary directory is created; with exactly the number of files in the tree it
   * fails later, between moving the old tree aside and moving the new one in, which exercises the
   * restore path. Larger values never fire.
   * @default undefined (never fails on purpose)
   */
  readonly failAfter?: number;
  /**
   * Test-only: called where {@link failAfter} is checked, with the number of files placed, so a test
   * can stop the process there (a signal) and look at what it leaves behind.
   * @default undefined
   */
  readonly onPlaced?: (placed: number) => void;
  /**
   * Which files of the previous tree metalsynth wrote. A file about to be removed that it did not
   * write (a user's notes, a hand-added manifest, a symbolic link) makes the write refuse with a
   * {@link UsageError} instead of deleting it. Without it every file of a tree holding the lock is
   * taken as metalsynth's.
   * @default undefined
   */
  readonly owns?: (file: string, content: Buffer) => boolean;
}

/** Suffix counter so two writes from one process never pick the same temporary name. */
let sequence = 0;

/**
 * Replaces the directory `out` so it holds exactly `files` (relative POSIX paths → UTF-8 content),
 * atomically (docs/contract.md §6.2, §8 "nothing lost"): the new tree is built in a hidden sibling directory and
 * swapped in with two renames, so an interrupted run leaves the previous tree as it was.
 *
 * Unchanged files are hard-linked from the previous tree (copied with their timestamps where the file
 * system has no hard links), so Git and editors see only the files that really changed; when nothing
 * changed, `out` is not touched at all.
 *
 * The tree is owned by metalsynth: files in `out` that are not in `files` are removed. To keep that
 * from wiping an unrelated directory, `out` must be missing, empty, or hold `metalsynth.lock.yaml`,
 * and a non-empty `files` must contain `metalsynth.lock.yaml` too, so the next run recognises the tree.
 *
 * Temporary directories carry the writer's process id: those of processes that no longer run (a
 * `kill -9`) are removed at the start of the next write; SIGINT, SIGTERM and SIGHUP during a write
 * remove this run's own and put the previous tree back before the process ends.
 *
 * @throws UsageError when `out` is not a directory or is a non-empty directory metalsynth did not
 *   write (a mistyped `--out`: exit 2).
 * @throws Error when a path in `files` is not a plain relative POSIX path or the lock file is missing
 *   (a bug in the caller), and for any file system error, after cleaning up.
 */
export async function writeTree(
  out: string,
  files: ReadonlyMap<string, string>,
  options: WriteTreeOptions = {},
): Promise<TreeChange> {
  const wanted = checkPaths(files);
  const target = await resolveOut(out);
  const parent = path.dirname(target);
  const base = path.basename(target);
  await mkdir(parent, { recursive: true });
  await recoverInterruptedSwap(parent, base, target);

  const previous = await scanTree(target);
  if (previous) refuseForeign(target, previous);
  if (previous && options.owns) await refuseUnowned(out, target, previous, files, options.owns);
  const same = previous ? await unchangedFiles(target, previous, files) : new Set<string>();
  const change = compare(previous, wanted, same);
  if (previous && isEmptyChange(change) && !hasLeftovers(previous, wanted)) return change;

  const temporary = path.join(parent, `.${base}.tmp-${process.pid}-${sequence}`);
  const aside = path.join(parent, `.${base}.old-${process.pid}-${sequence}`);
  sequence += 1;
  const failAfter = options.failAfter;
  const interruption = deferEndingSignals();
  // Every file operation ends at one of these points: a signal received meanwhile, or an injected
  // failure, stops the write there, and the ordinary failure path below cleans up.
  const checkpoint = (placed: number): void => {
    options.onPlaced?.(placed);
    interruption.throwIfReceived();
    if (placed === failAfter) throw new Error(`writeTree: injected failure after ${placed} file(s)`);
  };

  try {
    await mkdir(temporary);
    let placed = 0;
    if (wanted.length > 0) checkpoint(placed);
    // Only the deepest directories need creating: recursive mkdir makes their parents, and tolerates
    // a parent that a concurrent sibling made first.
    await forEachConcurrently(leafDirectories(wanted), (dir) =>
      mkdir(path.join(temporary, ...dir.split("/")), { recursive: true }),
    );
    await forEachConcurrently(wanted, async (file) => {
      const destination = path.join(temporary, ...file.split("/"));
      if (same.has(file)) await keep(path.join(target, ...file.split("/")), destination);
      else await writeFile(destination, files.get(file) ?? "", "utf8");
      placed += 1;
      if (placed < wanted.length) checkpoint(placed);
    });

    if (previous) {
      await rename(target, aside);
      try {
        checkpoint(wanted.length);
        await rename(temporary, target);
      } catch (error) {
        await rename(aside, target).catch((restoreError: unknown) => {
          throw new Error(
            `writing ${target} failed (${String(error)}) and so did putting the previous tree back; ` +
              `it is at ${aside}, and the next run moves it back`,
            { cause: restoreError },
          );
        });
        throw error;
      }
    } else {
      checkpoint(wanted.length);
      await rename(temporary, target);
    }
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    interruption.end();
    throw error;
  }

  // The new tree is in place; an old tree that cannot be removed now is only clutter, and the next
  // run's stale-directory cleanup removes it, so this must not turn a successful write into a failure.
  await rm(aside, { recursive: true, force: true }).catch(() => undefined);
  interruption.end();
  return change;
}

/**
 * Refuses a write to (or, with `action`, another use of) `out` before anything is read or rendered (a mistyped `--out /tmp` is told at
 * once, not after a whole render): `out` must be missing, an empty directory, or a directory with
 * metalsynth's lock file.
 *
 * @throws UsageError otherwise.
 */
export async function checkOutput(out: string, action = "replace"): Promise<void> {
  const target = await resolveOut(out);
  const names = await readdir(target).catch((error: unknown): string[] => {
    if (isErrorCode(error, "ENOENT")) return [];
    throw error;
  });
  if (names.length > 0 && !names.includes(LOCK_FILE)) throw foreignTree(target, action);
}

/** The signals that end a CLI run; a write in progress cleans up before the process goes. */
const ENDING_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Thrown at the next checkpoint of a write after an ending signal arrived. */
class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`writeTree: interrupted by ${signal}; the previous tree is kept`);
  }
}

/**
 * Holds back SIGINT, SIGTERM and SIGHUP while a write runs. The signal is only recorded:
 * `throwIfReceived` turns it into an {@link Interrupted} failure at the write's next checkpoint, so
 * cleanup runs on the ordinary failure path, after the file operations in flight have settled.
 * (Deleting the temporary tree from the handler itself raced those operations: a file created
 * while it was being removed left it behind.) `end` stops listening and, if a signal came, ends
 * the process the way that signal would have, unless someone else listens for it too.
 */
function deferEndingSignals(): { throwIfReceived(): void; end(): void } {
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    received ??= signal;
  };
  for (const signal of ENDING_SIGNALS) process.on(signal, onSignal);
  return {
    throwIfReceived() {
      if (received) throw new Interrupted(received);
    },
    end() {
      for (const signal of ENDING_SIGNALS) process.off(signal, onSignal);
      if (received && process.listenerCount(received) === 0) process.kill(process.pid, received);
    },
  };
}

/**
 * Every regular file below `out`, keyed by relative POSIX path in sorted order; an empty map when
 * `out` does not exist. Symbolic links and other special files are not followed or listed.
 *
 * @throws UsageError when `out` exists and is not a directory.
 */
export async function readTree(out: string): Promise<Map<string, string>> {
  const target = await resolveOut(out);
  const scanned = await scanTree(target);
  const contents = new Map<string, string>();
  await forEachConcurrently([...(scanned?.files ?? [])], async (file) => {
    contents.set(file, await readFile(inTree(target, file), "utf8"));
  });
  // Read in completion order; returned in the sorted path order of the scan.
  const tree = new Map<string, string>();
  for (const file of scanned?.files ?? []) tree.set(file, contents.get(file) ?? "");
  return tree;
}

/**
 * What is in an existing output directory: its paths, not its contents. A region's tree is hundreds
 * of MiB; each file is read when it is compared, and let go (decision 0044).
 */
interface ScannedTree {
  /** Regular files, in sorted path order. */
  readonly files: Set<string>;
  /** Symbolic links, sockets, FIFOs: never part of a tree metalsynth writes. */
  readonly specials: Set<string>;
  /** Directories, for spotting ones the new tree no longer needs. */
  readonly directories: Set<string>;
}

/** `out` with symbolic links resolved (so the swap replaces the real directory); refuses non-directories. */
async function resolveOut(out: string): Promise<string> {
  const info = await stat(out).catch((error: unknown) => {
    if (isErrorCode(error, "ENOENT")) return undefined;
    throw error;
  });
  if (!info) return path.resolve(out);
  if (!info.isDirectory()) {
    throw new UsageError(
      `${out} exists and is not a directory; metalsynth writes its output tree there, pass another --out`,
    );
  }
  return realpath(out);
}

async function scanTree(target: string): Promise<ScannedTree | undefined> {
  let entries: Dirent[];
  try {
    entries = await readdir(target, { recursive: true, withFileTypes: true });
  } catch (error) {
    if (isErrorCode(error, "ENOENT")) return undefined;
    throw error;
  }
  const specials = new Set<string>();
  const directories = new Set<string>();
  const relative = (entry: Dirent): string =>
    path.relative(target, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
  const regular = entries
    .filter((entry) => entry.isFile())
    .map(relative)
    .sort();
  for (const entry of entries) {
    if (entry.isDirectory()) directories.add(relative(entry));
    else if (!entry.isFile()) specials.add(relative(entry));
  }
  return { files: new Set(regular), specials, directories };
}

/** Guards an unrelated directory (a mistyped `--out`) against being replaced wholesale. */
function refuseForeign(target: string, previous: ScannedTree): void {
  const empty = previous.files.size + previous.specials.size + previous.directories.size === 0;
  if (empty || previous.files.has(LOCK_FILE)) return;
  throw foreignTree(target);
}

function foreignTree(target: string, action = "replace"): UsageError {
  return new UsageError(
    `${target} is not empty and has no ${LOCK_FILE}, so metalsynth did not write it; refusing to ` +
      `${action} it. Pass another --out, or empty the directory if it really is metalsynth's output`,
    { showHelp: false },
  );
}

/** How many paths a refusal names before it only counts. */
const LISTED_PATHS = 5;

/** Refuses to delete files of the previous tree that metalsynth did not write. */
async function refuseUnowned(
  out: string,
  target: string,
  previous: ScannedTree,
  files: ReadonlyMap<string, string>,
  owns: (file: string, content: Buffer) => boolean,
): Promise<void> {
  const unowned = [...previous.specials].filter((file) => !files.has(file));
  for (const file of previous.files)
    if (!files.has(file) && !owns(file, await readFile(inTree(target, file)))) unowned.push(file);
  unowned.sort();
  if (unowned.length === 0) return;
  const listed = unowned.slice(0, LISTED_PATHS).join(", ");
  const more = unowned.length > LISTED_PATHS ? ` and ${unowned.length - LISTED_PATHS} more` : "";
  throw new UsageError(
    `${out} holds files metalsynth did not write (${listed}${more}), and writing the new tree would ` +
      `delete them; move them out of ${out} (metalsynth owns that directory) or delete them, then run again`,
    { showHelp: false },
  );
}

/** Validates the keys of `files` and returns them sorted. */
function checkPaths(files: ReadonlyMap<string, string>): string[] {
  const sorted = [...files.keys()].sort();
  for (const file of sorted) {
    const segments = file.split("/");
    const bad = segments.some((segment) => segment === "" || segment === "." || segment === "..");
    if (bad || /[\\\0]/.test(file)) {
      throw new Error(`writeTree: ${JSON.stringify(file)} is not a relative POSIX path inside the tree`);
    }
  }
  const all = new Set(sorted);
  // Each directory once, not once per file below it: a region's tree has 40,000 files in 10,000.
  for (const directory of new Set(parentDirectories(sorted).flatMap(withAncestors))) {
    if (all.has(directory)) {
      const file = sorted.find((other) => other.startsWith(`${directory}/`));
      throw new Error(`writeTree: ${directory} is both a file and a directory of ${file}`);
    }
  }
  if (sorted.length > 0 && !all.has(LOCK_FILE)) {
    throw new Error(
      `writeTree: the tree has no ${LOCK_FILE}, so the next run could not recognise it as ours`,
    );
  }
  return sorted;
}

/**
 * The files of `files` whose bytes the previous tree holds already. Each previous file is read and
 * compared on its own, so memory holds a few files at a time, not the old tree beside the new.
 */
async function unchangedFiles(
  target: string,
  previous: ScannedTree,
  files: ReadonlyMap<string, string>,
): Promise<Set<string>> {
  const same = new Set<string>();
  const kept = [...files.keys()].filter((file) => previous.files.has(file));
  await forEachConcurrently(kept, async (file) => {
    const before = await readFile(inTree(target, file));
    const text = files.get(file) ?? "";
    if (before.length === Buffer.byteLength(text) && before.equals(Buffer.from(text, "utf8"))) same.add(file);
  });
  return same;
}

function compare(
  previous: ScannedTree | undefined,
  wanted: readonly string[],
  same: ReadonlySet<string>,
): TreeChange {
  const added: string[] = [];
  const changed: string[] = [];
  let unchanged = 0;
  for (const file of wanted) {
    if (same.has(file)) unchanged += 1;
    else if (previous?.files.has(file) || previous?.specials.has(file)) changed.push(file);
    else added.push(file);
  }
  const wantedSet = new Set(wanted);
  const removed = [...(previous?.files ?? []), ...(previous?.specials ?? [])]
    .filter((file) => !wantedSet.has(file))
    .sort();
  return { added, changed, removed, unchanged };
}

/** The file system path of `file` (a relative POSIX path) in the tree at `target`. */
function inTree(target: string, file: string): string {
  return path.join(target, ...file.split("/"));
}

/**
 * Whether the old tree has directories the new one does not need (empty ones, or ones emptied by
 * removals): invisible to Git, but "exactly `files`" means they go, which takes a swap.
 */
function hasLeftovers(previous: ScannedTree, wanted: readonly string[]): boolean {
  const needed = new Set(parentDirectories(wanted).flatMap(withAncestors));
  return [...previous.directories].some((dir) => !needed.has(dir));
}

function isEmptyChange(change: TreeChange): boolean {
  return change.added.length + change.changed.length + change.removed.length === 0;
}

/** The distinct parent directories of `files`, sorted. */
function parentDirectories(files: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const file of files) {
    const slash = file.lastIndexOf("/");
    if (slash > 0) dirs.add(file.slice(0, slash));
  }
  return [...dirs].sort();
}

/** Parent directories that are not themselves a parent of another one. */
function leafDirectories(files: readonly string[]): string[] {
  const dirs = parentDirectories(files);
  const inner = new Set(dirs.flatMap((dir) => withAncestors(dir).slice(0, -1)));
  return dirs.filter((dir) => !inner.has(dir));
}

function withAncestors(dir: string): string[] {
  const segments = dir.split("/");
  return segments.map((_, index) => segments.slice(0, index + 1).join("/"));
}

/**
 * Puts the previous version of an unchanged file into the new tree as the same file: a hard link keeps
 * inode, bytes and mtime, so `git status` does not even need to re-read it. Some file systems
 * (FAT, some network mounts) have no hard links; a copy with the old timestamps does nearly as well.
 */
async function keep(source: string, destination: string): Promise<void> {
  try {
    await link(source, destination);
  } catch (error) {
    if (!isErrorCode(error, "EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "EMLINK")) throw error;
    await copyFile(source, destination);
    const info = await lstat(source);
    await utimes(destination, info.atime, info.mtime);
  }
}

/**
 * Cleans up after a run that died: a process killed between the two renames leaves no `out` and the
 * previous tree at `.<base>.old-*`, which is moved back so the comparison (and anyone looking) sees
 * it; every other `.<base>.tmp-*` or `.<base>.old-*` sibling is debris and is removed.
 */
async function recoverInterruptedSwap(parent: string, base: string, target: string): Promise<void> {
  const names = await readdir(parent);
  // Another process still writing owns its directories; only those of dead processes are debris.
  const stale = (prefix: string) =>
    names.filter((name) => name.startsWith(prefix) && !isRunning(writerPid(name.slice(prefix.length))));
  const temporaries = stale(`.${base}.tmp-`);
  const asides = stale(`.${base}.old-`);
  const outExists = names.includes(base);
  if (!outExists && asides.length > 0) {
    // Several leftovers mean several crashes; the most recently moved one is the latest tree.
    const moved = await Promise.all(
      asides.map(async (name) => ({ name, ctime: (await lstat(path.join(parent, name))).ctimeMs })),
    );
    moved.sort((a, b) => b.ctime - a.ctime || a.name.localeCompare(b.name));
    const latest = moved[0];
    if (latest) {
      await rename(path.join(parent, latest.name), target);
      asides.splice(asides.indexOf(latest.name), 1);
    }
  }
  for (const name of [...temporaries, ...asides]) {
    await rm(path.join(parent, name), { recursive: true, force: true });
  }
}

/** The process id in a `<pid>-<sequence>` suffix; undefined when it has none. */
function writerPid(suffix: string): number | undefined {
  const match = /^(\d+)-\d+$/.exec(suffix);
  return match ? Number(match[1]) : undefined;
}

/** Whether a process with this id runs (this one included); signal 0 only checks. */
function isRunning(pid: number | undefined): boolean {
  if (pid === undefined || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isErrorCode(error, "EPERM"); // it runs, as another user
  }
}

/**
 * How many file operations run at once: enough to keep libuv's thread pool busy (a rendered tree has
 * thousands of small files; one at a time costs seconds), few enough to stay far below open-file limits.
 */
const CONCURRENCY = 32;

/**
 * Runs `action` over `items` with bounded concurrency. On failure it stops starting new work but
 * waits for what is already running before rejecting with the first error, so the caller's cleanup
 * never races a write into the directory it is removing.
 */
async function forEachConcurrently<T>(
  items: readonly T[],
  action: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next] as T;
      next += 1;
      try {
        await action(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  if (failure) throw failure.error;
}

function isErrorCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && "code" in error && codes.includes(String(error.code));
}
