import { realpath, rm } from "node:fs/promises";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { GitError } from "simple-git";
import type { Issue } from "../synth/issue.ts";
import { UsageError } from "./errors.ts";
import { diffTrees, type RenderedDiff } from "./report/diff.ts";
import { commitMessage, type CommitMessage } from "./report/diff-format.ts";
import { writeRendered } from "./render.ts";
import { renderFromSite } from "./render-site.ts";
import { checkSite, SETTINGS_FILE } from "./site-reader.ts";
import {
  changedPaths,
  commitsIn,
  committedFiles,
  configValue,
  currentBranch,
  fetchBranch,
  headCommit,
  moveBranch,
  openRepository,
  pushHead,
  restoreIndex,
  saveIndex,
  type Repository,
  type SavedIndex,
} from "./git.ts";
import { readTree } from "./replace-dir.ts";

/** What `metalsynth commit` is asked to do. */
export interface CommitOptions {
  /** The site directory, anywhere inside a Git work tree. @default "." */
  readonly site?: string;
  /** Subject line of the commit. @default the clusters that changed ({@link commitMessage}) */
  readonly subject?: string;
  /** Author; each part defaults to `git.authorName` / `git.authorEmail` of `metalsynth.yaml`. */
  readonly author?: { readonly name?: string; readonly email?: string };
  /** Push after committing; undefined to only commit. */
  readonly push?: PushOptions;
  /** Progress and warnings, one line at a time (the CLI prints them on stderr). */
  readonly log?: (line: string) => void;
  /**
   * Runs each write of `rendered/` with a signal that an interruption aborts (the CLI: SIGINT,
   * SIGTERM, SIGHUP), so the write keeps the previous tree. Only the writes: a signal elsewhere ends
   * the run at once.
   * @default each write runs with no signal
   */
  readonly interruptible?: <T>(write: (signal?: AbortSignal) => Promise<T>) => Promise<T>;
}

/** Where and how hard to push. */
export interface PushOptions {
  /** Remote name or URL. @default "origin" */
  readonly remote?: string;
  /** Branch on the remote. @default the checked-out branch's name */
  readonly branch?: string;
  /**
   * How many times to fetch, re-render and push again after the push lost a race.
   * @default 3
   */
  readonly retries?: number;
}

/** How `metalsynth commit` ended. */
export type CommitOutcome =
  | {
      readonly kind: "done";
      readonly branch: string;
      /** The new commit; undefined when `rendered/` was already up to date. */
      readonly commit?: string;
      readonly message?: CommitMessage;
      readonly diff: RenderedDiff;
      /** Set when pushed (or found up to date on the remote). */
      readonly pushed?: { readonly remote: string; readonly branch: string; readonly retries: number };
      /** Warnings found while validating. */
      readonly issues: readonly Issue[];
    }
  /** The site has errors: nothing was committed or pushed. */
  | { readonly kind: "invalid"; readonly issues: readonly Issue[]; readonly afterFetch: boolean }
  /** The checkout is in a state commit must not work in; nothing was touched. */
  | { readonly kind: "refused"; readonly reason: string }
  /**
   * Committing or pushing failed (a hook, signing, a refused push, every retry lost); the branch,
   * the index and the work tree are as before the run, and the reason says so.
   */
  | { readonly kind: "failed"; readonly reason: string };

/** The site's inputs, relative to the site: a render is only reproducible from committed ones. */
const INPUTS = ["specs", "inventory", SETTINGS_FILE];

/** How many paths a refusal lists before it only counts. */
const LISTED_PATHS = 5;

/**
 * `metalsynth commit` (docs/contract.md §6.2): synth, stage `rendered/` only, commit with a per-cluster summary,
 * and with {@link CommitOptions.push} push, re-rendering on top of the remote after a lost race. See
 * docs/decisions/0010-commit-push-races.md for why each refusal and recovery is what it is.
 */
export async function commitSite(options: CommitOptions): Promise<CommitOutcome> {
  const site = options.site ?? ".";
  const log = options.log ?? (() => undefined);
  const siteReal = await realpath(site).catch(() => undefined);
  if (siteReal === undefined) throw new UsageError(`site directory not found: ${site}`);
  await checkSite(site);
  const repo = await openRepository(site);
  if (repo === undefined) {
    return refused(`${site} is not inside a Git work tree: run git init, or clone the site's repository`);
  }
  const branch = await currentBranch(repo);
  if (branch === undefined) {
    return refused(
      "HEAD is detached: check out the branch the rendered tree belongs on (git switch <branch>), so the commit does not end up on no branch",
    );
  }
  const siteInRepo = toPosix(path.relative(repo.root, siteReal));
  const place: Place = {
    repo,
    site,
    branch,
    out: path.join(site, "rendered"),
    outInRepo: path.posix.join(siteInRepo, "rendered"),
    write: options.interruptible ?? ((write) => write()),
    touched: false,
    index: await saveIndex(repo),
  };

  const inputs = await changedPaths(
    repo,
    INPUTS.map((input) => path.posix.join(siteInRepo, input)),
  );
  if (inputs.length > 0 && options.push) {
    return refused(
      `the site's inputs have uncommitted changes (${listPaths(inputs)}): pushing would publish a rendered ` +
        `tree that no commit on the remote reproduces. Commit them first (or leave out --push)`,
    );
  }
  if (inputs.length > 0) {
    log(`warning: rendering uncommitted inputs (${listPaths(inputs)}); they are not part of this commit`);
  }
  const renderedChanges = await changedPaths(repo, [place.outInRepo]);
  const start = await headCommit(repo);

  const remote = options.push?.remote ?? "origin";
  const target = options.push?.branch ?? branch;
  const maxRetries = options.push?.retries ?? 3;
  let retries = 0;
  try {
    for (;;) {
      const attempt = await renderAndCommit(place, options, retries === 0 ? renderedChanges : []);
      if (attempt.kind === "refused") return attempt;
      if (attempt.kind === "invalid") {
        await restore(place, start);
        return { ...attempt, afterFetch: retries > 0 };
      }
      const done = { ...attempt, branch };
      if (!options.push) return done;

      const pushed = await pushHead(repo, remote, target);
      if (pushed.status === "pushed") return { ...done, pushed: { remote, branch: target, retries } };
      if (pushed.status === "failed") {
        await restore(place, start);
        return failed(
          `git push ${remote} HEAD:${target} was refused:\n${pushed.detail}\n${asBefore(place)}. ` +
            `Once the remote would accept it, run metalsynth commit --push again`,
        );
      }
      if (start === undefined) {
        await restore(place, start);
        return failed(
          `${remote} already has branch ${target} and this repository has no commits yet; clone the ` +
            `repository (or git pull ${remote} ${target}) and run metalsynth commit there. ${asBefore(place)}`,
        );
      }
      if (retries >= maxRetries) {
        await restore(place, start);
        return failed(
          `push to ${remote} ${target} was rejected ${retries + 1} times (${pushed.detail}): others keep ` +
            `pushing first. ${asBefore(place)}. Run metalsynth commit --push again later, or with more --retries`,
        );
      }
      retries += 1;
      log(
        `push rejected (${pushed.detail}): fetching ${remote} ${target}, re-rendering (retry ${retries} of ${maxRetries})`,
      );
      const problem = await integrateRemote(place, remote, target, attempt.commit, log);
      if (problem !== undefined) {
        await restore(place, start);
        return failed(`${problem}\n${asBefore(place)}`);
      }
    }
  } catch (error) {
    await restore(place, start).catch((restoreError: unknown) => {
      throw new Error(`${String(error)}; undoing the run failed too: ${String(restoreError)}`, {
        cause: error,
      });
    });
    if (error instanceof GitError) return failed(`${error.message.trim()}\n${asBefore(place)}`);
    throw error;
  }
}

/** Where the site and its output are. */
interface Place {
  readonly repo: Repository;
  readonly site: string;
  readonly branch: string;
  /** `rendered/` as a file system path. */
  readonly out: string;
  /** `rendered/` relative to the repository root, POSIX separators. */
  readonly outInRepo: string;
  /** Runs a write of `rendered/` ({@link CommitOptions.interruptible}). */
  readonly write: NonNullable<CommitOptions["interruptible"]>;
  /**
   * Whether this run has written `rendered/` yet. Until it has, a failure leaves everything alone:
   * `rendered/` may hold someone's uncommitted edits, which only a refusal protects.
   */
  touched: boolean;
  /** The index before the run, put back as it was when the run fails ({@link restore}). */
  readonly index: SavedIndex;
  /**
   * `rendered/` before the run when it differed from HEAD: the output of a `metalsynth synth` the
   * user ran first, staged or not, which {@link renderAndCommit} accepts only when it is exactly this
   * run's render. Undefined when it was as HEAD has it.
   */
  before?: ReadonlyMap<string, string>;
  /** The last commit this run made, which a failure takes back. */
  commit?: string;
}

type Attempt =
  | { readonly kind: "refused"; readonly reason: string }
  | { readonly kind: "invalid"; readonly issues: readonly Issue[] }
  | {
      readonly kind: "done";
      readonly commit?: string;
      readonly message?: CommitMessage;
      readonly diff: RenderedDiff;
      readonly issues: readonly Issue[];
    };

/**
 * Renders the site and commits `rendered/` if it changed. `uncommitted` lists the paths of
 * `rendered/` that differed from HEAD before the run: they are accepted only when they are exactly
 * what this run renders (the user ran `metalsynth synth` first); anything else is someone's edit,
 * which the write would silently overwrite, so the run stops before writing.
 */
async function renderAndCommit(
  place: Place,
  options: CommitOptions,
  uncommitted: readonly string[],
): Promise<Attempt> {
  const { repo, out, outInRepo, write } = place;
  const { input, issues, rendered } = await renderFromSite({ site: place.site });
  if (!rendered) return { kind: "invalid", issues };
  if (input.pathPrefixNote !== undefined) options.log?.(`note: ${input.pathPrefixNote}`);
  if (uncommitted.length > 0) {
    if (!isDeepStrictEqual(await readTree(out), rendered.files)) {
      return refused(
        `${outInRepo}/ has uncommitted changes that are not what metalsynth renders (${listPaths(uncommitted)}). ` +
          `Commit them yourself or discard them (git restore --staged --worktree -- ${outInRepo} && ` +
          `git clean -fd -- ${outInRepo}), then run metalsynth commit again`,
      );
    }
    place.before = rendered.files;
  }
  const head = await headCommit(repo);
  const before = head === undefined ? new Map<string, string>() : await committedFiles(repo, head, outInRepo);
  const diff = diffTrees(before, rendered.files);

  // A file in rendered/ metalsynth did not write (committed notes, a hand-added manifest) would be
  // deleted and the deletion committed: writeRendered refuses instead.
  await write((signal) => writeRendered(out, rendered.files, { signal }));
  // Only now: writeRendered itself leaves the previous tree in place when it fails (or refuses).
  place.touched = true;
  await repo.git.raw(["--literal-pathspecs", "add", "--all", "--", outInRepo]);
  const staged = await repo.git.raw([
    "--literal-pathspecs",
    "diff",
    "--cached",
    "--name-only",
    "--",
    outInRepo,
  ]);
  if (staged.trim() === "") return { kind: "done", diff, issues };

  const message = commitMessage(diff, options.subject);
  const name = options.author?.name ?? input.settings.git.authorName;
  const email = options.author?.email ?? input.settings.git.authorEmail;
  // The committer is whoever runs metalsynth; where Git knows no one (a bare CI runner), the author.
  const committer = [
    ...((await configValue(repo, "user.name")) === undefined ? ["-c", `user.name=${name}`] : []),
    ...((await configValue(repo, "user.email")) === undefined ? ["-c", `user.email=${email}`] : []),
  ];
  await repo.git.raw([
    ...committer,
    "--literal-pathspecs",
    "commit",
    "--quiet",
    `--author=${name} <${email}>`,
    "-m",
    message.subject,
    ...(message.body === "" ? [] : ["-m", message.body]),
    // Only rendered/: whatever else the user has staged stays staged and out of this commit.
    "--",
    outInRepo,
  ]);
  place.commit = await headCommit(repo);
  return { kind: "done", commit: place.commit, message, diff, issues };
}

/**
 * Puts the local branch on top of the remote's tip after a lost push race, so the next attempt
 * renders from the remote's inputs. The render commit of this run is dropped (it is reproducible).
 * Without other local commits the branch is reset to the remote tip; local commits of the user's are
 * rebased onto it, never discarded. Returns a reason to stop, or undefined.
 */
async function integrateRemote(
  place: Place,
  remote: string,
  target: string,
  ours: string | undefined,
  log: (line: string) => void,
): Promise<string | undefined> {
  const { repo } = place;
  const tip = await fetchBranch(repo, remote, target);
  const base = ours === undefined ? await headCommit(repo) : await parentOf(repo, ours);
  const local = base === undefined ? [] : await commitsIn(repo, `${tip}..${base}`);
  if (base === undefined || local.length === 0) {
    // Moves the branch and the files that differ, keeps what the user staged, refuses to overwrite local edits.
    const head = await headCommit(repo);
    if (head === undefined) throw new Error("integrating a remote needs a commit to start from");
    await moveBranch(repo, place.branch, head, tip);
    return undefined;
  }
  if ((await commitsIn(repo, `${tip}..${base}`, true)).length > 0) {
    return (
      `${place.branch} has local merge commits that are not on ${remote} ${target}; rebasing would flatten ` +
      `them. Integrate ${remote} ${target} yourself (git pull), then run metalsynth commit --push again`
    );
  }
  if (ours !== undefined) await moveBranch(repo, place.branch, ours, base);
  try {
    await repo.git.rebase(["--quiet", tip]);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    // A rebase that refused to start (local edits) has nothing to abort; one that stopped on a conflict has.
    await repo.git.rebase(["--abort"]).catch(() => undefined);
    return (
      `rebasing your ${local.length} local commit(s) onto ${remote} ${target} failed:\n${error.message.trim()}\n` +
      `Integrate them yourself (git pull --rebase ${remote} ${target}), then run metalsynth commit --push again`
    );
  }
  log(`rebased ${local.length} local commit(s) onto ${remote} ${target}`);
  return undefined;
}

async function parentOf(repo: Repository, commit: string): Promise<string | undefined> {
  const [, parent] = (await repo.git.raw(["rev-list", "--parents", "-n", "1", commit])).trim().split(" ");
  return parent;
}

/**
 * Undoes this run after a failure, so that the checkout is exactly as the user left it (decision
 * 0054): the branch back at `start` (removed again if it was unborn), `rendered/` as it was (as
 * committed at `start`, or the render the user had written and perhaps staged), and the index put
 * back byte for byte, whatever was staged, in whole or in part, inside `rendered/` or out. Files
 * outside `rendered/` are left to {@link moveBranch}, which moves back only those the branch's moves
 * changed and never overwrites a local edit; untracked files are never touched.
 */
async function restore(place: Place, start: string | undefined): Promise<void> {
  const { repo, out, outInRepo } = place;
  if (!place.touched) return;
  const head = await headCommit(repo);
  if (start === undefined) {
    if (head !== undefined) await repo.git.raw(["update-ref", "-d", `refs/heads/${place.branch}`, head]);
  } else if (head !== undefined) {
    // moveBranch moves only what is clean against HEAD: rendered/ is made so first, in the index and
    // the work tree, and comes out as start has it.
    await repo.git.raw(["--literal-pathspecs", "reset", "--quiet", "--", outInRepo]);
    await writeTree(place, await committedFiles(repo, head, outInRepo));
    await moveBranch(repo, place.branch, head, start);
  }
  if (place.before !== undefined) await writeTree(place, place.before);
  else if (start === undefined) await rm(out, { recursive: true, force: true });
  await restoreIndex(place.index);
}

/** Replaces `rendered/` with `files`, a tree this run wrote or found there; none removes it. */
async function writeTree(place: Place, files: ReadonlyMap<string, string>): Promise<void> {
  if (files.size === 0) await rm(place.out, { recursive: true, force: true });
  else await place.write((signal) => writeRendered(place.out, files, { signal, previousIsRendered: true }));
}

/** What a failed run leaves behind, for its message. */
function asBefore(place: Place): string {
  const taken =
    place.commit === undefined ? "" : `; metalsynth took back its commit ${place.commit.slice(0, 12)}`;
  return (
    `Nothing was committed or pushed${taken}: ${place.branch}, the index and the work tree are as they ` +
    `were before the run (what was staged is still staged)`
  );
}

function listPaths(paths: readonly string[]): string {
  const shown = paths.slice(0, LISTED_PATHS).join(", ");
  return paths.length > LISTED_PATHS ? `${shown} and ${paths.length - LISTED_PATHS} more` : shown;
}

function refused(reason: string): { kind: "refused"; reason: string } {
  return { kind: "refused", reason };
}

function failed(reason: string): { kind: "failed"; reason: string } {
  return { kind: "failed", reason };
}

function toPosix(file: string): string {
  return file.split(path.sep).join("/");
}
