/**
 * `--staged` (decision 0054): `validate` and `diff` read the site as the Git index holds it, in real
 * repositories. The pre-commit hooks that use it run with the real pre-commit in
 * test/package/site-repo.test.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdir, rename, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { displayPath } from "../../gitops/files.ts";
import { run } from "../run-cli.ts";
import { copyExampleSite } from "../support/example-site.ts";
import {
  changeInventory,
  EAST_IP,
  edit,
  git,
  hostInNewFile,
  makeRemote,
  SITE_DIR,
  temporary,
} from "./repos.ts";

/** A clone whose site (in {@link SITE_DIR}) has its inputs committed and no rendered/ yet. */
async function checkout() {
  return (await makeRemote()).clone("a");
}

/** A path of the site as findings name it: relative to this process's directory. */
const shown = (site: string, file: string) => displayPath(path.join(site, file), process.cwd());

describe("validate --staged", () => {
  it("fails a staged Provisioning whose host is in an inventory file not added yet", async () => {
    const a = await checkout();
    const { inventory, spec } = await hostInNewFile(a.site);
    git(a.dir, "add", path.join(SITE_DIR, spec));
    expect(await run("validate", "--site", a.site)).toMatchObject({ code: 0 });

    const staged = await run("validate", "--site", a.site, "--staged");
    expect(staged.code).toBe(1);
    expect(staged.out).toBe(
      `${shown(a.site, spec)}:17:9: error[mac-unknown] spec.masters[1].master-2.mac-address: b8:ce:f6:79:4a:c0 ` +
        `matches no BareMetalHost (closest: b8:ce:f6:79:ea:c0 on metal3/r03-node-04)\n`,
    );

    git(a.dir, "add", path.join(SITE_DIR, inventory));
    expect(await run("validate", "--site", a.site, "--staged")).toMatchObject({ code: 0 });
  });

  it("ignores an untracked draft and an unstaged edit, and reads what is staged instead", async () => {
    const a = await checkout();
    const draft = "specs/draft.yaml";
    await writeFile(path.join(a.site, draft), "apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\n");
    const spec = path.join(a.site, "specs/cluster-east/provisioning.yaml");
    await edit(spec, "3c:fd:fe:13:f8:b8", "3c:fd:fe:13:00:00");
    expect((await run("validate", "--site", a.site)).code).toBe(1);
    expect(await run("validate", "--site", a.site, "--staged")).toMatchObject({
      code: 0,
      out: "",
      err: "metalsynth: no problems found\n",
    });

    git(a.dir, "add", path.join(SITE_DIR, draft));
    const staged = await run("validate", "--site", a.site, "--staged", "-o", "json");
    expect(staged.code).toBe(1);
    const files = (JSON.parse(staged.out) as { file: string }[]).map((finding) => finding.file);
    expect(new Set(files)).toEqual(new Set([shown(a.site, draft)]));
  });

  it("follows a staged link inside the site and names one that leaves it, as in the work tree", async () => {
    const a = await checkout();
    const { inventory } = await hostInNewFile(a.site);
    // The new host's file moves to hosts/, and inventory/ links to it.
    await mkdir(path.join(a.site, "hosts"));
    await rename(path.join(a.site, inventory), path.join(a.site, "hosts/r04-node-04.json"));
    await symlink("../hosts/r04-node-04.json", path.join(a.site, inventory));
    await writeFile(path.join(a.dir, "outside.yaml"), "{}\n");
    await symlink("../../../outside.yaml", path.join(a.site, "inventory/outside.yaml"));
    git(a.dir, "add", "--all");

    const unread = `${shown(a.site, "inventory/outside.yaml")}:1:1: error[file-unread] not read: symbolic link to ../../../outside.yaml`;
    const worktree = await run("validate", "--site", a.site);
    expect(worktree.code).toBe(1);
    expect(worktree.out).toContain(`${unread} leaves the directory`);
    const staged = await run("validate", "--site", a.site, "--staged");
    expect(staged.code).toBe(1);
    // One finding, the same file and rule; only the reason differs (the copy holds the site alone).
    expect(staged.out.split("\n").filter((line) => line !== "")).toEqual([`${unread}, which does not exist`]);
  });

  it.each([
    [["--specs", "specs"], /--staged reads the site's specs\/.*from the Git index; --specs names files/],
    [["--out", "elsewhere"], /--out names files in the work tree/],
  ])("refuses %j with it (exit 2)", async (flags, message) => {
    const a = await checkout();
    const result = await run("validate", "--site", a.site, "--staged", ...flags);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });

  it("refuses a site outside Git, and an index with unresolved conflicts (exit 2)", async () => {
    const plain = await copyExampleSite(path.join(await temporary("no-git"), "site"));
    const outside = await run("validate", "--site", plain, "--staged");
    expect(outside.code).toBe(2);
    expect(outside.err).toMatch(/--staged reads the Git index, and .* is not in a Git work tree/);

    const a = await checkout();
    const file = `${SITE_DIR}/specs/cluster-east/provisioning.yaml`;
    const blob = git(a.dir, "rev-parse", `:${file}`);
    git(a.dir, "rm", "--quiet", "--cached", file);
    const stages = [1, 2, 3].map((stage) => `100644 ${blob} ${stage}\t${file}`).join("\n");
    execGit(a.dir, ["update-index", "--index-info"], `${stages}\n`);
    const conflicted = await run("validate", "--site", a.site, "--staged");
    expect(conflicted.code).toBe(2);
    expect(conflicted.err).toMatch(
      new RegExp(`the index has unresolved merge conflicts \\(${file}\\): resolve them and git add`),
    );
  });
});

describe("diff --staged", () => {
  it("compares the index's render with the index's rendered/, in a site below the repository's root", async () => {
    const a = await checkout();
    const out = path.join(a.site, "rendered");
    // The wiring's paths then follow where rendered/ is in Git: edge/site-a/rendered/clusters.
    await edit(path.join(a.site, "metalsynth.yaml"), "  pathPrefix: rendered/clusters\n", "");
    git(a.dir, "commit", "--quiet", "-am", "the path prefix from Git");
    expect((await run("synth", "--site", a.site)).code).toBe(0);
    // Written, not staged: the commit would hold no rendered/.
    const unstaged = await run("diff", "--site", a.site, "--staged", "--exit-code");
    expect(unstaged.code).toBe(1);
    expect(unstaged.out).toMatch(new RegExp(`\\n${out}: \\d+ file\\(s\\) added, 0 changed, 0 removed\\n$`));

    git(a.dir, "add", path.join(SITE_DIR, "rendered"));
    // Up to date, the wiring's paths too (decision 0055), and without a note that Git was not found.
    expect(await run("diff", "--site", a.site, "--staged", "--exit-code")).toEqual({
      code: 0,
      out: `${out}: up to date\n`,
      err: "",
    });

    await changeInventory(a.site, EAST_IP);
    git(a.dir, "add", path.join(SITE_DIR, EAST_IP[0]));
    expect((await run("synth", "--site", a.site)).code).toBe(0);
    expect((await run("diff", "--site", a.site, "--exit-code")).code).toBe(0);
    const stale = await run("diff", "--site", a.site, "--staged", "--exit-code");
    expect(stale.code).toBe(1);
    expect(stale.out).toMatch(/^edge-a\/cluster-east \(changed\)$/m);

    git(a.dir, "add", path.join(SITE_DIR, "rendered"));
    expect((await run("diff", "--site", a.site, "--staged", "--exit-code")).code).toBe(0);
  });
});

/** Runs git with `input` on its standard input. */
function execGit(cwd: string, args: string[], input: string): void {
  execFileSync("git", args, { cwd, input });
}
