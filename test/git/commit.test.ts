import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readTree } from "../../gitops/replace-dir.ts";
import {
  changeInventory,
  checkoutState,
  configure,
  EAST_IP,
  filesIn,
  git,
  installHook,
  RENDERED,
  renderedRemote,
  temporary,
} from "./repos.ts";
import { run } from "../run-cli.ts";
import { copyExampleSite } from "../support/example-site.ts";

describe("metalsynth commit", () => {
  it("in a fresh repository makes one commit of rendered/ only, and a second run none", async () => {
    const site = await temporary("fresh");
    await copyExampleSite(site);
    git(site, "init", "--quiet", "--initial-branch=main");
    configure(site, "operator");

    const first = await run("commit", "--site", site);
    expect(first.code).toBe(0);
    expect(first.err).toMatch(/warning: rendering uncommitted inputs \(inventory\//);
    expect(first.out).toMatch(/^committed [0-9a-f]{12} on main: metalsynth: 3 clusters and gitops wiring$/m);
    expect(git(site, "rev-list", "--count", "HEAD")).toBe("1");
    const files = filesIn(site, "HEAD", ".");
    expect(files.every((file) => file.startsWith("rendered/"))).toBe(true);
    expect(files).toEqual(
      expect.arrayContaining([
        "rendered/metalsynth.lock.yaml",
        "rendered/argocd/applicationset.yaml",
        "rendered/flux/edge-a.cluster-east.yaml",
        "rendered/clusters/edge-a/cluster-east/kud-installer.yaml",
        "rendered/clusters/edge-a/cluster-west/kustomization.yaml",
      ]),
    );
    // Author from metalsynth.yaml, committer from the repository's configuration.
    expect(git(site, "log", "-1", "--format=%an <%ae>|%cn")).toBe(
      "metalsynth <metalsynth@example.com>|operator",
    );
    expect(git(site, "log", "-1", "--format=%b")).toMatch(
      /^edge-a\/cluster-east: new cluster \(3 master, 2 worker hosts; \d+ objects\)$/m,
    );

    const second = await run("commit", "--site", site);
    expect(second).toMatchObject({ code: 0, out: "nothing to commit: rendered/ is up to date on main\n" });
    expect(git(site, "rev-list", "--count", "HEAD")).toBe("1");
  });

  it("leaves a fresh repository without commits, index entries or rendered/ when the commit fails", async () => {
    const site = await temporary("fresh-fail");
    await copyExampleSite(site);
    git(site, "init", "--quiet", "--initial-branch=main");
    configure(site, "operator");
    await installHook(path.join(site, ".git"), "pre-commit", "exit 1");

    // 4: Git refused a step; 1 would say the site has errors.
    expect((await run("commit", "--site", site)).code).toBe(4);
    expect(git(site, "rev-list", "--all")).toBe("");
    expect(git(site, "diff", "--cached", "--name-only")).toBe("");
    expect((await readTree(path.join(site, "rendered"))).size).toBe(0);
  });

  it("leaves what a fresh repository had staged, rendered/ included, when the commit fails", async () => {
    const site = await temporary("fresh-staged");
    await copyExampleSite(site);
    git(site, "init", "--quiet", "--initial-branch=main");
    configure(site, "operator");
    expect((await run("synth", "--site", site)).code).toBe(0);
    git(site, "add", ".");
    await installHook(path.join(site, ".git"), "pre-commit", "exit 1");
    const before = await checkoutState(site);
    expect(before.status).toMatch(/^A {2}rendered\/metalsynth\.lock\.yaml$/m);

    expect((await run("commit", "--site", site)).code).toBe(4);
    expect(await checkoutState(site)).toEqual(before);
  });

  it("turns an inventory change into one commit that names what changed", async () => {
    const { a } = await renderedRemote();
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory: new address for r02-node-05");
    const before = git(a.dir, "rev-parse", "HEAD");

    const result = await run("commit", "--site", a.site, "--message", "render: new worker address");
    expect(result.code).toBe(0);
    expect(git(a.dir, "rev-list", "--count", `${before}..HEAD`)).toBe("1");
    expect(git(a.dir, "log", "-1", "--format=%s")).toBe("render: new worker address");
    expect(git(a.dir, "log", "-1", "--format=%b").trim()).toBe(
      "edge-a/cluster-east: Job kud-cluster-east replaced; Job software-cluster-east replaced; " +
        "ConfigMap cluster-east-configmap changed; ConfigMap cluster-east-hosts-ini changed; " +
        "ConfigMap cluster-east-software changed",
    );
    expect(git(a.dir, "diff", "--name-only", "HEAD~1", "HEAD").split("\n")).toEqual([
      `${RENDERED}/clusters/edge-a/cluster-east/cluster-configmap.yaml`,
      `${RENDERED}/clusters/edge-a/cluster-east/kud-installer.yaml`,
      // Its header holds the digest of the directory's inputs and files (decision 0057).
      `${RENDERED}/clusters/edge-a/cluster-east/kustomization.yaml`,
      `${RENDERED}/clusters/edge-a/cluster-east/software.yaml`,
    ]);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
  });

  it("leaves other staged changes staged and out of the commit", async () => {
    const { a } = await renderedRemote();
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory");
    await writeFile(path.join(a.dir, "NOTES.md"), "draft\n");
    git(a.dir, "add", "NOTES.md");
    expect((await run("commit", "--site", a.site)).code).toBe(0);
    expect(git(a.dir, "show", "--name-only", "--format=", "HEAD")).not.toContain("NOTES.md");
    expect(git(a.dir, "status", "--porcelain")).toBe("A  NOTES.md");
  });

  it("undoes its write and staging when git refuses the commit", async () => {
    const { a } = await renderedRemote();
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory");
    const start = git(a.dir, "rev-parse", "HEAD");
    const before = await readTree(path.join(a.site, "rendered"));
    await installHook(path.join(a.dir, ".git"), "pre-commit", "echo 'no commits today' >&2; exit 1");

    const result = await run("commit", "--site", a.site);
    expect(result.code).toBe(4);
    expect(result.err).toMatch(
      /no commits today\nNothing was committed or pushed: main, the index and the work tree are as they were before the run/,
    );
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(start);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
    expect(await readTree(path.join(a.site, "rendered"))).toEqual(before);
  });

  it("refuses a detached HEAD", async () => {
    const { a } = await renderedRemote();
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory");
    git(a.dir, "checkout", "--quiet", "--detach");
    const head = git(a.dir, "rev-parse", "HEAD");
    const result = await run("commit", "--site", a.site);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/refusing to commit: HEAD is detached/);
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(head);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
  });

  it("refuses hand edits in rendered/ and keeps them, but accepts what synth wrote", async () => {
    const { a } = await renderedRemote();
    const file = path.join(a.site, "rendered/clusters/edge-a/cluster-east/cluster-configmap.yaml");
    await writeFile(file, `${await readFile(file, "utf8")}# hand edit\n`);
    const refused = await run("commit", "--site", a.site);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      new RegExp(
        `${RENDERED}/ has uncommitted changes that are not what metalsynth renders \\(${RENDERED}/clusters/edge-a/cluster-east/cluster-configmap.yaml\\)`,
      ),
    );
    expect(await readFile(file, "utf8")).toMatch(/# hand edit\n$/);

    git(a.dir, "checkout", "--", RENDERED);
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory");
    expect((await run("synth", "--site", a.site)).code).toBe(0);
    const accepted = await run("commit", "--site", a.site);
    expect(accepted.code).toBe(0);
    expect(accepted.out).toMatch(/^edge-a\/cluster-east: Job kud-cluster-east replaced/m);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
  });

  it.each([
    [["--remote", "upstream"], /--remote, --branch and --retries only apply with --push/],
    [["--push", "--retries=-1"], /--retries must be a whole number/],
    [["--push", "--retries", "many"], /--retries must be a whole number/],
    [["--author-email", "<x>"], /--author-email must be one non-empty line without < or >/],
  ])("exits 2 on usage errors: %j", async (argv, message) => {
    const result = await run("commit", ...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });

  it("refuses a site outside any Git work tree", async () => {
    const site = await temporary("nogit");
    await copyExampleSite(site);
    const result = await run("commit", "--site", site);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/is not inside a Git work tree/);
  });
});
