/**
 * The package as a site repository gets it (README "Use it in your site repository"): packed from
 * this clone, installed into a scratch site repository, and driven by the README's blocks as written:
 * the install, the CI steps (the plain shell ones, and the `run` steps of the GitHub Actions jobs),
 * and the pre-commit hook. The package runs its own build (dist/, compiled by the slow tier's
 * globalSetup and again by `npm pack`'s prepare); npm installs the runtime dependencies with this
 * machine's npm configuration, from its cache where it can.
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../harness.ts";
import { EAST_IP, changeInventory, configure, edit, git, hostInNewFile, temporary } from "../git/repos.ts";
import { copyExampleSite } from "../support/example-site.ts";
import { runAction, runProcess, type ActionRun, type ProcessOutcome } from "../support/github-action.ts";
import { preCommit } from "../support/pre-commit.ts";

const README = readFileSync(path.join(REPO, "README.md"), "utf8");
const PACKAGE = z
  .object({ version: z.string(), devDependencies: z.record(z.string(), z.string()) })
  .parse(JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")));

/** The fenced block after `<!-- site-repo: name … -->` in README.md: its language and text. */
function readmeBlock(name: string): { language: string; text: string } {
  const marker = README.indexOf(`<!-- site-repo: ${name} `);
  if (marker < 0) throw new Error(`README.md has no block marked site-repo: ${name}`);
  const block = /```(\w*)\n([\s\S]*?)```/.exec(README.slice(marker));
  return { language: block?.[1] ?? "", text: block?.[2] ?? "" };
}

/**
 * The environment of every command: this one's, with `$metalsynth` (the clone the README's install
 * block packs) and npm told to use its cache before the registry and to keep quiet about audits.
 */
const ENV: NodeJS.ProcessEnv = {
  ...process.env,
  metalsynth: REPO,
  npm_config_prefer_offline: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};

/** Runs `command args…` in `cwd`, and never throws for an exit code. */
function exec(cwd: string, command: string, ...args: string[]): Promise<ProcessOutcome> {
  return runProcess(cwd, command, args, ENV);
}

/** A README shell block run as a CI's shell step does: stopping at the first failing command. */
function shellBlock(name: string, cwd: string): Promise<ProcessOutcome> {
  const { language, text } = readmeBlock(name);
  expect(language).toBe("sh");
  return exec(cwd, "sh", "-e", "-c", text);
}

const WORKFLOW = z.object({
  jobs: z.record(
    z.string(),
    z.object({
      steps: z.array(
        z.object({
          uses: z.string().optional(),
          id: z.string().optional(),
          run: z.string().optional(),
          with: z.record(z.string(), z.unknown()).optional(),
          "continue-on-error": z.boolean().optional(),
        }),
      ),
    }),
  ),
});

/**
 * One job of the README's GitHub Actions workflow, in a clone at the commit the event names: its
 * `run` steps in order, in the shell GitHub gives them (`bash -eo pipefail`), a failing step ending
 * the job unless it may fail. The actions it uses stand for what this test already did: the clone
 * is the checkout, this machine's Node.js the one setup-node installs.
 */
async function githubJob(
  name: string,
  cwd: string,
): Promise<{ success: boolean; steps: ProcessOutcome[]; action?: ActionRun }> {
  const { language, text } = readmeBlock("github-actions");
  expect(language).toBe("yaml");
  const job = WORKFLOW.parse(parse(text)).jobs[name];
  if (job === undefined) throw new Error(`the README's workflow has no job ${name}`);
  const steps: ProcessOutcome[] = [];
  let ran: ActionRun | undefined;
  for (const step of job.steps) {
    if (step.uses !== undefined && /^[\w-]+\/metalsynth@v/.test(step.uses)) {
      // This repository's action, at the tag of the version the site pins.
      expect(step.uses.endsWith(`@v${PACKAGE.version}`)).toBe(true);
      const inputs = Object.fromEntries(
        Object.entries(step.with ?? {}).map(([key, value]) => [key, String(value)]),
      );
      ran = await runAction(cwd, inputs, ENV);
      steps.push(...ran.steps);
      if (!ran.success) return { success: false, steps, action: ran };
      continue;
    }
    if (step.uses !== undefined) {
      const [action, ref] = step.uses.split("@");
      expect(["actions/checkout", "actions/setup-node"]).toContain(action);
      // Pinned by commit, as a tag can move.
      expect(ref).toMatch(/^[0-9a-f]{40}$/);
      if (action === "actions/setup-node") {
        expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(
          Number(step.with?.["node-version"]),
        );
      }
      continue;
    }
    const outcome = await exec(cwd, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step.run ?? "");
    steps.push(outcome);
    if (outcome.code !== 0 && step["continue-on-error"] !== true)
      return { success: false, steps, ...(ran && { action: ran }) };
  }
  return { success: true, steps, ...(ran && { action: ran }) };
}

/** Whether a path in the tarball is something the package must ship. */
function shipped(entry: string): boolean {
  return /^package\/(package\.json|README\.md|LICENSE|bin\/metalsynth\.js|dist\/.+\.(js|d\.ts))$/.test(entry);
}

const TARBALL = `vendor/metalsynth-${PACKAGE.version}.tgz`;

describe("metalsynth in a site repository, installed and run as the README says", () => {
  let work: string;
  /** A person's clone of the site repository. */
  let site: string;
  let origin: string;

  beforeAll(async () => {
    work = await temporary("site-repo");
    origin = path.join(work, "origin.git");
    site = path.join(work, "site-a");
    git(work, "init", "--quiet", "--bare", "--initial-branch=main", origin);
    git(work, "init", "--quiet", "--initial-branch=main", site);
    configure(site, "alice");
    git(site, "remote", "add", "origin", origin);
    await copyExampleSite(site);
  });

  it("installs from the packed tarball: compiled JavaScript and declarations, no dev dependencies", async () => {
    const install = await shellBlock("install", site);
    expect(install.output).toContain(`metalsynth-${PACKAGE.version}.tgz`);
    expect(install.code, install.output).toBe(0);

    const entries = (await exec(site, "tar", "-tzf", TARBALL)).stdout.trim().split("\n");
    expect(entries.filter((entry) => !shipped(entry))).toEqual([]);
    expect(entries).toContain("package/LICENSE");
    // The README's "about N kB packed" stays true, within a fifth.
    const said = Number(
      /about (\d+) kB packed/.exec(readFileSync(path.join(REPO, "README.md"), "utf8"))?.[1],
    );
    const packed = (await stat(path.join(site, TARBALL))).size / 1000;
    expect(Math.abs(packed - said) / said, `${packed} kB packed, the README says ${said}`).toBeLessThan(0.2);
    expect(entries).toContain("package/dist/bin/cli.js");
    const javascript = entries.filter((entry) => entry.endsWith(".js") && entry.startsWith("package/dist/"));
    for (const file of javascript) {
      expect(entries, "a declaration beside each module").toContain(file.replace(/\.js$/, ".d.ts"));
      // Built from a source the build compiles today: no stale output, no test, no cdk8s app.
      const source = file.replace(/^package\/dist\//, "").replace(/\.js$/, ".ts");
      expect(existsSync(path.join(REPO, source)), `${file} has no source ${source}: remove dist/`).toBe(true);
      expect(source).not.toMatch(/\.test\.ts$|cdk8s-app/);
    }

    const version = await exec(site, "npx", "metalsynth", "--version");
    expect(version.stdout).toBe(`metalsynth ${PACKAGE.version}\n`);
    expect(version.code).toBe(0);
    // The one supported import (README): main and Console, with declarations for a TypeScript
    // consumer (an ES module, as the package is one); nothing else of dist/ is exported.
    const consumer = path.join(site, "consumer.mts");
    await writeFile(
      consumer,
      'import { main, type Console } from "metalsynth";\n' +
        "const io: Console = { out: () => {}, err: () => {} };\n" +
        'export const code: Promise<number> = main(["--version"], io);\n',
    );
    const tsc = await exec(
      site,
      process.execPath,
      path.join(REPO, "node_modules", "typescript", "bin", "tsc"),
      ...["--noEmit", "--strict", "--module", "nodenext", "--types", "node"],
      ...["--typeRoots", path.join(REPO, "node_modules", "@types"), "consumer.mts"],
    );
    expect(tsc, tsc.output).toMatchObject({ code: 0, output: "" });
    await rm(consumer);
    const run = await exec(
      site,
      process.execPath,
      "--input-type=module",
      "-e",
      'import { main } from "metalsynth"; let out = ""; process.exitCode = await main(["version"], { out: (t) => { out += t; }, err: () => {} }); console.log(JSON.stringify(out));',
    );
    expect(run.stdout).toBe(`${JSON.stringify(`metalsynth ${PACKAGE.version}\n`)}\n`);
    const deep = await exec(
      site,
      process.execPath,
      "--input-type=module",
      "-e",
      'await import("metalsynth/dist/synth/evaluate.js");',
    );
    expect(deep.output).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");

    // The build and test tools the clone needs, and the package must not.
    for (const name of ["tsx", "typescript", "vitest", "cdk8s-cli"]) {
      expect(PACKAGE.devDependencies).toHaveProperty([name]);
      expect(existsSync(path.join(site, "node_modules", name)), name).toBe(false);
    }
  }, 180_000);

  it("blocks a bad MAC and a stale rendered/ with the pre-commit hooks of .pre-commit-hooks.yaml", async () => {
    const hooks = z
      .array(z.object({ id: z.string() }))
      .parse(parse(readFileSync(path.join(REPO, ".pre-commit-hooks.yaml"), "utf8")))
      .map((hook) => hook.id);
    const config = z
      .object({ repos: z.array(z.object({ hooks: z.array(z.object({ id: z.string() })) })) })
      .parse(parse(readmeBlock("pre-commit-config").text));
    expect(config.repos.flatMap((repo) => repo.hooks.map((hook) => hook.id))).toEqual(hooks);
    const bin = preCommit();
    // pre-commit reads tracked files, and stashes what is not staged: stage the site before each run.
    const tryHook = (id: string) => {
      git(site, "add", "--all");
      return exec(site, bin, "try-repo", REPO, id, "--all-files");
    };
    const spec = path.join(site, "specs", "cluster-east", "provisioning.yaml");
    const good = readFileSync(spec, "utf8");

    await edit(spec, "3c:fd:fe:13:f8:b8", "3c:fd:fe:13:00:00");
    const bad = await tryHook("metalsynth-validate");
    expect(bad.code, bad.output).toBe(1);
    expect(bad.output).toContain(
      "specs/cluster-east/provisioning.yaml:13:9: error[mac-unknown] spec.masters[0].master-1.mac-address",
    );
    await writeFile(spec, good);
    const passes = await tryHook("metalsynth-validate");
    expect(passes.code, passes.output).toBe(0);
    expect(passes.output).toMatch(/metalsynth validate\.+Passed/);

    // No rendered/ committed yet: not current until synth writes it.
    const stale = await tryHook("metalsynth-rendered-current");
    expect(stale.code, stale.output).toBe(1);
    expect(stale.output).toContain("edge-a/cluster-east (added)");
    expect((await exec(site, "npx", "metalsynth", "synth")).code).toBe(0);
    const current = await tryHook("metalsynth-rendered-current");
    expect(current.code, current.output).toBe(0);
    git(site, "read-tree", "--empty");
    await rm(path.join(site, "rendered"), { recursive: true, force: true });
  }, 180_000);

  it("installs the pre-commit hook, renders the site and pushes it", async () => {
    const hook = path.join(site, ".git", "hooks", "pre-commit");
    await writeFile(hook, readmeBlock("pre-commit").text);
    await chmod(hook, 0o755);
    const synth = await exec(site, "npx", "metalsynth", "synth");
    expect(synth.output).toMatch(/^wrote rendered: \d+ added, 0 changed, 0 removed, 0 unchanged$/m);
    expect(synth.code).toBe(0);
    git(site, "add", ".");
    git(site, "commit", "--quiet", "-m", "site-a: specs, inventory, rendered/ and metalsynth");
    git(site, "push", "--quiet", "origin", "main");
    expect(git(site, "status", "--porcelain")).toBe("");
    expect(git(site, "ls-files", "vendor", "node_modules")).toBe(TARBALL);
  });

  it("the pre-commit hook refuses what is staged with an error, whatever the working tree holds", async () => {
    const spec = path.join(site, "specs", "cluster-east", "provisioning.yaml");
    const good = readFileSync(spec, "utf8");
    await edit(spec, "3c:fd:fe:13:f8:b8", "3c:fd:fe:13:00:00");
    git(site, "add", spec);
    await writeFile(spec, good); // fixed in the working tree, not staged
    const commit = await exec(site, "git", "commit", "-m", "cluster-east: a mistyped MAC");
    expect(commit.code).not.toBe(0);
    expect(commit.output).toContain(
      "specs/cluster-east/provisioning.yaml:13:9: error[mac-unknown] spec.masters[0].master-1.mac-address: 3c:fd:fe:13:00:00 matches no BareMetalHost",
    );
    expect(git(site, "log", "--format=%s", "-1")).toBe("site-a: specs, inventory, rendered/ and metalsynth");
    git(site, "reset", "--quiet", "--", spec);
  });

  it("the hooks check what is committed: a host in a file not added fails, an untracked draft does not", async () => {
    const bin = preCommit();
    // Without --all-files, as `git commit` runs them: on what is staged.
    const hooks = (...ids: string[]) => exec(site, bin, "try-repo", REPO, ...ids);

    const { inventory, spec } = await hostInNewFile(site);
    git(site, "add", spec);
    expect((await exec(site, "npx", "metalsynth", "validate")).code).toBe(0); // the work tree has the host
    const missing = await hooks("metalsynth-validate");
    expect(missing.code, missing.output).toBe(1);
    expect(missing.output).toContain(
      "specs/cluster-east/provisioning.yaml:17:9: error[mac-unknown] spec.masters[1].master-2.mac-address: b8:ce:f6:79:4a:c0 matches no BareMetalHost",
    );
    const commit = await exec(site, "git", "commit", "-m", "cluster-east: master-2 on r04-node-04");
    expect(commit.code).not.toBe(0);
    expect(commit.output).toContain("error[mac-unknown] spec.masters[1].master-2.mac-address");
    git(site, "add", inventory);
    const added = await hooks("metalsynth-validate");
    expect(added.code, added.output).toBe(0);
    git(site, "reset", "--quiet", "--", spec, inventory);
    git(site, "checkout", "--", spec);
    await rm(path.join(site, inventory));

    const draft = path.join(site, "specs", "draft.yaml");
    await writeFile(draft, "apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\n");
    const reviewed = path.join(site, spec);
    await writeFile(reviewed, `${readFileSync(reviewed, "utf8")}# reviewed\n`);
    git(site, "add", spec);
    expect((await exec(site, "npx", "metalsynth", "validate")).code).toBe(1); // the work tree has the draft
    const passes = await hooks();
    expect(passes.code, passes.output).toBe(0);
    expect(passes.output).toMatch(/metalsynth validate\.+Passed/);
    expect(passes.output).toMatch(/metalsynth rendered\/ is current\.+Passed/);
    const plain = await exec(site, path.join(site, ".git", "hooks", "pre-commit"));
    expect(plain.code, plain.output).toBe(0);
    git(site, "reset", "--quiet", "--", spec);
    git(site, "checkout", "--", spec);
    await rm(draft);
    expect(git(site, "status", "--porcelain")).toBe("");
  }, 180_000);

  it("checks a proposed change: the shell steps fail on the diff, the GitHub job shows it and passes", async () => {
    git(site, "checkout", "--quiet", "-b", "renumber");
    await changeInventory(site, EAST_IP);
    git(site, "commit", "--quiet", "-am", "r02-node-05: new data address"); // the hook passes it
    git(site, "push", "--quiet", "origin", "renumber");
    const ci = path.join(work, "ci-check");
    git(work, "clone", "--quiet", "--branch", "renumber", origin, ci);

    const shell = await shellBlock("ci-check", ci);
    expect(shell.output).toContain("metalsynth: no problems found");
    expect(shell.output).toContain("edge-a/cluster-east (changed)");
    expect(shell.code).toBe(1);

    // The README's job runs the action: npm ci, validate (no annotation), diff into the summary, map.
    const job = await githubJob("check", ci);
    expect(job.steps.map((step) => step.code)).toEqual([0, 0, 0, 0]);
    expect(job.success).toBe(true);
    expect(job.action?.skipped).toEqual([
      "actions/setup-node@249970729cb0ef3589644e2896645e5dc5ba9c38",
      "actions/upload-artifact@b7c566a772e6b6bfb58ed0dc250532a479d7789f",
    ]);
    expect(job.action?.outputs).toEqual({
      errors: "0",
      warnings: "0",
      changed: "true",
      map: "metalsynth-map.html",
    });
    expect(job.action?.summary).toMatch(/^### metalsynth diff\n/);
    expect(job.action?.summary).toContain("| `edge-a/cluster-east` | changed | 0 | 0 | 2 | 3 | 2 |");
    expect(job.action?.summary).toContain("- ConfigMap `edge-a/cluster-east-configmap`");
    expect(readFileSync(path.join(ci, "metalsynth-map.html"), "utf8")).toMatch(/<html/i);
    expect(job.steps[1]?.stdout).toBe("");
  }, 180_000);

  it("annotates a mistyped MAC on its line and fails the GitHub job", async () => {
    git(site, "checkout", "--quiet", "-b", "typo", "renumber");
    await edit(
      path.join(site, "specs", "cluster-east", "provisioning.yaml"),
      "3c:fd:fe:13:f8:b8",
      "3c:fd:fe:13:00:00",
    );
    git(site, "commit", "--quiet", "--no-verify", "-am", "cluster-east: a mistyped MAC");
    git(site, "push", "--quiet", "origin", "typo");
    const ci = path.join(work, "ci-typo");
    git(work, "clone", "--quiet", "--branch", "typo", origin, ci);
    const job = await githubJob("check", ci);
    expect(job.success).toBe(false);
    expect(job.steps[1]?.stdout).toContain(
      "::error file=specs/cluster-east/provisioning.yaml,line=13,col=9,title=metalsynth mac-unknown::" +
        "spec.masters[0].master-1.mac-address: 3c:fd:fe:13:00:00 matches no BareMetalHost",
    );
    expect(job.action?.outputs).toMatchObject({ errors: "1", changed: "false" });
    expect(job.action?.summary).toContain("**The site has 1 error**");
    expect(job.steps.at(-1)?.output).toContain("metalsynth: 1 error(s), annotated on the files");
    git(site, "checkout", "--quiet", "renumber");
  }, 180_000);

  it("renders the merge once, whichever of the GitHub job and the shell steps pushes first", async () => {
    git(site, "checkout", "--quiet", "main");
    git(site, "merge", "--quiet", "--ff-only", "renumber");
    git(site, "push", "--quiet", "origin", "main");
    const merged = git(site, "rev-parse", "HEAD");
    // Two CI runs of the same push, checked out before either renders.
    const github = path.join(work, "ci-github");
    const shell = path.join(work, "ci-shell");
    git(work, "clone", "--quiet", origin, github);
    git(work, "clone", "--quiet", origin, shell);

    const job = await githubJob("render", github);
    expect(job.success, job.steps.map((step) => step.output).join("\n")).toBe(true);
    const render = await shellBlock("ci-render", shell);
    expect(render.code, render.output).toBe(0);

    expect(git(origin, "log", "--format=%s", `${merged}..main`)).toBe("metalsynth: edge-a/cluster-east");
    expect(git(shell, "rev-parse", "HEAD")).toBe(git(origin, "rev-parse", "main"));
  }, 180_000);
});
