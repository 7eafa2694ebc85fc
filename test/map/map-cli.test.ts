import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configure, git } from "../git/repos.ts";
import { REPO } from "../harness.ts";
import { run } from "../run-cli.ts";
import { addEastWorker, copyExampleSite } from "../support/example-site.ts";

const EXAMPLE = path.join(REPO, "examples", "site");
const BROKEN = path.join(REPO, "examples", "broken");

async function scratch(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), "metalsynth-map-"));
}

/** The host tiles of a page: `[host id, classes]`, in page order. */
function tiles(html: string): [string, string][] {
  return [...html.matchAll(/<g class="(t [^"]*)" transform="[^"]*" data-s="[^"]*"><title>([^\n]*)\n/g)].map(
    (match) => [match[2] ?? "", match[1] ?? ""],
  );
}

describe("metalsynth map", () => {
  it("writes the example site's map: one tile per host, the same bytes every time", async () => {
    const dir = await scratch();
    const file = path.join(dir, "site.html");
    const result = await run("map", "--site", EXAMPLE, "--out", file);
    expect(result).toEqual({
      code: 0,
      out: `wrote ${file}: 24 hosts in 3 groups by vino.airshipit.org/rack, 3 clusters, 8 free, 0 with findings\n`,
      err: "",
    });
    const html = await readFile(file, "utf8");
    expect(tiles(html)).toHaveLength(24);
    expect(new Set(tiles(html).map(([host]) => host)).size).toBe(24);
    expect(html).not.toContain(dir);
    await run("map", "--site", path.relative(process.cwd(), EXAMPLE), "--out", `${file}.again`);
    expect(await readFile(`${file}.again`, "utf8")).toBe(html);
  });

  it("writes the map of a site with errors, marks the hosts they are about, and exits 1", async () => {
    const file = path.join(await scratch(), "broken.html");
    const result = await run("map", "--site", BROKEN, "--out", file);
    expect(result.code).toBe(1);
    expect(result.err).toBe(
      "metalsynth: 34 errors, 14 warnings, shown on the map ('metalsynth validate' lists them)\n",
    );
    const marked = tiles(await readFile(file, "utf8")).filter(([, classes]) =>
      classes.split(" ").includes("bad"),
    );
    expect(marked.map(([host]) => host)).toEqual([
      // copy-paste names it twice (mac-duplicate): it would serve as two nodes.
      "metal3/r01-node-08",
      "metal3/r02-node-03",
      "metal3/r02-node-06",
      "metal3/r03-node-03",
      "metal3/r03-node-05",
      "metal3/r05-node-01",
      "metal3/r05-node-02",
      "metal3/r05-node-03",
      "metal3/r05-node-04",
      "metal3/r05-node-05",
    ]);
  });

  it("groups by the label asked for and prints the page with --out -", async () => {
    const result = await run(
      "map",
      "--site",
      EXAMPLE,
      "--group-by",
      "vino.airshipit.org/flavor",
      "--out",
      "-",
    );
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/^wrote the map: 24 hosts in 3 groups by vino.airshipit.org\/flavor,/);
    expect(result.out).toMatch(/^<!doctype html>/);
    expect(result.out).toContain(`<span class="gname">no vino.airshipit.org/flavor</span>`);
  });

  it("marks the hosts changing hands against a given lock file", async () => {
    const dir = await scratch();
    const lock = path.join(dir, "old.lock.yaml");
    const committed = await readFile(path.join(EXAMPLE, "rendered", "metalsynth.lock.yaml"), "utf8");
    const extra =
      "  - host: metal3/r01-node-07\n    cluster: edge-a/cluster-gone\n    kind: bpa\n    role: worker\n    node: worker-1\n";
    await writeFile(lock, committed + extra);
    const file = path.join(dir, "diff.html");
    const result = await run("map", "--site", EXAMPLE, "--diff", lock, "--out", file);
    expect(result.code).toBe(0);
    expect(result.out).toContain(`1 changing hands against ${path.relative(process.cwd(), lock)}`);
    const moved = tiles(await readFile(file, "utf8")).filter(([, classes]) => classes.endsWith(" mv"));
    expect(moved.map(([host]) => host)).toEqual(["metal3/r01-node-07"]);
  });

  it("compares with HEAD's lock by default, inside a Git work tree", async () => {
    const repo = await scratch();
    git(repo, "init", "--quiet", "--initial-branch=main");
    configure(repo, "map");
    const site = await copyExampleSite(path.join(repo, "site"));
    expect((await run("synth", "--site", site)).code).toBe(0);
    git(repo, "add", ".");
    git(repo, "commit", "--quiet", "-m", "site");
    await addEastWorker(site);
    // rendered/ on disk changes too: the comparison must be with HEAD's lock, not this one.
    expect((await run("synth", "--site", site)).code).toBe(0);
    const file = path.join(repo, "map.html");
    const result = await run("map", "--site", site, "--diff", "--out", file);
    expect(result.out).toContain("1 changing hands against HEAD:site/rendered/metalsynth.lock.yaml");
    const html = await readFile(file, "utf8");
    expect(html).toMatch(/<td>metal3\/r02-node-08<\/td><td>free<\/td><td>edge-a\/cluster-east<\/td>/);
  });

  it("refuses --diff without a lock file outside Git, and options it does not have", async () => {
    const site = await copyExampleSite();
    try {
      const outside = await run("map", "--site", site, "--diff", "--out", path.join(site, "m.html"));
      expect(outside.code).toBe(2);
      expect(outside.err).toMatch(
        /--diff without a lock file compares with HEAD's, but .* is not in a Git work tree/,
      );
      expect((await run("map", "--site", site, "--format", "json")).code).toBe(2);
      const damaged = path.join(site, "damaged.yaml");
      await writeFile(damaged, "kind: Something\n");
      const bad = await run("map", "--site", site, "--diff", damaged, "--out", path.join(site, "m.html"));
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(/^metalsynth map: --diff: .*damaged lock file/);
    } finally {
      await rm(site, { recursive: true, force: true });
    }
  });

  it("is written by diff --map too, against the lock in rendered/", async () => {
    const site = await copyExampleSite();
    expect((await run("synth", "--site", site)).code).toBe(0);
    await addEastWorker(site);
    const file = path.join(site, "diff-map.html");
    const result = await run("diff", "--site", site, "--map", file);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^edge-a\/cluster-east \(changed\)/);
    expect(result.err).toContain(
      `1 changing hands against ${path.relative(process.cwd(), site)}/rendered/metalsynth.lock.yaml`,
    );
    const moved = tiles(await readFile(file, "utf8")).filter(([, classes]) => classes.endsWith(" mv"));
    expect(moved.map(([host]) => host)).toEqual(["metal3/r02-node-08"]);
    expect((await run("diff", "--site", site, "--map", "-")).code).toBe(2);
  });
});
