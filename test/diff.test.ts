import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readTree } from "../gitops/replace-dir.ts";
import { edit } from "./git/repos.ts";
import { run } from "./run-cli.ts";
import { addEastWorker, copyExampleSite } from "./support/example-site.ts";

async function siteCopy(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-diff-"));
  await copyExampleSite(dir);
  return dir;
}

describe("metalsynth diff", () => {
  it("shows everything as added when rendered/ does not exist yet, and writes nothing", async () => {
    const site = await siteCopy();
    const result = await run("diff", "--site", site, "--exit-code");
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /^edge-a\/cluster-east \(added\)\n {2}\+ host {4}master master-1=metal3\/r01-node-04\n/,
    );
    expect(result.out).toMatch(/^ {2}\+ object {2}Job edge-a\/kud-cluster-east-[0-9a-f]{8}$/m);
    expect(result.out).toMatch(/^gitops wiring\n {2}\+ object {2}ApplicationSet argocd\//m);
    expect(result.out).toMatch(/rendered: \d+ file\(s\) added, 0 changed, 0 removed\n$/);
    expect((await readTree(path.join(site, "rendered"))).size).toBe(0);
  });

  it("is quiet and exits 0 with --exit-code when rendered/ is up to date", async () => {
    const site = await siteCopy();
    expect((await run("synth", "--site", site)).code).toBe(0);
    const result = await run("diff", "--site", site, "--exit-code");
    expect(result).toMatchObject({ code: 0, out: `${path.join(site, "rendered")}: up to date\n` });
  });

  it("reports a host added to a cluster, the objects it touches, and exits 0 without --exit-code", async () => {
    const site = await siteCopy();
    await run("synth", "--site", site);
    await addEastWorker(site);
    const result = await run("diff", "--site", site);
    expect(result.code).toBe(0);
    const lines = result.out.split("\n");
    expect(lines[0]).toBe("edge-a/cluster-east (changed)");
    expect(lines[1]).toMatch(/^ {2}\+ host {4}worker worker-3=metal3\/r\d\d-node-\d\d$/);
    expect(result.out).toMatch(/^ {2}~ object {2}ConfigMap edge-a\/cluster-east-hosts-ini$/m);
    expect(result.out).toMatch(/^ {2}- object {2}Job edge-a\/kud-cluster-east-[0-9a-f]{8}$/m);
    expect(result.out).not.toMatch(/cluster-west/);
  });

  it("reports the same change as JSON", async () => {
    const site = await siteCopy();
    await run("synth", "--site", site);
    await addEastWorker(site);
    const result = await run("diff", "--site", site, "--format", "json", "--exit-code");
    expect(result.code).toBe(1);
    const report = JSON.parse(result.out);
    expect(report.changed).toBe(true);
    expect(report.clusters).toHaveLength(1);
    const [east] = report.clusters;
    expect(east).toMatchObject({
      cluster: "edge-a/cluster-east",
      status: "changed",
      hosts: { added: [{ role: "worker", node: "worker-3" }], removed: [] },
    });
    expect(east.objects.changed).toContainEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "edge-a",
      name: "cluster-east-hosts-ini",
      file: "clusters/edge-a/cluster-east/kud-installer.yaml",
    });
    expect(report.files).toContainEqual({ path: "metalsynth.lock.yaml", status: "changed" });
    expect(report.files[0].patch).toBeUndefined();
  });

  it("prints unified diffs with --patch that turn the old tree into the new one", async () => {
    const site = await siteCopy();
    await run("synth", "--site", site);
    await addEastWorker(site);
    await writeFile(
      path.join(site, "rendered", "clusters", "edge-a", "cluster-west", "stale.yaml"),
      "old: true\n",
    );
    const result = await run("diff", "--site", site, "--patch");
    expect(result.out).toMatch(/^--- a\/clusters\/edge-a\/cluster-east\/kud-installer\.yaml\n\+\+\+ b\//m);
    expect(result.out).toMatch(/^\+ {4}worker-3 {2}ansible_ssh_host=/m);
    expect(result.out).toMatch(
      /^--- a\/clusters\/edge-a\/cluster-west\/stale\.yaml\n\+\+\+ \/dev\/null\n@@ -1 \+0,0 @@\n-old: true$/m,
    );

    const patch = result.out.slice(result.out.indexOf("--- "));
    const rendered = path.join(site, "rendered");
    execFileSync("git", ["apply", "-p1", `--directory=${path.basename(rendered)}`], {
      cwd: site,
      input: patch,
    });
    const applied = await readTree(rendered);
    expect((await run("synth", "--site", site)).code).toBe(0);
    expect(applied).toEqual(await readTree(rendered));
  });

  it("compares with --out, and puts each file's patch in the JSON with --patch", async () => {
    const site = await siteCopy();
    const out = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-diff-out-")), "tree");
    expect((await run("synth", "--site", site, "--out", out)).code).toBe(0);
    await addEastWorker(site);
    const result = await run("diff", "--site", site, "--out", out, "--patch", "--format", "json");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out);
    // Against the site's own rendered/, which does not exist, every cluster would be new.
    expect(report.out).toBe(out);
    expect(report.clusters.map((cluster: { cluster: string }) => cluster.cluster)).toEqual([
      "edge-a/cluster-east",
    ]);
    const text = await run("diff", "--site", site, "--out", out, "--patch");
    expect(report.files.length).toBeGreaterThan(0);
    for (const file of report.files) {
      expect(file.patch.split("\n").slice(0, 2)).toEqual([`--- a/${file.path}`, `+++ b/${file.path}`]);
      expect(text.out).toContain(file.patch);
    }
  });

  it("exits 1 with diagnostics on invalid input and compares nothing", async () => {
    const site = await siteCopy();
    await edit(
      path.join(site, "specs/cluster-east/provisioning.yaml"),
      "PodSubnet: 10.244.64.0/18",
      "PodSubnet: x",
    );
    const result = await run("diff", "--site", site, "--format", "json");
    expect(result.code).toBe(1);
    // The documented report, with nothing compared and the diagnostics.
    const report = JSON.parse(result.out);
    expect(report).toMatchObject({
      out: path.join(site, "rendered"),
      changed: false,
      clusters: [],
      wiring: { added: [], changed: [], removed: [] },
      files: [],
    });
    expect(report.diagnostics).toEqual([
      expect.objectContaining({
        severity: "error",
        rule: "pod-subnet",
        path: "spec.PodSubnet",
        line: expect.any(Number),
      }),
    ]);
    expect(result.err).toMatch(/1 error, 0 warnings; nothing to compare/);
  });
});
