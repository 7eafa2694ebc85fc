/**
 * The mechanism of writing a tree of files: a directory replaced atomically, with crash recovery.
 * What may be replaced, and which files may go, is the caller's policy ({@link ReplaceDirOptions.checkPrevious};
 * for `rendered/`, `writeRendered` in render.ts).
 */
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
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { forEachConcurrently } from "./concurrency.ts";
import { UsageError } from "./errors.ts";
import { errorCode } from "./files.ts";

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

/**
 * What a directory about to be replaced holds: its paths, not its contents. A region's tree is
 * hundreds of MiB; each file is read when it is compared, and let go (decision 0044).
 */
export interface ExistingTree {
  /** The directory, with symbolic links resolved. */
  readonly dir: string;
  /** Regular files (relative POSIX paths), in sorted order. */
  readonly files: ReadonlySet<string>;
  /** Symbolic links, sockets, FIFOs: never part of a tree written here. */
  readonly specials: ReadonlySet<string>;
  /** Directories, for spotting ones the new tree no longer needs. */
  readonly directories: ReadonlySet<string>;
  /** The bytes of one of {@link files}. */
  read(file: string): Promise<Buffer>;
}

/** Options of {@link replaceDirAtomically}. */
export interface ReplaceDirOptions {
  /**
   * Aborting it stops the replacement at its next file operation: the temporary tree is removed, the
   * previous tree stays (or is put back), and the call rejects with the signal's reason.
   * @default undefined (runs to the end)
   */
  readonly signal?: AbortSignal;
  /**
   * The caller's policy of what may be replaced: called with what the directory holds, when it
   * exists, before anything is written; it throws to refuse.
   * @default undefined (any directory is replaced)
   */
  readonly checkPrevious?: (previous: ExistingTree) => Promise<void>;
  /**
   * Paths of the new tree whose bytes the caller has read from `dir` and found right, so they are
   * not in `files`: each stays the same file, without being read again. One that is not a regular
   * file of `dir` (a link to one) is copied in as one.
   * @default none
   */
  readonly kept?: ReadonlySet<string>;
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
   * can abort the signal there and look at what the replacement leaves behind.
   * @default undefined
   */
  readonly onPlaced?: (placed: number) => void;
}

/** Suffix counter so two writes from one process never pick the same temporary name. */
let sequence = 0;

/**
 * Replaces the directory `dir` so it holds exactly `files` (relative POSIX paths → UTF-8 content),
 * atomically (docs/contract.md §6.2, §8 "nothing lost"): the new tree is built in a hidden sibling directory and
 * swapped in with two renames, so an interrupted run leaves the previous tree as it was.
 *
 * Unchanged files are hard-linked from the previous tree (copied with their timestamps where the file
 * system has no hard links), so Git and editors see only the files that really changed; when nothing
 * changed, `dir` is not touched at all. Files in `dir` that are not in `files` are removed.
 *
 * Temporary directories carry the writer's process id: those of processes that no longer run (a
 * `kill -9`) are removed at the start of the next replacement, and a previous tree one of them had
 * moved aside is put back first.
 *
 * @throws UsageError when `dir` is not a directory.
 * @throws Error when a path in `files` is not a plain relative POSIX path (a bug in the caller),
 *   whatever {@link ReplaceDirOptions.checkPrevious} throws, the signal's reason when it is aborted,
 *   and any file system error, after cleaning up.
 */
export async function replaceDirAtomically(
  dir: string,
  files: ReadonlyMap<string, string>,
  options: ReplaceDirOptions = {},
): Promise<TreeChange> {
  const { signal } = options;
  signal?.throwIfAborted();
  const kept = options.kept ?? new Set<string>();
  const { wanted, needed } = checkPaths([...files.keys(), ...kept]);
  const target = await resolveDir(dir);
  const parent = path.dirname(target);
  const base = path.basename(target);
  await mkdir(parent, { recursive: true });
  await recoverInterruptedSwap(parent, base, target);

  const previous = await scanTree(target);
  if (previous) await options.checkPrevious?.(previous);
  const same = previous ? await unchangedFiles(previous, files, signal) : new Set<string>();
  for (const file of kept) {
    if (!previous) throw new Error(`replaceDirAtomically: ${file} is kept, but ${dir} has no tree`);
    if (previous.files.has(file)) same.add(file);
  }
  const change = compare(previous, wanted, same);
  if (previous && isEmptyChange(change) && !hasLeftovers(previous, needed)) return change;

  const temporary = path.join(parent, `.${base}.tmp-${process.pid}-${sequence}`);
  const aside = path.join(parent, `.${base}.old-${process.pid}-${sequence}`);
  const journal = path.join(parent, `.${base}.new-${process.pid}-${sequence}`);
  sequence += 1;
  const failAfter = options.failAfter;
  // Every file operation ends at one of these points: an abort meanwhile, or an injected failure,
  // stops the replacement there, and the ordinary failure path below cleans up after the operations
  // in flight have settled (cleaning up at once raced them: a file created while the temporary tree
  // was being removed left it behind).
  const checkpoint = (placed: number): void => {
    options.onPlaced?.(placed);
    signal?.throwIfAborted();
    if (placed === failAfter)
      throw new Error(`replaceDirAtomically: injected failure after ${placed} file(s)`);
  };

  const writes = wanted.filter((file) => !same.has(file));
  if (previous && isSmallPatch(previous, wanted, writes, change.removed)) {
    const content = (file: string) => files.get(file) ?? readFileSync(inTree(target, file));
    const patch = { writes, removed: change.removed, leftovers: leftovers(previous, needed) };
    await patchInPlace(target, temporary, journal, patch, content, checkpoint, signal);
    return change;
  }

  try {
    await mkdir(temporary);
    let placed = 0;
    if (wanted.length > 0) checkpoint(placed);
    // Only the deepest directories need creating: recursive mkdir makes their parents.
    await inTurns(leafDirectories(wanted), (leaf) =>
      mkdirSync(path.join(temporary, ...leaf.split("/")), { recursive: true }),
    );
    await forEachConcurrently(
      wanted.filter((file) => same.has(file)),
      async (file) => {
        await keep(inTree(target, file), inTree(temporary, file));
        placed += 1;
        if (placed < wanted.length) checkpoint(placed);
      },
      signal,
    );
    await inTurns(
      wanted.filter((file) => !same.has(file)),
      (file) => {
        writeFileSync(inTree(temporary, file), files.get(file) ?? readFileSync(inTree(target, file)));
        placed += 1;
        if (placed < wanted.length) checkpoint(placed);
      },
    );

    await hearSignals(signal);
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
    throw error;
  }

  // The new tree is in place; an old tree that cannot be removed now is only clutter, and the next
  // run's stale-directory cleanup removes it, so this must not turn a successful write into a failure.
  await rm(aside, { recursive: true, force: true }).catch(() => undefined);
  return change;
}

/**
 * How many files are written between two turns of the event loop, where a signal is heard: an
 * interrupted write stops within this many files.
 */
const FILES_PER_TICK = 16;

/**
 * Runs `action` over `items` synchronously, a tick of the event loop every {@link FILES_PER_TICK}.
 * Writing a tree's files one after another costs a third of the CPU of 32 promises at a time
 * (libuv's thread pool and a promise per call), and the file system is no faster for the
 * concurrency (decision 0019); what interrupts a write (a signal, an injected failure) is heard
 * between two files, through the action's checkpoint, and between two turns.
 */
async function inTurns<T>(items: readonly T[], action: (item: T) => void): Promise<void> {
  for (let index = 0; index < items.length; index++) {
    action(items[index]!);
    if (index % FILES_PER_TICK === FILES_PER_TICK - 1) await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Lets a signal that came while files were written synchronously be handled, then stops if it
 * aborted the write. Two turns: resumed inside the loop's poll phase, one would run before the
 * next poll, where a signal is handled.
 */
async function hearSignals(signal: AbortSignal | undefined): Promise<void> {
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
  signal?.throwIfAborted();
}

/** What {@link patchInPlace} changes in a tree: files to write, files to remove, directories left empty. */
interface Patch {
  readonly writes: readonly string[];
  readonly removed: readonly string[];
  readonly leftovers: readonly string[];
}

/** The journal's record of what to remove once its files are in place. */
const MANIFEST = ".manifest.json";
/** Where the journal keeps the new files, by their path in the tree. */
const JOURNAL_TREE = "tree";

/**
 * Whether a change is small enough to make in place (decision 0057): at most an eighth of the tree
 * is written or removed, and no path changes from file to directory or back. Building a whole new
 * tree for it would hard-link every other file and delete the old tree: at a region's 60,000 files,
 * seconds of system time for a cluster's three files.
 */
function isSmallPatch(
  previous: ExistingTree,
  wanted: readonly string[],
  writes: readonly string[],
  removed: readonly string[],
): boolean {
  if ((writes.length + removed.length) * 8 > wanted.length) return false;
  return writes.every(
    (file) =>
      !previous.directories.has(file) &&
      withAncestors(file)
        .slice(0, -1)
        .every((ancestor) => !previous.files.has(ancestor) && !previous.specials.has(ancestor)),
  );
}

/** Directories of the previous tree the new one does not need, deepest first. */
function leftovers(previous: ExistingTree, needed: ReadonlySet<string>): string[] {
  return [...previous.directories]
    .filter((directory) => !needed.has(directory))
    .sort((a, b) => b.split("/").length - a.split("/").length || (a < b ? 1 : -1));
}

/**
 * Changes the tree at `target` in place, as a journal: the new files are written into a hidden
 * sibling (`temporary`) with a manifest of what to remove, which is renamed to `journal` once whole
 * (the commit point), then each file is renamed into the tree and the removals done. An interruption
 * before the commit point leaves the previous tree as it was; after it the replacement finishes,
 * and a process killed there leaves the journal, which the next replacement finishes first
 * ({@link recoverInterruptedSwap}). Each file is replaced atomically; the tree as a whole, as with a
 * swap, is only whole again when the run (or the next) ends.
 */
async function patchInPlace(
  target: string,
  temporary: string,
  journal: string,
  patch: Patch,
  content: (file: string) => string | Buffer,
  checkpoint: (placed: number) => void,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    const tree = path.join(temporary, JOURNAL_TREE);
    await mkdir(tree, { recursive: true });
    let placed = 0;
    checkpoint(placed);
    await inTurns(leafDirectories(patch.writes), (leaf) =>
      mkdirSync(path.join(tree, ...leaf.split("/")), { recursive: true }),
    );
    await inTurns(patch.writes, (file) => {
      writeFileSync(inTree(tree, file), content(file));
      placed += 1;
      checkpoint(placed);
    });
    await writeFile(path.join(temporary, MANIFEST), JSON.stringify(patch));
    // The last moment to stop.
    await hearSignals(signal);
    await rename(temporary, journal);
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw error;
  }
  // Past the commit point: no abort stops it now; it is a few renames.
  await applyJournal(journal, target);
}

/** Puts a committed journal's files into `target`, does its removals and removes the journal. */
async function applyJournal(journal: string, target: string): Promise<void> {
  const manifest: unknown = JSON.parse(await readFile(path.join(journal, MANIFEST), "utf8"));
  const list = (key: string): string[] => {
    const value: unknown =
      typeof manifest === "object" && manifest !== null ? Reflect.get(manifest, key) : [];
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
  };
  const tree = path.join(journal, JOURNAL_TREE);
  // What is still in the journal: a run interrupted while applying it renamed the rest already.
  const entries = await readdir(tree, { recursive: true, withFileTypes: true }).catch(() => []);
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(tree, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"));
  await forEachConcurrently(leafDirectories(files), (leaf) =>
    mkdir(inTree(target, leaf), { recursive: true }),
  );
  await forEachConcurrently(files, (file) => rename(inTree(tree, file), inTree(target, file)));
  await forEachConcurrently(list("removed"), (file) => rm(inTree(target, file), { force: true }));
  for (const directory of list("leftovers")) {
    await rm(inTree(target, directory), { recursive: true, force: true });
  }
  await rm(journal, { recursive: true, force: true });
}

/**
 * Every regular file below `dir`, keyed by relative POSIX path in sorted order; an empty map when
 * `dir` does not exist. Symbolic links and other special files are not followed or listed.
 *
 * @throws UsageError when `dir` exists and is not a directory.
 */
export async function readTree(dir: string): Promise<Map<string, string>> {
  const target = await resolveDir(dir);
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
 * `dir` with symbolic links resolved (so the swap replaces the real directory).
 *
 * @throws UsageError when `dir` exists and is not a directory.
 */
export async function resolveDir(dir: string): Promise<string> {
  const info = await stat(dir).catch((error: unknown) => {
    if (isErrorCode(error, "ENOENT")) return undefined;
    throw error;
  });
  if (!info) return path.resolve(dir);
  if (!info.isDirectory()) {
    throw new UsageError(
      `${dir} exists and is not a directory; metalsynth writes its output tree there, pass another --out`,
    );
  }
  return realpath(dir);
}

/** What `target` holds; undefined when it does not exist. */
async function scanTree(target: string): Promise<ExistingTree | undefined> {
  const regular: string[] = [];
  const specials = new Set<string>();
  const directories = new Set<string>();
  // Synchronous and by hand: the promise API takes a promise per directory (a region's tree has
  // thousands), and the synchronous one's `recursive` follows links to directories.
  const walk = (directory: string, prefix: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const relative = `${prefix}${entry.name}`;
      if (entry.isFile()) regular.push(relative);
      else if (entry.isDirectory()) {
        directories.add(relative);
        walk(path.join(directory, entry.name), `${relative}/`);
      } else specials.add(relative);
    }
  };
  try {
    walk(target, "");
  } catch (error) {
    if (isErrorCode(error, "ENOENT") && regular.length + specials.size + directories.size === 0)
      return undefined;
    throw error;
  }
  regular.sort();
  return {
    dir: target,
    files: new Set(regular),
    specials,
    directories,
    read: (file) => readFile(inTree(target, file)),
  };
}

/** A path with an empty, `.` or `..` segment, a backslash or a NUL: not a plain relative POSIX path. */
const NOT_RELATIVE = /(?:^|\/)\.{0,2}(?:\/|$)|[\\\0]/;

/** Validates the paths of a tree: them sorted, and the directories that hold them. */
function checkPaths(files: readonly string[]): { wanted: string[]; needed: Set<string> } {
  const sorted = [...files].sort();
  for (const file of sorted) {
    if (NOT_RELATIVE.test(file)) {
      throw new Error(
        `replaceDirAtomically: ${JSON.stringify(file)} is not a relative POSIX path inside the tree`,
      );
    }
  }
  const all = new Set(sorted);
  const needed = directoriesOf(sorted);
  for (const directory of needed) {
    if (all.has(directory)) {
      const file = sorted.find((other) => other.startsWith(`${directory}/`));
      throw new Error(`replaceDirAtomically: ${directory} is both a file and a directory of ${file}`);
    }
  }
  return { wanted: sorted, needed };
}

/**
 * Every directory that holds one of `files`, at any depth. Each once, not once per file below it
 * (a region's tree has 60,000 files in 20,000): a file's ancestors are walked up only to the first
 * one already found.
 */
function directoriesOf(files: readonly string[]): Set<string> {
  const directories = new Set<string>();
  for (const file of files) {
    for (let slash = file.lastIndexOf("/"); slash > 0; slash = file.lastIndexOf("/", slash - 1)) {
      const directory = file.slice(0, slash);
      if (directories.has(directory)) break;
      directories.add(directory);
    }
  }
  return directories;
}

/**
 * The files of `files` whose bytes the previous tree holds already. Each previous file is read and
 * compared on its own, so memory holds a few files at a time, not the old tree beside the new.
 */
async function unchangedFiles(
  previous: ExistingTree,
  files: ReadonlyMap<string, string>,
  signal: AbortSignal | undefined,
): Promise<Set<string>> {
  const same = new Set<string>();
  const kept = [...files.keys()].filter((file) => previous.files.has(file));
  await forEachConcurrently(
    kept,
    async (file) => {
      const before = await previous.read(file);
      const text = files.get(file) ?? "";
      if (before.length === Buffer.byteLength(text) && before.equals(Buffer.from(text, "utf8")))
        same.add(file);
    },
    signal,
  );
  return same;
}

function compare(
  previous: ExistingTree | undefined,
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
function hasLeftovers(previous: ExistingTree, needed: ReadonlySet<string>): boolean {
  for (const directory of previous.directories) if (!needed.has(directory)) return true;
  return false;
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
 * Cleans up after a run that died: a process killed between the two renames leaves no `dir` and the
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
  // A committed journal is finished: the tree it was changing is at `target` (decision 0057).
  for (const name of stale(`.${base}.new-`)) await applyJournal(path.join(parent, name), target);
  const dirExists = names.includes(base);
  if (!dirExists && asides.length > 0) {
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

function isErrorCode(error: unknown, ...codes: string[]): boolean {
  const code = errorCode(error);
  return code !== undefined && codes.includes(code);
}
