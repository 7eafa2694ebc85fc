import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readTree } from "../../gitops/replace-dir.ts";
import {
  changeInventory,
  checkoutState,
  EAST_IP,
  edit,
  filesIn,
  git,
  installHook,
  makeRemote,
  RENDERED,
  renderedRemote,
  SITE_DIR,
  WEST_IP,
} from "./repos.ts";
import { run } from "../run-cli.ts";

describe("metalsynth commit --push", () => {
  it("pushes the first render from a subdirectory site, then finds nothing to do", async () => {
    const remote = await makeRemote();
    const a = await remote.clone("a");
    const first = await run("commit", "--site", a.site, "--push", "--author-name", "Site Bot");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/\npushed to origin main\n$/);
    expect(remote.log()).toEqual(["metalsynth: 3 clusters and gitops wiring", "site inputs"]);
    expect(git(a.dir, "log", "-1", "--format=%an <%ae>")).toBe("Site Bot <metalsynth@example.com>");
    expect(filesIn(remote.bare, "main", RENDERED)).toContain(`${RENDERED}/argocd/applicationset.yaml`);

    const again = await run("commit", "--site", a.site, "--push");
    expect(again.code).toBe(0);
    expect(again.out).toBe("nothing to commit: rendered/ is up to date on main\npushed to origin main\n");
    expect(remote.log()).toHaveLength(2);
  });

  it("pushes to the --remote and --branch given, leaving the remote's other branches alone", async () => {
    const remote = await makeRemote();
    const a = await remote.clone("a");
    git(a.dir, "remote", "rename", "origin", "upstream");
    const main = git(remote.bare, "rev-parse", "main");

    const result = await run(
      "commit",
      "--site",
      a.site,
      "--push",
      "--remote",
      "upstream",
      "--branch",
      "render",
    );
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/\npushed to upstream render\n$/);
    expect(git(remote.bare, "rev-parse", "render")).toBe(git(a.dir, "rev-parse", "HEAD"));
    expect(git(remote.bare, "rev-parse", "main")).toBe(main);
  });

  it("after losing a race with no local commits, resets to the remote and renders its inputs", async () => {
    const { remote, a, b } = await renderedRemote();
    await changeInventory(b.site, WEST_IP);
    git(b.dir, "commit", "--quiet", "-am", "inventory from b");
    git(b.dir, "push", "--quiet", "origin", "HEAD:main");

    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/push rejected \(.*\): fetching origin main, re-rendering \(retry 1 of 3\)/);
    expect(result.out).toMatch(/^edge-a\/cluster-west: Job kud-cluster-west replaced/m);
    expect(result.out).toMatch(/pushed to origin main after 1 retry\n$/);
    expect(remote.log().slice(0, 2)).toEqual(["metalsynth: edge-a/cluster-west", "inventory from b"]);
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(git(remote.bare, "rev-parse", "main"));
    expect(git(a.dir, "status", "--porcelain")).toBe("");
  });

  it("after losing a race with local commits, rebases them and renders both changes", async () => {
    const { remote, a, b } = await renderedRemote();
    await changeInventory(b.site, WEST_IP);
    git(b.dir, "commit", "--quiet", "-am", "inventory from b");
    git(b.dir, "push", "--quiet", "origin", "HEAD:main");
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory from a");

    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/rebased 1 local commit\(s\) onto origin main/);
    expect(remote.log().slice(0, 3)).toEqual([
      "metalsynth: edge-a/cluster-east, edge-a/cluster-west",
      "inventory from a",
      "inventory from b",
    ]);
    const lock = git(
      remote.bare,
      "show",
      `main:${RENDERED}/clusters/edge-a/cluster-west/cluster-configmap.yaml`,
    );
    expect(lock).toContain("172.22.0.77");
    expect(
      git(remote.bare, "show", `main:${RENDERED}/clusters/edge-a/cluster-east/cluster-configmap.yaml`),
    ).toContain("10.23.2.99");
  });

  it("fails cleanly when someone keeps pushing first, and leaves nothing behind", async () => {
    const { remote, a, b } = await renderedRemote();
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory from a");
    const start = git(a.dir, "rev-parse", "HEAD");
    const treeBefore = await readTree(path.join(a.site, "rendered"));
    // A racing pusher: each time a pushes, b lands a commit between a's ref advertisement and its update.
    await installHook(
      path.join(a.dir, ".git"),
      "pre-push",
      `unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
git -C "${b.dir}" commit --quiet --allow-empty -m race && git -C "${b.dir}" push --quiet origin HEAD:main`,
    );

    const result = await run("commit", "--site", a.site, "--push", "--retries", "2");
    expect(result.code).toBe(4);
    expect(result.err).toMatch(/retry 2 of 2/);
    expect(result.err).toMatch(
      /push to origin main was rejected 3 times \(.*failed to update ref.*\): others keep pushing first\. Nothing was committed or pushed; metalsynth took back its commit [0-9a-f]{12}: main, the index and the work tree are as they were before the run/,
    );
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(start);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
    expect(await readTree(path.join(a.site, "rendered"))).toEqual(treeBefore);
    expect(remote.log().slice(0, 3)).toEqual(["race", "race", "race"]);
    expect(git(remote.bare, "log", "--format=%s", "main")).not.toContain("edge-a/cluster-east");
  });

  it("does not retry a push the remote refuses for another reason", async () => {
    const { remote, a } = await renderedRemote();
    await installHook(remote.bare, "pre-receive", "echo 'branch is frozen' >&2; exit 1");
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory from a");
    const start = git(a.dir, "rev-parse", "HEAD");

    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(4);
    expect(result.err).not.toMatch(/retry/);
    expect(result.err).toMatch(
      /git push origin HEAD:main was refused:\n[\s\S]*branch is frozen[\s\S]*\nNothing was committed or pushed; metalsynth took back its commit [0-9a-f]{12}: main, the index and the work tree are as they were before the run \(what was staged is still staged\)\. Once the remote would accept it, run metalsynth commit --push again\n$/,
    );
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(start);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
  });

  it("leaves what was staged outside rendered/ staged when the push is refused", async () => {
    const { a } = await renderedRemote();
    await installHook(path.join(a.dir, ".git"), "pre-push", "exit 1");
    await changeInventory(a.site, EAST_IP);
    await writeFile(path.join(a.dir, "NOTES.md"), "v1\n");
    git(a.dir, "add", "NOTES.md");
    git(a.dir, "commit", "--quiet", "-am", "inventory from a, notes");
    // One file staged whole, one staged in part (the index and the work tree both differ from HEAD).
    await writeFile(path.join(a.dir, "todo.md"), "staged\n");
    git(a.dir, "add", "todo.md");
    await writeFile(path.join(a.dir, "NOTES.md"), "v2\n");
    git(a.dir, "add", "NOTES.md");
    await writeFile(path.join(a.dir, "NOTES.md"), "v3\n");
    const status = git(a.dir, "status", "--porcelain");
    expect(status).toBe("MM NOTES.md\nA  todo.md");
    const start = git(a.dir, "rev-parse", "HEAD");

    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(4);
    expect(result.err).toMatch(
      /git push origin HEAD:main was refused:\n[\s\S]*\nNothing was committed or pushed/,
    );
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(start);
    expect(git(a.dir, "status", "--porcelain")).toBe(status);
    expect(git(a.dir, "show", ":NOTES.md")).toBe("v2");
    expect(git(a.dir, "show", ":todo.md")).toBe("staged");
  });

  /**
   * The README's workflow (issue #35, case 4): an inventory change committed (and pushed, with
   * `pushed`), `metalsynth synth`, `git add rendered/` (all of it, or one file), then `commit --push`;
   * around it every other kind of local change: a new file staged inside the site and one outside
   * it, a tracked file modified and not staged, an untracked file.
   */
  async function synthAndStage(
    a: { dir: string; site: string },
    staged: "all" | "part",
    pushed = false,
  ): Promise<void> {
    await changeInventory(a.site, EAST_IP);
    await writeFile(path.join(a.dir, "NOTES.md"), "v1\n");
    git(a.dir, "add", "NOTES.md");
    git(a.dir, "commit", "--quiet", "-am", "inventory from a, notes");
    if (pushed) git(a.dir, "push", "--quiet", "origin", "HEAD:main");
    expect((await run("synth", "--site", a.site)).code).toBe(0);
    git(
      a.dir,
      "add",
      staged === "all" ? RENDERED : `${RENDERED}/clusters/edge-a/cluster-east/kud-installer.yaml`,
    );
    await writeFile(path.join(a.dir, "todo.md"), "staged\n");
    await writeFile(path.join(a.site, "CHANGELOG.md"), "staged in the site\n");
    git(a.dir, "add", "todo.md", `${SITE_DIR}/CHANGELOG.md`);
    await writeFile(path.join(a.dir, "NOTES.md"), "v2, not staged\n");
    await writeFile(path.join(a.dir, "scratch.txt"), "untracked\n");
  }

  it.each(["all", "part"] as const)(
    "leaves the index and the work tree as they were when the remote refuses the push (%s of rendered/ staged)",
    async (staged) => {
      const { remote, a } = await renderedRemote();
      await installHook(remote.bare, "pre-receive", "echo 'branch is protected' >&2; exit 1");
      await synthAndStage(a, staged);
      const before = await checkoutState(a.dir);
      expect(before.cached).toContain(`+++ b/${RENDERED}/clusters/edge-a/cluster-east/kud-installer.yaml`);
      expect(before.status).toMatch(/^M {2}edge\/site-a\/rendered\//m);
      const remoteBefore = git(remote.bare, "rev-parse", "main");

      const result = await run("commit", "--site", a.site, "--push");
      expect(result.code).toBe(4);
      expect(result.err).toMatch(/branch is protected/);
      expect(result.err).toMatch(
        /metalsynth took back its commit [0-9a-f]{12}: main, the index and the work tree/,
      );
      expect(await checkoutState(a.dir)).toEqual(before);
      expect(git(remote.bare, "rev-parse", "main")).toBe(remoteBefore);

      // Nothing was lost: once the remote takes it, the same command lands the staged render.
      await installHook(remote.bare, "pre-receive", "exit 0");
      expect((await run("commit", "--site", a.site, "--push")).code).toBe(0);
      expect(git(a.dir, "status", "--porcelain", "--untracked-files=all")).toBe(
        ` M NOTES.md\nA  ${SITE_DIR}/CHANGELOG.md\nA  todo.md\n?? scratch.txt`,
      );
      expect(remote.log()[0]).toBe("metalsynth: edge-a/cluster-east");
    },
  );

  it.each([
    ["pushed", true, /was rejected 2 times/],
    // A rebase does not start while anything is staged: the run stops after the first race.
    ["not pushed", false, /rebasing your 1 local commit\(s\) onto origin main failed/],
  ] as const)(
    "leaves the index and the work tree as they were when it cannot win the race (inputs %s)",
    async (_, pushed, reason) => {
      const { a, b } = await renderedRemote();
      await synthAndStage(a, "all", pushed);
      const before = await checkoutState(a.dir);
      await installHook(
        path.join(a.dir, ".git"),
        "pre-push",
        `unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
git -C "${b.dir}" pull --quiet --ff-only origin main && git -C "${b.dir}" commit --quiet --allow-empty -m race && git -C "${b.dir}" push --quiet origin HEAD:main`,
      );

      const result = await run("commit", "--site", a.site, "--push", "--retries", "1");
      expect(result.code).toBe(4);
      expect(result.err).toMatch(reason);
      expect(result.err).toMatch(/main, the index and the work tree are as they were before the run/);
      expect(await checkoutState(a.dir)).toEqual(before);
    },
  );

  it("keeps what was staged outside rendered/ staged through a lost race", async () => {
    const { remote, a, b } = await renderedRemote();
    await changeInventory(b.site, WEST_IP);
    git(b.dir, "commit", "--quiet", "-am", "inventory from b");
    git(b.dir, "push", "--quiet", "origin", "HEAD:main");
    await writeFile(path.join(a.dir, "todo.md"), "staged\n");
    git(a.dir, "add", "todo.md");
    await writeFile(path.join(a.dir, "todo.md"), "edited after staging\n");

    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/pushed to origin main after 1 retry\n$/);
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(git(remote.bare, "rev-parse", "main"));
    expect(git(a.dir, "status", "--porcelain")).toBe("AM todo.md");
    expect(git(a.dir, "show", ":todo.md")).toBe("staged");
    expect(filesIn(remote.bare, "main", ".")).not.toContain("todo.md");
  });

  it("never commits an invalid site, and leaves the remote untouched", async () => {
    const { remote, a } = await renderedRemote();
    await writeFile(
      path.join(a.site, "specs", "typo.yaml"),
      "apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: x, namespace: edge-a, labels: {cluster: x}}\nspec: {mastrs: []}\n",
    );
    git(a.dir, "add", ".");
    git(a.dir, "commit", "--quiet", "-m", "typo");
    const remoteBefore = git(remote.bare, "rev-parse", "main");

    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/error\[schema\] spec\.mastrs/);
    expect(result.err).toMatch(/nothing committed, nothing pushed/);
    expect(git(a.dir, "log", "-1", "--format=%s")).toBe("typo");
    expect(git(remote.bare, "rev-parse", "main")).toBe(remoteBefore);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
  });

  it("re-validates what it fetched: errors from the remote stop the retry and restore the branch", async () => {
    const { remote, a, b } = await renderedRemote();
    await edit(
      path.join(b.site, "specs/cluster-east/provisioning.yaml"),
      "PodSubnet: 10.244.64.0/18",
      "PodSubnet: 10.244.64.0/33",
    );
    git(b.dir, "commit", "--quiet", "-am", "bad subnet");
    git(b.dir, "push", "--quiet", "origin", "HEAD:main");
    await changeInventory(a.site, EAST_IP);
    git(a.dir, "commit", "--quiet", "-am", "inventory from a");
    const start = git(a.dir, "rev-parse", "HEAD");

    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/error\[pod-subnet\]/);
    expect(result.err).toMatch(/the errors came with the remote's changes/);
    expect(git(a.dir, "rev-parse", "HEAD")).toBe(start);
    expect(git(a.dir, "status", "--porcelain")).toBe("");
    expect(remote.log()[0]).toBe("bad subnet");
  });

  it("refuses to push a render of uncommitted inputs", async () => {
    const { a } = await renderedRemote();
    await changeInventory(a.site, EAST_IP);
    const result = await run("commit", "--site", a.site, "--push");
    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      /inputs have uncommitted changes \(edge\/site-a\/inventory\/hardwaredata\.yaml\)/,
    );
    expect(git(a.dir, "status", "--porcelain")).toBe(` M ${SITE_DIR}/inventory/hardwaredata.yaml`);
  });
});
