import { spawn } from "node:child_process";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { GitError, simpleGit, type SimpleGit } from "simple-git";
import { errorCode } from "./files.ts";

/**
 * The Git operations `metalsynth commit` needs, over simple-git. Every pathspec-taking command runs
 * with `--literal-pathspecs`, so a site directory whose name contains `*` or `[` still means itself.
 */

/** A work tree and the simple-git instance rooted at its top level. */
export interface Repository {
  /** Absolute path of the work tree's top level (symbolic links resolved, as git reports it). */
  readonly root: string;
  readonly git: SimpleGit;
}

/**
 * A git command that exited non-zero. simple-git on its own only fails a command that also wrote to
 * stderr, so a hook that exits 1 silently would pass for a successful commit; every command here
 * fails on its exit code instead, and the few queries that answer "no" with exit 1 say so.
 */
export class GitExitError extends GitError {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(undefined, message);
  }
}

/** The repository `dir` is in, or undefined when it is not inside a Git work tree. */
export async function openRepository(dir: string): Promise<Repository | undefined> {
  let root: string;
  try {
    root = (await simpleGit(dir).revparse(["--show-toplevel"])).trim();
  } catch (error) {
    if (error instanceof GitError) return undefined;
    throw error;
  }
  const git = simpleGit({
    baseDir: root,
    errors: (_, result) => {
      if (result.exitCode === 0) return undefined;
      const output = Buffer.concat([...result.stdOut, ...result.stdErr])
        .toString("utf8")
        .trim();
      return new GitExitError(output || `git exited with code ${result.exitCode}`, result.exitCode);
    },
  });
  return root === "" ? undefined : { root, git };
}

/** The output of a query that exits 1 to say "none" (`--quiet` lookups), or undefined then. */
async function query(repo: Repository, args: readonly string[]): Promise<string | undefined> {
  try {
    const output = (await repo.git.raw([...args])).trim();
    return output === "" ? undefined : output;
  } catch (error) {
    if (error instanceof GitExitError && error.exitCode === 1) return undefined;
    throw error;
  }
}

/** The checked-out branch (`main`), also on an unborn branch; undefined when HEAD is detached. */
export async function currentBranch(repo: Repository): Promise<string | undefined> {
  return query(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
}

/** The commit HEAD points at, or undefined on an unborn branch (a repository without commits). */
export async function headCommit(repo: Repository): Promise<string | undefined> {
  return resolve(repo, "HEAD");
}

/** The object a revision names, or undefined when it names none. */
async function resolve(repo: Repository, revision: string): Promise<string | undefined> {
  return query(repo, ["rev-parse", "--verify", "--quiet", revision]);
}

/**
 * Paths below `pathspecs` (relative to the root) that differ from HEAD in the index or the work tree,
 * untracked files included, ignored files not. Sorted, relative to the root.
 */
export async function changedPaths(repo: Repository, pathspecs: readonly string[]): Promise<string[]> {
  const status = await repo.git.raw([
    "--literal-pathspecs",
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--",
    ...pathspecs,
  ]);
  const paths: string[] = [];
  const fields = status.split("\0");
  for (let index = 0; index < fields.length; index++) {
    const field = fields[index] ?? "";
    if (field.length < 4) continue;
    paths.push(field.slice(3));
    // A rename or copy is followed by its source path, which is a change too.
    if (field[0] === "R" || field[0] === "C") paths.push(fields[++index] ?? "");
  }
  return paths.filter((file) => file !== "").sort();
}

/**
 * The regular files of directory `dir` (relative to the root) in `commit`, keyed by their path
 * relative to `dir`; an empty map when the commit has no such directory. Symbolic links and
 * submodules are left out, as {@link readTree} leaves them out of a work tree.
 */
export async function committedFiles(
  repo: Repository,
  commit: string,
  dir: string,
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const tree = await resolve(repo, `${commit}:${dir}`);
  if (tree === undefined) return files;
  const listing = await repo.git.raw(["ls-tree", "-r", "-z", tree]);
  const blobs: { path: string; id: string }[] = [];
  for (const entry of listing.split("\0")) {
    const match = /^(\d+) blob ([0-9a-f]+)\t(.+)$/s.exec(entry);
    if (match && match[1] !== "120000") blobs.push({ id: match[2] ?? "", path: match[3] ?? "" });
  }
  const contents = await readBlobs(
    repo.root,
    blobs.map((blob) => blob.id),
  );
  blobs.forEach((blob, index) => files.set(blob.path, contents[index]?.toString("utf8") ?? ""));
  return files;
}

/**
 * The content of `file` (relative to the root) in `commit`, or undefined when the commit has no such
 * file (or no such commit exists: an unborn branch).
 */
export async function committedFile(
  repo: Repository,
  commit: string,
  file: string,
): Promise<string | undefined> {
  const blob = await resolve(repo, `${commit}:${file}`);
  if (blob === undefined) return undefined;
  const [content] = await readBlobs(repo.root, [blob]);
  return content?.toString("utf8");
}

/**
 * Blob contents in one `git cat-file --batch` process: a rendered tree has thousands of files, and a
 * process per file would cost seconds. simple-git has no way to feed a command's standard input,
 * hence the direct spawn.
 */
async function readBlobs(root: string, ids: readonly string[]): Promise<Buffer[]> {
  if (ids.length === 0) return [];
  const child = spawn("git", ["cat-file", "--batch"], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  const exit = new Promise<number | null>((done, fail) => {
    child.on("error", fail);
    child.on("close", done);
  });
  child.stdin.end(`${ids.join("\n")}\n`);
  const code = await exit;
  if (code !== 0) throw new Error(`git cat-file --batch failed: ${Buffer.concat(stderr).toString("utf8")}`);

  const output = Buffer.concat(stdout);
  const blobs: Buffer[] = [];
  let position = 0;
  for (const id of ids) {
    const headerEnd = output.indexOf(0x0a, position);
    const header = output.subarray(position, headerEnd).toString("utf8");
    const size = /^[0-9a-f]+ blob (\d+)$/.exec(header)?.[1];
    if (headerEnd < 0 || size === undefined)
      throw new Error(`git cat-file --batch: no blob ${id} (${header})`);
    const start = headerEnd + 1;
    blobs.push(output.subarray(start, start + Number(size)));
    position = start + Number(size) + 1;
  }
  return blobs;
}

/** How a push ended. */
export type PushResult =
  | { readonly status: "pushed" }
  /** Someone else pushed first (or while we pushed): fetch, integrate and try again. */
  | { readonly status: "raced"; readonly detail: string }
  /** Anything else (a hook declined, no such remote, no access): trying again will not help. */
  | { readonly status: "failed"; readonly detail: string };

/**
 * Pushes HEAD to `refs/heads/<branch>` of `remote`. A race shows up in two ways: `[rejected] (fetch
 * first | non-fast-forward)` when the other push landed before ours started, and `[remote rejected]
 * (failed to update ref)` ("cannot lock ref … is at X but expected Y") when it landed while ours was
 * in flight.
 */
export async function pushHead(repo: Repository, remote: string, branch: string): Promise<PushResult> {
  try {
    await repo.git.push(remote, `HEAD:refs/heads/${branch}`);
    return { status: "pushed" };
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    const message = error.message.trim();
    // With --porcelain (which simple-git adds) each refused ref is a line starting with "!".
    const refused = message.split("\n").filter((line) => line.startsWith("!"));
    const raced = refused.some((line) =>
      /\[rejected\] \((fetch first|non-fast-forward)\)|\[remote rejected\] \((failed to update ref|cannot lock ref)/.test(
        line,
      ),
    );
    const detail = refused.length > 0 ? refused.map((line) => line.split("\t").pop()).join("; ") : message;
    return raced ? { status: "raced", detail } : { status: "failed", detail: message };
  }
}

/** Fetches `refs/heads/<branch>` of `remote` and returns the commit it points at. */
export async function fetchBranch(repo: Repository, remote: string, branch: string): Promise<string> {
  await repo.git.fetch(remote, `refs/heads/${branch}`);
  const tip = await resolve(repo, "FETCH_HEAD");
  if (tip === undefined) throw new Error(`git fetch ${remote} ${branch} left no FETCH_HEAD`);
  return tip;
}

/** Commits of `range` (`a..b`), newest first; with `merges`, only merge commits. */
export async function commitsIn(repo: Repository, range: string, merges = false): Promise<string[]> {
  const output = await repo.git.raw(["rev-list", ...(merges ? ["--merges"] : []), range]);
  return output.split("\n").filter((line) => line !== "");
}

/**
 * Moves the checked-out `branch` from commit `from` (HEAD) to `to` and updates the files that differ
 * between the two, the way `git switch` carries local changes: an index entry of a path the two
 * commits agree on is kept as it is (staged changes stay staged, partly staged files stay partly
 * staged), and a path they disagree on that has local changes stops the move with nothing touched.
 * `git reset --keep` refuses the same local edits but resets every index entry, so it would unstage
 * what the user staged outside `rendered/`. `read-tree` runs no hooks, unlike `git checkout -B`.
 */
export async function moveBranch(repo: Repository, branch: string, from: string, to: string): Promise<void> {
  if (from === to) return;
  await repo.git.raw(["read-tree", "-m", "-u", from, to]);
  await repo.git.raw(["update-ref", "-m", `metalsynth: move ${branch}`, `refs/heads/${branch}`, to, from]);
}

/** The index file as it was at one moment, to be put back byte for byte ({@link restoreIndex}). */
export interface SavedIndex {
  /** The index file (`GIT_INDEX_FILE` when set, else the one in the Git directory). */
  readonly file: string;
  /** Its bytes; undefined when there was none (a new repository with nothing staged yet). */
  readonly bytes: Buffer | undefined;
}

/**
 * Reads the index as it is now. A copy of the file keeps what no tree of Git's can: files staged in
 * part, intent-to-add entries (`git add -N`), skip-worktree and assume-unchanged bits.
 */
export async function saveIndex(repo: Repository): Promise<SavedIndex> {
  const file = path.resolve(repo.root, (await repo.git.raw(["rev-parse", "--git-path", "index"])).trim());
  try {
    return { file, bytes: await readFile(file) };
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { file, bytes: undefined };
    throw error;
  }
}

/**
 * Puts a {@link saveIndex} copy back. It is written as Git writes the index, to `index.lock` first
 * and renamed over it, so a Git command running meanwhile (an editor's `git status`) is refused
 * the lock instead of reading a half-written file. Entries whose files changed since are
 * re-checked by content on Git's next look: their recorded stat data no longer matches.
 */
export async function restoreIndex(saved: SavedIndex): Promise<void> {
  if (saved.bytes === undefined) {
    await rm(saved.file, { force: true });
    return;
  }
  const lock = `${saved.file}.lock`;
  await writeFile(lock, saved.bytes, { flag: "wx" });
  await rename(lock, saved.file);
}

/** The value of a Git configuration key in effect for the repository, or undefined when unset. */
export async function configValue(repo: Repository, key: string): Promise<string | undefined> {
  return query(repo, ["config", "--get", key]);
}
