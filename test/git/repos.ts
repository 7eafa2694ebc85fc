import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { run } from "../run-cli.ts";
import { copyExampleSite } from "../support/example-site.ts";

/**
 * Real repositories for the commit tests: a bare remote on disk and clones of it, isolated from the
 * machine's Git configuration. simple-git spawns git with this process's environment, so setting
 * the isolation here covers metalsynth's own git calls too.
 */
process.env.GIT_CONFIG_GLOBAL = "/dev/null";
process.env.GIT_CONFIG_NOSYSTEM = "1";

/** Runs git in `cwd` and returns its trimmed standard output; throws on a non-zero exit. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trimEnd();
}

/** Where the example site sits inside each clone: a subdirectory, as in a monorepo. */
export const SITE_DIR = "edge/site-a";

/** A bare remote holding the example site's inputs (no `rendered/` yet), and a way to clone it. */
export interface Remote {
  readonly dir: string;
  /** The bare repository. */
  readonly bare: string;
  /** A new clone with a committer identity, signing off; `site` is its copy of the example site. */
  clone(name: string): Promise<{ dir: string; site: string }>;
  /** The commits of the remote's main branch, newest first, as `subject`. */
  log(): string[];
}

/** Sets the identity and switches off signing, which a developer's global config may turn on. */
export function configure(dir: string, name: string): void {
  git(dir, "config", "user.name", name);
  git(dir, "config", "user.email", `${name}@example.org`);
  git(dir, "config", "commit.gpgsign", "false");
}

/** A new temporary directory. */
export async function temporary(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `metalsynth-${prefix}-`));
}

/** A bare remote whose main branch has one commit: the example site's inputs under {@link SITE_DIR}. */
export async function makeRemote(): Promise<Remote> {
  const dir = await temporary("git");
  const bare = path.join(dir, "remote.git");
  git(dir, "init", "--quiet", "--bare", "--initial-branch=main", bare);
  const seed = path.join(dir, "seed");
  git(dir, "init", "--quiet", "--initial-branch=main", seed);
  configure(seed, "seed");
  await copyExampleSite(path.join(seed, SITE_DIR));
  git(seed, "add", ".");
  git(seed, "commit", "--quiet", "-m", "site inputs");
  git(seed, "push", "--quiet", bare, "HEAD:refs/heads/main");
  return {
    dir,
    bare,
    async clone(name) {
      const target = path.join(dir, name);
      git(dir, "clone", "--quiet", bare, target);
      configure(target, name);
      return { dir: target, site: path.join(target, SITE_DIR) };
    },
    log: () => git(bare, "log", "--format=%s", "main").split("\n"),
  };
}

/** Installs an executable hook script. */
export async function installHook(gitDir: string, name: string, script: string): Promise<void> {
  const file = path.join(gitDir, "hooks", name);
  await writeFile(file, `#!/bin/sh\n${script}\n`);
  await chmod(file, 0o755);
}

/** Replaces every occurrence of `from` in a site file. */
export async function edit(file: string, from: string, to: string): Promise<void> {
  const text = await readFile(file, "utf8");
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
  await writeFile(file, text.split(from).join(to));
}

/** `rendered/` of the site, relative to the clone's root. */
export const RENDERED = `${SITE_DIR}/rendered`;

/** Inventory edits the tests make: one host of each BPA cluster gets a new address. */
export const EAST_IP = ["inventory/hardwaredata.yaml", "10.23.2.15", "10.23.2.99"] as const;
export const WEST_IP = ["inventory/rack-r02.yaml", "172.22.0.27", "172.22.0.77"] as const;

/** Applies one of the inventory edits above to a site. */
export async function changeInventory(site: string, [file, from, to]: readonly [string, string, string]) {
  await edit(path.join(site, file), from, to);
}

/**
 * A host added in a new inventory file (a copy of r03-node-04 with new names, MACs and addresses,
 * `inventory/r04-node-04.json`) and cluster-east's master-2 moved onto it: the site is valid with
 * that file, and `mac-unknown` without it. Returns the two files, relative to the site.
 */
export async function hostInNewFile(site: string): Promise<{ inventory: string; spec: string }> {
  const rack = z
    .object({ items: z.array(z.looseObject({ metadata: z.looseObject({ name: z.string() }) })) })
    .parse(JSON.parse(await readFile(path.join(site, "inventory/rack-r03.json"), "utf8")));
  let host = JSON.stringify(
    rack.items.find((item) => item.metadata.name === "r03-node-04"),
    undefined,
    2,
  );
  for (const [from, to] of [
    ["r03-node-04", "r04-node-04"],
    ['"r03"', '"r04"'],
    ["ac:1f:6b:b2:0f:9", "ac:1f:6b:b2:4f:9"],
    ["b8:ce:f6:79:ea:c", "b8:ce:f6:79:4a:c"],
    ["10.23.3.14", "10.23.4.14"],
    ["172.22.0.34", "172.22.0.64"],
    ["10.20.3.14", "10.20.4.14"],
  ] as const) {
    if (!host.includes(from)) throw new Error(`r03-node-04 has no ${from}`);
    host = host.split(from).join(to);
  }
  const inventory = "inventory/r04-node-04.json";
  await writeFile(path.join(site, inventory), `${host}\n`);
  const spec = "specs/cluster-east/provisioning.yaml";
  await edit(path.join(site, spec), "3c:fd:fe:0c:62:48 # r02-node-03", "b8:ce:f6:79:4a:c0 # r04-node-04");
  return { inventory, spec };
}

/** A remote whose main already holds the rendered tree (pushed from clone a), and a second clone b. */
export async function renderedRemote() {
  const remote = await makeRemote();
  const a = await remote.clone("a");
  const first = await run("commit", "--site", a.site, "--push");
  if (first.code !== 0) throw new Error(`first commit failed: ${first.err}`);
  const b = await remote.clone("b");
  return { remote, a, b };
}

/**
 * What a failed `metalsynth commit` must leave exactly as it found it: HEAD, every index entry (with
 * its blob and mode), the staged and the unstaged changes, and the bytes of every file Git sees in
 * the work tree, tracked or untracked (undefined for a tracked file deleted from the work tree).
 */
export async function checkoutState(dir: string) {
  const files: Record<string, string | undefined> = {};
  const listed = git(dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate");
  for (const file of listed.split("\0").filter((name) => name !== "")) {
    files[file] = await readFile(path.join(dir, file), "utf8").catch(() => undefined);
  }
  let head = "unborn";
  try {
    head = git(dir, "rev-parse", "--verify", "HEAD");
  } catch {
    // No commit yet: HEAD names an unborn branch.
  }
  return {
    head,
    index: git(dir, "ls-files", "--stage"),
    cached: git(dir, "diff", "--cached"),
    unstaged: git(dir, "diff"),
    status: git(dir, "status", "--porcelain", "--untracked-files=all"),
    files,
  };
}

/** Files of a commit's tree below a path, relative to the repository root. */
export function filesIn(dir: string, commit: string, below: string): string[] {
  return git(dir, "ls-tree", "-r", "--name-only", commit, "--", below).split("\n");
}
