/**
 * The Argo CD and Flux wiring point where `rendered/` really is in the site's Git work tree (issue
 * #35, decision 0055): a site in `sites/a/` of a real repository, an `--out` elsewhere in it, and an
 * `--out` outside any work tree, which keeps `rendered/clusters` and says so once.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { readTree } from "../../gitops/replace-dir.ts";
import { run } from "../run-cli.ts";
import { copyExampleSite } from "../support/example-site.ts";
import { configure, git, temporary } from "./repos.ts";

/**
 * A Git repository at `dir` with a copy of the example site in `sites/a/`, its `gitops.pathPrefix`
 * taken out (the example pins the one of a site at its repository's root).
 */
async function repositoryWithSite(dir: string): Promise<{ repo: string; site: string }> {
  await mkdir(dir, { recursive: true });
  git(dir, "init", "--quiet", "--initial-branch=main");
  configure(dir, "tester");
  const site = await copyExampleSite(path.join(dir, "sites", "a"));
  const settings = path.join(site, "metalsynth.yaml");
  const text = await readFile(settings, "utf8");
  if (!text.includes("  pathPrefix: rendered/clusters\n")) throw new Error(`${settings} has no pathPrefix`);
  await writeFile(settings, text.replace("  pathPrefix: rendered/clusters\n", ""));
  return { repo: dir, site };
}

/** The `spec.path` of every Flux Kustomization of a rendered tree, and the ApplicationSet's directories. */
function wiringPaths(tree: ReadonlyMap<string, string>): { flux: string[]; argocd: string[] } {
  const flux = [...tree]
    .filter(([file]) => file.startsWith("flux/"))
    .map(([, content]) => (parse(content) as { spec: { path: string } }).spec.path);
  const applicationSet = parse(tree.get("argocd/applicationset.yaml") ?? "") as {
    spec: { generators: { git: { directories: { path: string }[] } }[] };
  };
  const argocd = applicationSet.spec.generators.flatMap((generator) =>
    generator.git.directories.map((directory) => directory.path),
  );
  return { flux, argocd };
}

describe("the wiring follows the site's place in its Git work tree", () => {
  it("renders ./sites/a/rendered/clusters/… for a site in sites/a/, and each path names a directory synth wrote", async () => {
    const { repo, site } = await repositoryWithSite(await temporary("place"));
    const result = await run("synth", "--site", site);
    expect(result.code).toBe(0);
    expect(result.err).toBe("");
    const tree = await readTree(path.join(site, "rendered"));
    const { flux, argocd } = wiringPaths(tree);
    expect(flux).toEqual([
      "./sites/a/rendered/clusters/edge-a/cluster-east",
      "./sites/a/rendered/clusters/edge-a/cluster-west",
      "./sites/a/rendered/clusters/edge-sip/tenant-a",
    ]);
    for (const found of flux) expect(existsSync(path.join(repo, found)), found).toBe(true);
    expect(argocd).toEqual(["sites/a/rendered/clusters/*/*"]);
    // The Application's namespace is the path segment after the prefix's four.
    expect(tree.get("argocd/applicationset.yaml")).toContain('namespace: "{{ index .path.segments 4 }}"');

    expect(await run("validate", "--site", site)).toMatchObject({ code: 0, out: "" });
    expect(await run("diff", "--site", site, "--exit-code")).toMatchObject({ code: 0, err: "" });
  });

  it("renders the same tree in a clone elsewhere on disk: only the path inside the repository counts", async () => {
    const one = await repositoryWithSite(await temporary("place-one"));
    const two = await repositoryWithSite(path.join(await temporary("place-two"), "deeper", "clone"));
    for (const { site } of [one, two]) expect((await run("synth", "--site", site)).code).toBe(0);
    expect(await readTree(path.join(two.site, "rendered"))).toEqual(
      await readTree(path.join(one.site, "rendered")),
    );
  });

  it("follows an --out elsewhere in the repository, which need not exist yet", async () => {
    const { repo, site } = await repositoryWithSite(await temporary("place-out"));
    const out = path.join(repo, "deploy", "edge-a");
    expect((await run("synth", "--site", site, "--out", out)).code).toBe(0);
    const { flux, argocd } = wiringPaths(await readTree(out));
    expect(flux[0]).toBe("./deploy/edge-a/clusters/edge-a/cluster-east");
    expect(argocd).toEqual(["deploy/edge-a/clusters/*/*"]);
  });

  it("keeps rendered/clusters for an --out outside any work tree, and says so once", async () => {
    const { site } = await repositoryWithSite(await temporary("place-away"));
    const out = path.join(await temporary("place-elsewhere"), "rendered");
    const result = await run("synth", "--site", site, "--out", out);
    expect(result.code).toBe(0);
    const { flux, argocd } = wiringPaths(await readTree(out));
    expect(flux[0]).toBe("./rendered/clusters/edge-a/cluster-east");
    expect(argocd).toEqual(["rendered/clusters/*/*"]);
    expect(result.err).toBe(
      `metalsynth: note: ${out} is not inside a Git work tree, so the Argo CD and Flux wiring look for ` +
        "the cluster directories in rendered/clusters/ at the root of the repository; if they are " +
        "elsewhere in the repository the agents read, set gitops.pathPrefix in metalsynth.yaml\n",
    );
    const diff = await run("diff", "--site", site, "--out", out, "--exit-code");
    expect(diff.code).toBe(0);
    expect(diff.err.match(/note:/g)).toHaveLength(1);
  });
});
