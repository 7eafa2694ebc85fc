import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listInputFiles, systemReason } from "./files.ts";

let dir: string;
let site: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "metalsynth-files-"));
  site = path.join(dir, "site");
  await mkdir(path.join(site, "specs", "nested"), { recursive: true });
  await mkdir(path.join(site, "shared"), { recursive: true });
  await mkdir(path.join(dir, "outside"), { recursive: true });
  await writeFile(path.join(site, "specs", "a.yaml"), "kind: A\n");
  await writeFile(path.join(site, "specs", "notes.txt"), "not read\n");
  await writeFile(path.join(site, "shared", "common.yaml"), "kind: C\n");
  await writeFile(path.join(dir, "outside", "x.yaml"), "kind: X\n");
  // Inside the site: followed, whether to a file or a directory.
  await symlink("../shared/common.yaml", path.join(site, "specs", "common.yaml"));
  await symlink("../../shared", path.join(site, "specs", "nested", "shared"));
  // Leaving the site, dangling, looping: not read, each with its reason.
  await symlink(path.join(dir, "outside", "x.yaml"), path.join(site, "specs", "outside.yaml"));
  await symlink(path.join(dir, "outside"), path.join(site, "specs", "outside-dir"));
  await symlink("missing.yaml", path.join(site, "specs", "dangling.yaml"));
  await symlink("self.yaml", path.join(site, "specs", "self.yaml"));
  await symlink("..", path.join(site, "specs", "nested", "up"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("listInputFiles", () => {
  it("follows links that stay inside the site and reports every path it does not read", async () => {
    const listing = await listInputFiles([path.join(site, "specs")], { site, relativeTo: dir });
    expect(listing.missing).toEqual([]);
    expect(listing.files.map((file) => file.display)).toEqual([
      "site/specs/a.yaml",
      // shared/common.yaml is reached twice (a file link and a directory link): read once.
      "site/specs/common.yaml",
    ]);
    expect(listing.unread.map((entry) => `${entry.display}: ${entry.reason}`)).toEqual([
      "site/specs/dangling.yaml: symbolic link to missing.yaml, which does not exist",
      "site/specs/nested/up: symbolic link loops back to site/specs",
      `site/specs/outside-dir: symbolic link to ${path.join(dir, "outside")} leaves the directory site; copy the file in, or point the link inside it`,
      `site/specs/outside.yaml: symbolic link to ${path.join(dir, "outside", "x.yaml")} leaves the directory site; copy the file in, or point the link inside it`,
      "site/specs/self.yaml: symbolic link loop (self.yaml)",
    ]);
  });

  it("reads a path named outside the site, links inside it included, and reports a named missing path", async () => {
    const listing = await listInputFiles([path.join(dir, "outside"), path.join(dir, "nope")], {
      site,
      relativeTo: dir,
    });
    expect(listing.files.map((file) => file.display)).toEqual(["outside/x.yaml"]);
    expect(listing.missing).toEqual([path.join(dir, "nope")]);
  });

  it("reports a FIFO instead of blocking on it", async () => {
    const fifo = path.join(site, "specs", "pipe.yaml");
    try {
      execFileSync("mkfifo", [fifo]);
    } catch {
      return; // no mkfifo here
    }
    try {
      const listing = await listInputFiles([path.join(site, "specs")], { site, relativeTo: dir });
      expect(listing.unread).toContainEqual({
        display: "site/specs/pipe.yaml",
        reason: "not a regular file (a FIFO, socket or device)",
      });
    } finally {
      await rm(fifo);
    }
  });

  it("matches globs against the paths as reached", async () => {
    const listing = await listInputFiles([`${path.join(site, "specs")}/*.yaml`], { site, relativeTo: dir });
    expect(listing.files.map((file) => file.display)).toEqual([
      "site/specs/a.yaml",
      "site/specs/common.yaml",
    ]);
    expect(listing.unread.map((entry) => entry.display)).toEqual([
      "site/specs/dangling.yaml",
      "site/specs/outside.yaml",
      "site/specs/self.yaml",
    ]);
  });
});

describe("systemReason", () => {
  it.each([
    ["EACCES", "permission denied"],
    ["EISDIR", "is a directory, not a file"],
    ["ENOENT", "no such file or directory"],
    ["ELOOP", "symbolic link loop"],
  ])("turns %s into a short reason", (code, reason) => {
    expect(systemReason(Object.assign(new Error(`${code}: raw message, open '/x'`), { code }))).toBe(reason);
  });
});

describe("globs", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "metalsynth-globs-"));
    for (const file of [
      "provisioning.yaml",
      "software.yaml",
      "cluster.yaml",
      "specs/east/provisioning.yaml",
      "specs/east/Upper.yaml",
      "specs/east/.hidden.yaml",
      "specs/west/software.yml",
      "specs/west/deep/more.yaml",
      "specs/top.json",
    ]) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), "kind: A\n");
    }
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it.each([
    ["specs/*/[a-z]*.yaml", ["specs/east/provisioning.yaml"]],
    ["{provisioning,software}.yaml", ["provisioning.yaml", "software.yaml"]],
    ["./{provisioning,cluster}.yaml", ["cluster.yaml", "provisioning.yaml"]],
    [
      "specs/*/*.{yaml,yml}",
      [
        "specs/east/.hidden.yaml",
        "specs/east/provisioning.yaml",
        "specs/east/Upper.yaml",
        "specs/west/software.yml",
      ],
    ],
    [
      "specs/**/*.yaml",
      [
        "specs/east/.hidden.yaml",
        "specs/east/provisioning.yaml",
        "specs/east/Upper.yaml",
        "specs/west/deep/more.yaml",
      ],
    ],
    ["specs/?est/*", ["specs/west/software.yml"]],
    ["specs/e*/[A-Z]*", ["specs/east/Upper.yaml"]],
    ["specs/*.json", ["specs/top.json"]],
  ])("%s matches %j", async (pattern, expected) => {
    // Relative to the current directory, as a user types them.
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const relative = await listInputFiles([pattern], { relativeTo: root, site: root });
      expect(relative.files.map((file) => file.display)).toEqual([...expected].sort());
      expect(relative.missing).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it("reports a glob that matches nothing as missing", async () => {
    const listing = await listInputFiles([path.join(root, "specs/*/[0-9]*.yaml")], { site: root });
    expect(listing.missing).toEqual([path.join(root, "specs/*/[0-9]*.yaml")]);
  });
});
