import { spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { LOCK_FILE } from "../synth/plan/lock.ts";
import { UsageError } from "./errors.ts";
import type { SiteLocation } from "./site-reader.ts";

/**
 * How much of `rendered/` a command needs from the index: its lock (`validate`, which plans against
 * it) or the whole tree (`diff`, which compares with it). A region's tree is hundreds of MiB
 * (decision 0044); a hook that only validates should not copy it on every commit.
 */
export type StagedRendered = "lock" | "tree";

/**
 * Runs `use` on the site as the Git index holds it (`--staged`, decision 0054): what a commit made
 * now would hold, whatever the work tree has (an inventory file not yet added, a broken draft left
 * untracked, a fix not yet staged). The index's entries below the site are checked out into a
 * temporary directory with `git checkout-index`, so every reader, glob and symbolic-link rule of
 * the work tree applies unchanged (a link is checked out as a link), and removed afterwards.
 * `GIT_INDEX_FILE` is honoured: a pre-commit hook of `git commit <paths>` checks that commit's index.
 *
 * Findings name the files as they are in the repository: the copy sits at the work tree's own
 * absolute path below the temporary directory, and paths are shown relative to the current
 * directory's place there. A link whose target leaves the site is not read, as in the work tree;
 * the reason given is then that its target does not exist, as only the site is copied.
 *
 * @throws UsageError when `location` names specs, inventory or an output directory (they are paths
 *   of the work tree), the site is not in a Git work tree, or the index has unresolved conflicts.
 */
export async function withStagedSite<T>(
  location: SiteLocation,
  rendered: StagedRendered,
  use: (staged: SiteLocation) => Promise<T>,
): Promise<T> {
  for (const [flag, given] of [
    ["--specs", location.specs],
    ["--inventory", location.inventory],
    ["--out", location.out],
  ] as const) {
    if (given !== undefined) {
      throw new UsageError(
        `--staged reads the site's specs/, inventory/, metalsynth.yaml and rendered/ from the Git index; ` +
          `${flag} names files in the work tree. Leave one of them out`,
      );
    }
  }
  const site = location.site ?? ".";
  const siteReal = await realpath(site).catch(() => undefined);
  if (siteReal === undefined) throw new UsageError(`site directory not found: ${site}`, { showHelp: false });
  const root = await workTreeRoot(siteReal, site);
  const siteInRepo = path.relative(root, siteReal).split(path.sep).join("/");
  const paths = await stagedPaths(root, siteInRepo, rendered);

  const temp = await mkdtemp(path.join(tmpdir(), "metalsynth-staged-"));
  const copy = path.join(temp, root);
  try {
    const copySite = path.join(copy, siteInRepo);
    await mkdir(copySite, { recursive: true });
    // A repository of its own, so that asking Git where rendered/ sits in its work tree (the wiring's
    // path prefix, decision 0055) gets the real answer; the variables a hook inherits would point
    // `git init` at the real repository instead.
    await git(copy, ["init", "--quiet", "--template=", "."], { env: withoutRepository(process.env) });
    if (paths.length > 0) {
      await git(root, ["checkout-index", `--prefix=${copy}${path.sep}`, "-z", "--stdin"], {
        input: `${paths.join("\0")}\0`,
      });
    }
    return await use({ site: copySite, relativeTo: path.join(temp, await realpath(process.cwd())) });
  } catch (error) {
    // A missing specs/ (nothing staged there) is told with the path the user knows.
    if (error instanceof UsageError) {
      throw new UsageError(error.message.split(copy).join(root), { showHelp: error.showHelp });
    }
    throw error;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/** The top level of the work tree holding `dir`. */
async function workTreeRoot(dir: string, shown: string): Promise<string> {
  try {
    return (await git(dir, ["rev-parse", "--show-toplevel"])).trim();
  } catch (error) {
    if (!(error instanceof GitFailed)) throw error;
    throw new UsageError(
      `--staged reads the Git index, and ${shown} is not in a Git work tree (${error.stderr})`,
      { showHelp: false },
    );
  }
}

/**
 * The index's paths below the site (relative to the root), without submodules (no file to read)
 * and, unless `rendered` is `tree`, without `rendered/` but for its lock.
 */
async function stagedPaths(root: string, siteInRepo: string, rendered: StagedRendered): Promise<string[]> {
  const listing = await git(root, [
    "--literal-pathspecs",
    "ls-files",
    "--stage",
    "-z",
    "--",
    siteInRepo === "" ? "." : siteInRepo,
  ]);
  const out = path.posix.join(siteInRepo, "rendered");
  const lock = path.posix.join(out, LOCK_FILE);
  const paths: string[] = [];
  const unmerged = new Set<string>();
  for (const entry of listing.split("\0")) {
    const match = /^(\d+) [0-9a-f]+ (\d)\t(.+)$/s.exec(entry);
    if (!match) continue;
    const [, mode, stage, file = ""] = match;
    if (stage !== "0") unmerged.add(file);
    else if (mode === "160000") continue;
    else if (rendered === "tree" || !file.startsWith(`${out}/`) || file === lock) paths.push(file);
  }
  if (unmerged.size > 0) {
    throw new UsageError(
      `the index has unresolved merge conflicts (${[...unmerged].join(", ")}): resolve them and git add ` +
        `the result, then check what is staged`,
      { showHelp: false },
    );
  }
  return paths;
}

/** The variables that tell git which repository, index and work tree to use (`git rev-parse --local-env-vars`). */
const REPOSITORY_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
];

function withoutRepository(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !REPOSITORY_VARIABLES.includes(name)));
}

/** A git command that exited non-zero, with what it wrote to stderr. */
class GitFailed extends Error {
  constructor(
    readonly stderr: string,
    args: readonly string[],
  ) {
    super(`git ${args.join(" ")} failed: ${stderr}`);
  }
}

/**
 * Runs git in `cwd` and returns its standard output. Spawned directly, not through simple-git:
 * `validate` loads no more than it needs (decision 0018), and `checkout-index --stdin` reads the
 * paths from standard input, which simple-git cannot feed.
 */
function git(
  cwd: string,
  args: readonly string[],
  options: { readonly input?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd, env: options.env ?? process.env, stdio: "pipe" });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const said = Buffer.concat(stderr).toString("utf8").trim();
      if (code === 0) resolve(Buffer.concat(stdout).toString("utf8"));
      else reject(new GitFailed(said || `exit code ${code}`, args));
    });
    // A git that stops reading early says why in its exit code and stderr, not in a broken pipe.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input);
  });
}
