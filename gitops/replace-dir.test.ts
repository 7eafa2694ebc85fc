import { spawnSync } from "node:child_process";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UsageError } from "./errors.ts";
import { readTree, replaceDirAtomically, type ExistingTree } from "./replace-dir.ts";

const LOCK = "metalsynth.lock.yaml";
/** A date no write in these tests can produce, so "kept its mtime" cannot pass by coincidence. */
const LONG_AGO = new Date("2001-02-03T04:05:06Z");

let parent: string;
let out: string;

beforeEach(async () => {
  parent = await mkdtemp(path.join(os.tmpdir(), "replace-dir-"));
  out = path.join(parent, "rendered");
});

afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

/** A small rendered tree; `overrides` replaces (string) or drops (undefined) entries. */
function makeTree(overrides: Record<string, string | undefined> = {}): Map<string, string> {
  const base: Record<string, string | undefined> = {
    [LOCK]: "clusters: {}\n",
    "argocd/applicationset.yaml": "kind: ApplicationSet\n",
    "clusters/site-a/cluster-a/kustomization.yaml": "resources:\n  - kud-installer.yaml\n",
    "clusters/site-a/cluster-a/kud-installer.yaml": "kind: Job\n",
    "clusters/site-a/cluster-b/kustomization.yaml": "resources: []\n",
    "flux/site-a-cluster-a.yaml": "kind: Kustomization\n",
  };
  const merged = { ...base, ...overrides };
  const entries = Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return new Map(entries);
}

/** The id of a process that has ended (a child that ran `true`). */
async function deadPid(): Promise<number> {
  const child = spawnSync("true");
  return child.pid ?? 2 ** 22 + 1; // above Linux's pid_max when spawning failed
}

/** Inode and mtime of every file, to tell "the same file" from "a file with the same bytes". */
async function identities(dir: string): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  for (const file of (await readTree(dir)).keys()) {
    const info = await stat(path.join(dir, file));
    result.set(file, `${info.ino}@${info.mtimeMs}`);
  }
  return result;
}

/** Ages every file, so a later rewrite shows up as a new mtime. */
async function age(dir: string): Promise<void> {
  for (const file of (await readTree(dir)).keys()) await utimes(path.join(dir, file), LONG_AGO, LONG_AGO);
}

async function mtimeOf(file: string): Promise<number> {
  return (await stat(path.join(out, file))).mtimeMs;
}

/** What sits next to `out`: only `rendered` itself once a write has finished or failed cleanly. */
async function siblings(): Promise<string[]> {
  return (await readdir(parent)).sort();
}

describe("replaceDirAtomically", () => {
  it("creates the tree on the first write", async () => {
    const files = makeTree();

    const change = await replaceDirAtomically(out, files);

    expect(await readTree(out)).toEqual(files);
    expect(change).toEqual({ added: [...files.keys()].sort(), changed: [], removed: [], unchanged: 0 });
    expect(await siblings()).toEqual(["rendered"]);
  });

  it("creates missing parent directories", async () => {
    const deep = path.join(parent, "a", "b", "rendered");

    await replaceDirAtomically(deep, makeTree());

    expect(await readTree(deep)).toEqual(makeTree());
  });

  it("does not touch the tree when nothing changed", async () => {
    await replaceDirAtomically(out, makeTree());
    await age(out);
    const directory = (await stat(out)).ino;
    const before = await identities(out);

    const change = await replaceDirAtomically(out, makeTree());

    expect(change).toEqual({ added: [], changed: [], removed: [], unchanged: makeTree().size });
    expect((await stat(out)).ino).toBe(directory);
    expect(await identities(out)).toEqual(before);
    expect(await mtimeOf(LOCK)).toBe(LONG_AGO.getTime());
    expect(await siblings()).toEqual(["rendered"]);
  });

  it("rewrites only the file that changed; the others stay the same files", async () => {
    await replaceDirAtomically(out, makeTree());
    await age(out);
    const before = await identities(out);
    const files = makeTree({ "clusters/site-a/cluster-a/kud-installer.yaml": "kind: Job\nspec: {}\n" });

    const change = await replaceDirAtomically(out, files);

    expect(change).toEqual({
      added: [],
      changed: ["clusters/site-a/cluster-a/kud-installer.yaml"],
      removed: [],
      unchanged: files.size - 1,
    });
    expect(await readTree(out)).toEqual(files);
    const after = await identities(out);
    for (const file of files.keys()) {
      if (file === "clusters/site-a/cluster-a/kud-installer.yaml")
        expect(after.get(file)).not.toBe(before.get(file));
      else expect(after.get(file), file).toBe(before.get(file));
    }
    expect(await siblings()).toEqual(["rendered"]);
  });

  it("adds new files and directories next to kept ones", async () => {
    await replaceDirAtomically(out, makeTree());
    const files = makeTree({ "clusters/site-b/cluster-c/jumphost.yaml": "kind: Deployment\n" });

    const change = await replaceDirAtomically(out, files);

    expect(change).toEqual({
      added: ["clusters/site-b/cluster-c/jumphost.yaml"],
      changed: [],
      removed: [],
      unchanged: files.size - 1,
    });
    expect(await readTree(out)).toEqual(files);
  });

  it("removes files that are no longer in the tree, and directories they leave empty", async () => {
    await replaceDirAtomically(out, makeTree());
    const files = makeTree({ "clusters/site-a/cluster-b/kustomization.yaml": undefined });

    const change = await replaceDirAtomically(out, files);

    expect(change).toEqual({
      added: [],
      changed: [],
      removed: ["clusters/site-a/cluster-b/kustomization.yaml"],
      unchanged: files.size,
    });
    expect(await readTree(out)).toEqual(files);
    expect(await readdir(path.join(out, "clusters/site-a"))).toEqual(["cluster-a"]);
  });

  it("removes stray empty directories and special files even when no tracked file changed", async () => {
    await replaceDirAtomically(out, makeTree());
    await mkdir(path.join(out, "clusters/empty/dir"), { recursive: true });
    await symlink(LOCK, path.join(out, "link.yaml"));

    const change = await replaceDirAtomically(out, makeTree());

    expect(change).toEqual({ added: [], changed: [], removed: ["link.yaml"], unchanged: makeTree().size });
    expect(await readdir(path.join(out, "clusters"))).toEqual(["site-a"]);
    expect(await readdir(out)).not.toContain("link.yaml");
  });

  it("keeps paths sorted in nested trees, whatever order the map has", async () => {
    const files = new Map([
      ["z/y/x/w.yaml", "w\n"],
      [LOCK, "lock\n"],
      ["a/b.yaml", "b\n"],
      ["a/a/a.yaml", "a\n"],
    ]);

    const change = await replaceDirAtomically(out, files);

    expect(change.added).toEqual(["a/a/a.yaml", "a/b.yaml", LOCK, "z/y/x/w.yaml"]);
    expect([...(await readTree(out)).keys()]).toEqual(["a/a/a.yaml", "a/b.yaml", LOCK, "z/y/x/w.yaml"]);
  });

  it("writes an empty map as an empty directory", async () => {
    await replaceDirAtomically(out, makeTree());

    const change = await replaceDirAtomically(out, new Map());

    expect(change.removed).toHaveLength(makeTree().size);
    expect(await readdir(out)).toEqual([]);
  });

  it("writes content as UTF-8 bytes", async () => {
    await replaceDirAtomically(out, makeTree({ "notes.yaml": "name: größe ✓\n" }));

    expect((await readTree(out)).get("notes.yaml")).toBe("name: größe ✓\n");
    expect((await stat(path.join(out, "notes.yaml"))).size).toBe(Buffer.byteLength("name: größe ✓\n"));
  });

  it("keeps the files the caller kept as the same files, without reading them", async () => {
    await replaceDirAtomically(out, makeTree());
    await age(out);
    const before = await identities(out);
    const installer = "clusters/site-a/cluster-a/kud-installer.yaml";
    // Unreadable: the writer must take the caller's word for its bytes.
    await chmod(path.join(out, installer), 0o000);
    const files = makeTree({ [installer]: undefined, [LOCK]: "clusters: {b: 2}\n" });

    const change = await replaceDirAtomically(out, files, { kept: new Set([installer]) });

    expect(change).toEqual({ added: [], changed: [LOCK], removed: [], unchanged: files.size });
    expect((await identities(out)).get(installer)).toBe(before.get(installer));
    await chmod(path.join(out, installer), 0o644);
    expect((await readTree(out)).get(installer)).toBe("kind: Job\n");
  });

  it("copies a kept file that is a link into the tree as a regular file", async () => {
    await replaceDirAtomically(out, makeTree());
    const flux = "flux/site-a-cluster-a.yaml";
    await writeFile(path.join(parent, "elsewhere.yaml"), "kind: Kustomization\n");
    await rm(path.join(out, flux));
    await symlink(path.join(parent, "elsewhere.yaml"), path.join(out, flux));

    const change = await replaceDirAtomically(out, makeTree({ [flux]: undefined }), {
      kept: new Set([flux]),
    });

    expect(change.changed).toEqual([flux]);
    expect((await lstat(path.join(out, flux))).isFile()).toBe(true);
    expect((await readTree(out)).get(flux)).toBe("kind: Kustomization\n");
  });

  it("writes through a symbolic link to the real directory, keeping the link", async () => {
    const real = path.join(parent, "real-rendered");
    await replaceDirAtomically(real, makeTree());
    await symlink(real, out);

    await replaceDirAtomically(out, makeTree({ [LOCK]: "clusters: {a: 1}\n" }));

    expect((await readTree(real)).get(LOCK)).toBe("clusters: {a: 1}\n");
    expect((await stat(out)).isDirectory()).toBe(true);
    expect(await siblings()).toEqual(["real-rendered", "rendered"]);
  });
});

describe("replaceDirAtomically when interrupted", () => {
  const next = makeTree({
    "clusters/site-a/cluster-a/kud-installer.yaml": "kind: Job\nspec: {changed: true}\n",
    "clusters/site-a/cluster-b/kustomization.yaml": undefined,
    "clusters/site-b/cluster-c/kustomization.yaml": "resources: []\n",
  });
  const size = next.size;

  it.each([
    ["before any file", 0],
    ["after one file", 1],
    ["half way", Math.floor(size / 2)],
    ["after all but one file", size - 1],
    ["between the two renames", size],
  ])("leaves the previous tree byte-identical when failing %s", async (_label, failAfter) => {
    await replaceDirAtomically(out, makeTree());
    await age(out);
    const before = await identities(out);

    await expect(replaceDirAtomically(out, next, { failAfter })).rejects.toThrow(/injected failure/);

    expect(await readTree(out)).toEqual(makeTree());
    expect(await identities(out)).toEqual(before);
    expect(await siblings()).toEqual(["rendered"]);
  });

  it.each([0, 1, size])(
    "leaves nothing behind when the first write fails after %i file(s)",
    async (failAfter) => {
      await expect(replaceDirAtomically(out, next, { failAfter })).rejects.toThrow(/injected failure/);

      expect(await siblings()).toEqual([]);
    },
  );

  it("succeeds on the next run after an interrupted one", async () => {
    await replaceDirAtomically(out, makeTree());
    await expect(replaceDirAtomically(out, next, { failAfter: 2 })).rejects.toThrow();

    const change = await replaceDirAtomically(out, next);

    expect(change.changed).toEqual(["clusters/site-a/cluster-a/kud-installer.yaml"]);
    expect(await readTree(out)).toEqual(next);
  });

  it("removes temporary and old trees left by a crashed run, and nothing else", async () => {
    await replaceDirAtomically(out, makeTree());
    const dead = await deadPid();
    for (const debris of [`.rendered.tmp-${dead}-0/clusters`, `.rendered.old-${dead}-1/flux`]) {
      await mkdir(path.join(parent, debris), { recursive: true });
      await writeFile(path.join(parent, debris, "half.yaml"), "kind: Half");
    }
    await mkdir(path.join(parent, ".renderedx.tmp-1"));
    await writeFile(path.join(parent, ".rendered-notes"), "mine");

    await replaceDirAtomically(out, makeTree());

    expect(await siblings()).toEqual([".rendered-notes", ".renderedx.tmp-1", "rendered"]);
  });

  it("leaves the temporary directories of a writer that still runs alone", async () => {
    // The parent process (the test runner) runs: its directory is not debris.
    const live = `.rendered.tmp-${process.ppid}-0`;
    await mkdir(path.join(parent, live));

    await replaceDirAtomically(out, makeTree());

    expect(await siblings()).toEqual([live, "rendered"]);
  });

  it.each([
    ["before any file", 0],
    ["half way", Math.floor(size / 2)],
    ["between the two renames", size],
  ])(
    "when its signal is aborted %s, removes its temporary tree and keeps the previous one",
    async (_label, at) => {
      await replaceDirAtomically(out, makeTree());
      await age(out);
      const before = await identities(out);
      const controller = new AbortController();

      const replacing = replaceDirAtomically(out, next, {
        signal: controller.signal,
        onPlaced: (placed) => {
          if (placed === at) controller.abort(new Error("interrupted"));
        },
      });

      await expect(replacing).rejects.toThrow(/^interrupted$/);
      expect(await readTree(out)).toEqual(makeTree());
      expect(await identities(out)).toEqual(before);
      expect(await siblings()).toEqual(["rendered"]);
    },
  );

  it("starts nothing when its signal is aborted already", async () => {
    await replaceDirAtomically(out, makeTree());

    await expect(replaceDirAtomically(out, next, { signal: AbortSignal.abort() })).rejects.toThrow(/abort/);

    expect(await readTree(out)).toEqual(makeTree());
    expect(await siblings()).toEqual(["rendered"]);
  });

  it("restores the previous tree when a crash came between the two renames", async () => {
    await replaceDirAtomically(out, makeTree());
    // What a process killed between "out → old" and "temp → out" leaves behind.
    await rename(out, path.join(parent, ".rendered.old-99999-3"));
    await mkdir(path.join(parent, ".rendered.tmp-99999-3"));

    const change = await replaceDirAtomically(out, next);

    expect(change).toEqual({
      added: ["clusters/site-b/cluster-c/kustomization.yaml"],
      changed: ["clusters/site-a/cluster-a/kud-installer.yaml"],
      removed: ["clusters/site-a/cluster-b/kustomization.yaml"],
      unchanged: size - 2,
    });
    expect(await readTree(out)).toEqual(next);
    expect(await siblings()).toEqual(["rendered"]);
  });
});

describe("replaceDirAtomically when a few files of a large tree change (in place, decision 0057)", () => {
  /** A tree of 40 files, so that three changes are a small patch. */
  const large = (overrides: Record<string, string | undefined> = {}) => {
    const extra = Object.fromEntries(
      Array.from({ length: 34 }, (_, index) => [
        `clusters/site-c/c${index}/kustomization.yaml`,
        `n: ${index}\n`,
      ]),
    );
    return makeTree({ ...extra, ...overrides });
  };
  const next = large({
    "clusters/site-a/cluster-a/kud-installer.yaml": "kind: Job\nspec: {changed: true}\n",
    "clusters/site-a/cluster-b/kustomization.yaml": undefined,
    "clusters/site-d/new/kustomization.yaml": "resources: []\n",
  });
  const written = 2; // the changed file and the added one

  it("changes only those files, in the same directory", async () => {
    await replaceDirAtomically(out, large());
    await age(out);
    const before = await identities(out);
    const directory = (await stat(out)).ino;

    const change = await replaceDirAtomically(out, next);

    expect(change).toEqual({
      added: ["clusters/site-d/new/kustomization.yaml"],
      changed: ["clusters/site-a/cluster-a/kud-installer.yaml"],
      removed: ["clusters/site-a/cluster-b/kustomization.yaml"],
      unchanged: next.size - 2,
    });
    expect(await readTree(out)).toEqual(next);
    expect((await stat(out)).ino).toBe(directory);
    const after = await identities(out);
    for (const file of next.keys())
      if (!change.added.includes(file) && !change.changed.includes(file))
        expect(after.get(file), file).toBe(before.get(file));
    expect(await readdir(path.join(out, "clusters/site-a"))).toEqual(["cluster-a"]);
    expect(await siblings()).toEqual(["rendered"]);
  });

  it.each([0, 1, written])(
    "leaves the previous tree as it was when failing after %i file(s), before its commit point",
    async (failAfter) => {
      await replaceDirAtomically(out, large());
      await age(out);
      const before = await identities(out);

      await expect(replaceDirAtomically(out, next, { failAfter })).rejects.toThrow(/injected failure/);

      expect(await readTree(out)).toEqual(large());
      expect(await identities(out)).toEqual(before);
      expect(await siblings()).toEqual(["rendered"]);
    },
  );

  it("leaves the previous tree as it was when its signal is aborted before its commit point", async () => {
    await replaceDirAtomically(out, large());
    const controller = new AbortController();

    const replacing = replaceDirAtomically(out, next, {
      signal: controller.signal,
      onPlaced: (placed) => {
        if (placed === 1) controller.abort(new Error("interrupted"));
      },
    });

    await expect(replacing).rejects.toThrow(/^interrupted$/);
    expect(await readTree(out)).toEqual(large());
    expect(await siblings()).toEqual(["rendered"]);
  });

  it("finishes the journal of a run killed after its commit point, then writes its own change", async () => {
    await replaceDirAtomically(out, large());
    // What a process killed while applying its journal leaves: one file renamed in, one still there.
    const dead = await deadPid();
    const journal = path.join(parent, `.rendered.new-${dead}-0`);
    await mkdir(path.join(journal, "tree/clusters/site-d/new"), { recursive: true });
    await writeFile(path.join(journal, "tree/clusters/site-d/new/kustomization.yaml"), "resources: []\n");
    await writeFile(
      path.join(out, "clusters/site-a/cluster-a/kud-installer.yaml"),
      "kind: Job\nspec: {changed: true}\n",
    );
    const manifest = {
      writes: [],
      removed: ["clusters/site-a/cluster-b/kustomization.yaml"],
      leftovers: ["clusters/site-a/cluster-b"],
    };
    await writeFile(path.join(journal, ".manifest.json"), JSON.stringify(manifest));

    // Recovery alone gives the tree that run wrote: this run has nothing left to change.
    const change = await replaceDirAtomically(out, next);

    expect(change).toEqual({ added: [], changed: [], removed: [], unchanged: next.size });
    expect(await readTree(out)).toEqual(next);
    expect(await siblings()).toEqual(["rendered"]);
  });
});

describe("replaceDirAtomically refuses", () => {
  it("a directory path that is a file", async () => {
    await writeFile(out, "not a directory");

    await expect(replaceDirAtomically(out, makeTree())).rejects.toThrow(UsageError);
    await expect(replaceDirAtomically(out, makeTree())).rejects.toThrow(/exists and is not a directory/);
    expect(await siblings()).toEqual(["rendered"]);
  });

  it("whatever checkPrevious refuses, before anything is written", async () => {
    await replaceDirAtomically(out, makeTree());
    const before = await identities(out);
    const seen: string[] = [];
    const checkPrevious = async (previous: ExistingTree) => {
      seen.push(previous.dir, ...previous.files, (await previous.read(LOCK)).toString());
      throw new Error("not mine");
    };

    await expect(replaceDirAtomically(out, new Map(), { checkPrevious })).rejects.toThrow(/not mine/);

    expect(seen).toEqual([await realpath(out), ...[...makeTree().keys()].sort(), "clusters: {}\n"]);
    expect(await identities(out)).toEqual(before);
    expect(await siblings()).toEqual(["rendered"]);
  });

  it("nothing when the directory exists but is empty", async () => {
    await mkdir(out);

    const change = await replaceDirAtomically(out, makeTree());

    expect(change.added).toHaveLength(makeTree().size);
  });

  it.each([
    "/etc/passwd",
    "../escape.yaml",
    "a//b.yaml",
    "a/./b.yaml",
    "a/../b.yaml",
    "a\\b.yaml",
    "",
    "dir/",
  ])("the path %j", async (bad) => {
    await expect(replaceDirAtomically(out, makeTree({ [bad]: "x" }))).rejects.toThrow(
      /not a relative POSIX path/,
    );
    expect(await siblings()).toEqual([]);
  });

  it("a path that is both a file and a directory", async () => {
    await expect(replaceDirAtomically(out, makeTree({ clusters: "x" }))).rejects.toThrow(
      /both a file and a directory/,
    );
  });
});

describe("readTree", () => {
  it("is empty when the directory does not exist", async () => {
    expect(await readTree(out)).toEqual(new Map());
  });

  it("throws when the path is not a directory", async () => {
    await writeFile(out, "x");

    await expect(readTree(out)).rejects.toThrow(/not a directory/);
  });
});
