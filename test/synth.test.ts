import { spawnSync } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { readTree } from "../gitops/replace-dir.ts";
import { MAX_DOCUMENT_BYTES } from "../synth/documents.ts";
import { secretMaterialIn } from "../synth/rules/secrets.ts";
import { FLAVOR_LABEL, kubectlJson, makeBmh } from "./builders/inventory.ts";
import { run } from "./run-cli.ts";
import { addEastWorker, copyExampleSite } from "./support/example-site.ts";
import { REPO } from "./harness.ts";

/** A copy of the example site without its committed `rendered/`, so synth has to write it. */
async function exampleCopy(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-synth-"));
  await copyExampleSite(dir);
  return dir;
}

const TYPO = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: x, namespace: edge-a, labels: {cluster: x}}
spec: {mastrs: []}
`;

/**
 * A site whose lock is over Kubernetes' 1.5 MiB object limit: 36 SIPClusters of 100 workers over
 * 3,600 hosts, with names as long as Kubernetes allows so that a few thousand lock entries (a
 * region's lock has 30,000) pass the limit.
 */
async function siteWithLargeLock(): Promise<string> {
  const site = await mkdtemp(path.join(tmpdir(), "metalsynth-large-lock-"));
  const hosts = function* () {
    for (let index = 0; index < 3_600; index++)
      yield makeBmh({
        // 230 characters: with "-bmc-credentials" still a DNS subdomain.
        name: `${"h".repeat(225)}${String(index).padStart(5, "0")}`,
        namespace: "n".repeat(63),
        labels: { [FLAVOR_LABEL]: "worker" },
      });
  };
  await mkdir(path.join(site, "inventory"));
  await pipeline(
    Readable.from(kubectlJson(hosts())),
    createWriteStream(path.join(site, "inventory", "bmh.json")),
  );
  const clusters = Array.from(
    { length: 36 },
    (_, index) =>
      `apiVersion: airship.airshipit.org/v1\nkind: SIPCluster\nmetadata:\n  name: ${"c".repeat(60)}${String(index).padStart(3, "0")}\n  namespace: ${"t".repeat(63)}\nspec:\n  nodes:\n    Worker:\n      labelSelector:\n        matchLabels:\n          ${FLAVOR_LABEL}: worker\n      count:\n        active: 100\n        standby: 0\n`,
  );
  await mkdir(path.join(site, "specs"));
  await writeFile(path.join(site, "specs", "clusters.yaml"), clusters.join("---\n"));
  return site;
}

/** All synth says on stderr of a site outside any Git work tree without `gitops.pathPrefix`. */
const OUTSIDE_GIT = /^metalsynth: note: \S+ is not inside a Git work tree, [^\n]+\n$/;

describe("metalsynth synth", () => {
  it("writes the rendered tree, and a second run changes nothing", async () => {
    const site = await exampleCopy();
    const first = await run("synth", "--site", site);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/^edge-a\/cluster-east: 3 master\(s\)/m);
    const tree = await readTree(path.join(site, "rendered"));
    expect(first.out).toContain(`${tree.size} added, 0 changed, 0 removed, 0 unchanged`);
    // The committed example output is the golden (test/scenarios.test.ts checks its bytes).
    expect([...tree.keys()]).toEqual([
      ...(await readTree(path.join(REPO, "examples", "site", "rendered"))).keys(),
    ]);
    expect(tree.get("clusters/edge-sip/tenant-a/kustomization.yaml")).toContain("bmh-labels.yaml");
    const second = await run("synth", "--site", site);
    expect(second.out).toContain(`0 added, 0 changed, 0 removed, ${tree.size} unchanged`);
    expect(await readTree(path.join(site, "rendered"))).toEqual(tree);
  });

  // The lock is no Kubernetes object (decision 0044): it was refused as too-large on the second run.
  it("renders a site whose lock is over 1.5 MiB twice, writing nothing the second time, and validates it", async () => {
    const site = await siteWithLargeLock();
    const lock = path.join(site, "rendered", "metalsynth.lock.yaml");
    const first = await run("synth", "--site", site);
    // No finding; only the note of a site outside Git, which keeps rendered/clusters (decision 0055).
    expect(first.err).toMatch(OUTSIDE_GIT);
    expect(first.code).toBe(0);
    const written = await stat(lock);
    expect(written.size).toBeGreaterThan(MAX_DOCUMENT_BYTES);
    const tree = await readTree(path.join(site, "rendered"));
    const second = await run("synth", "--site", site);
    expect(second.err).toMatch(OUTSIDE_GIT);
    expect(second.code).toBe(0);
    expect(second.out).toContain(`0 added, 0 changed, 0 removed, ${tree.size} unchanged`);
    expect(await stat(lock)).toMatchObject({ ino: written.ino, mtimeMs: written.mtimeMs });
    expect(await run("validate", "--site", site)).toMatchObject({ code: 0, out: "" });
  });

  it("renders the same bytes from another directory (no absolute paths, no environment)", async () => {
    const [a, b] = [await exampleCopy(), await exampleCopy()];
    expect((await run("synth", "--site", a)).code).toBe(0);
    expect((await run("synth", "--site", b)).code).toBe(0);
    const tree = await readTree(path.join(a, "rendered"));
    expect(tree.size).toBeGreaterThan(0);
    expect(await readTree(path.join(b, "rendered"))).toEqual(tree);
    for (const content of tree.values()) {
      expect(content).not.toContain(a);
      expect(secretMaterialIn(content)).toBeUndefined();
    }
  });

  it("writes to --out and reports the run as JSON with --format json", async () => {
    const site = await exampleCopy();
    const out = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-out-")), "tree");
    const result = await run("synth", "--site", site, "--out", out, "--format", "json");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out);
    const tree = await readTree(out);
    expect(report).toMatchObject({
      out,
      change: { added: [...tree.keys()], changed: [], removed: [], unchanged: 0 },
      diagnostics: [],
    });
    expect(report.clusters.map((cluster: { cluster: string }) => cluster.cluster)).toEqual([
      "edge-a/cluster-east",
      "edge-a/cluster-west",
      "edge-sip/tenant-a",
    ]);
    expect((await readTree(path.join(site, "rendered"))).size).toBe(0);
  });

  it("leaves rendered/ untouched and exits 1 when the input has errors", async () => {
    const site = await exampleCopy();
    expect((await run("synth", "--site", site)).code).toBe(0);
    const before = await readTree(path.join(site, "rendered"));
    await writeFile(path.join(site, "specs", "typo.yaml"), TYPO);
    const result = await run("synth", "--site", site);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/error\[schema\] spec\.mastrs/);
    expect(result.err).toMatch(/left unchanged/);
    expect(await readTree(path.join(site, "rendered"))).toEqual(before);

    const json = await run("synth", "--site", site, "--format", "json");
    expect(json.code).toBe(1);
    const report = JSON.parse(json.out);
    expect(report).toMatchObject({ out: path.join(site, "rendered"), clusters: [], change: null });
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: "error",
        rule: "schema",
        path: "spec.mastrs",
        file: expect.any(String),
      }),
    );
  });

  it("refuses --specs that would remove clusters the site still defines, and renders a subset elsewhere", async () => {
    const site = await exampleCopy();
    expect((await run("synth", "--site", site)).code).toBe(0);
    const before = await readTree(path.join(site, "rendered"));
    const subset = path.join(site, "specs", "cluster-east");

    const refused = await run("synth", "--site", site, "--specs", subset);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      /^metalsynth synth: --specs covers only part of the site: writing \S+ would remove edge-a\/cluster-west, edge-sip\/tenant-a, which \S+ still defines/,
    );
    expect(await readTree(path.join(site, "rendered"))).toEqual(before);

    const elsewhere = path.join(site, "subset");
    expect((await run("synth", "--site", site, "--specs", subset, "--out", elsewhere)).code).toBe(0);
    expect([...(await readTree(elsewhere)).keys()].filter((file) => file.startsWith("clusters/"))).toEqual([
      "clusters/edge-a/cluster-east/allocation.yaml",
      "clusters/edge-a/cluster-east/cluster-configmap.yaml",
      "clusters/edge-a/cluster-east/kud-installer.yaml",
      "clusters/edge-a/cluster-east/kustomization.yaml",
      "clusters/edge-a/cluster-east/software.yaml",
      "clusters/edge-a/cluster-east/specs.yaml",
    ]);
  });

  it("lets --specs drop a cluster that is gone from the site's specs too", async () => {
    const site = await exampleCopy();
    expect((await run("synth", "--site", site)).code).toBe(0);
    await rm(path.join(site, "specs", "cluster-west"), { recursive: true });
    const result = await run("synth", "--site", site, "--specs", path.join(site, "specs"));
    expect(result.code).toBe(0);
    expect(result.out).not.toMatch(/cluster-west/);
  });

  it("refuses to delete a file in rendered/ that metalsynth did not write", async () => {
    const site = await exampleCopy();
    expect((await run("synth", "--site", site)).code).toBe(0);
    await writeFile(path.join(site, "rendered", "NOTES.md"), "why cluster-east has five hosts\n");
    const result = await run("synth", "--site", site);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/holds files metalsynth did not write \(NOTES\.md\)/);
    expect((await readTree(path.join(site, "rendered"))).get("NOTES.md")).toBe(
      "why cluster-east has five hosts\n",
    );
  });

  it("refuses an --out that metalsynth did not write before reading the site", async () => {
    const foreign = await mkdtemp(path.join(tmpdir(), "metalsynth-foreign-"));
    await writeFile(path.join(foreign, "thesis.tex"), "\\documentclass{article}\n");
    // No such site: the output is checked first, so that is not what is reported.
    for (const command of ["synth", "diff"]) {
      const result = await run(command, "--site", "/nonexistent/site", "--out", foreign);
      expect(result.code).toBe(2);
      expect(result.err).toMatch(/is not empty and has no metalsynth\.lock\.yaml/);
    }
  });
});

/**
 * Loaded into the CLI with `node --import`: the first file written into a temporary tree sends the
 * process SIGINT and is held until the signal has been handled, so the interruption lands in the
 * middle of the write, every time.
 */
const INTERRUPT_FIRST_WRITE = `import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const writeFile = fs.promises.writeFile;
const writeFileSync = fs.writeFileSync;
let sent = false;
const interrupt = (file) => {
  if (sent || !String(file).includes(".rendered.tmp-")) return false;
  sent = true;
  process.kill(process.pid, "SIGINT");
  return true;
};
fs.promises.writeFile = async (file, ...rest) => {
  if (interrupt(file)) await new Promise((resolve) => setTimeout(resolve, 100));
  return writeFile(file, ...rest);
};
// The writer writes a tree's files synchronously, hearing signals every few files (decision 0057).
fs.writeFileSync = (file, ...rest) => {
  interrupt(file);
  return writeFileSync(file, ...rest);
};
syncBuiltinESMExports();
`;

describe("metalsynth synth interrupted", () => {
  it("by SIGINT while writing, keeps the previous rendered/ and leaves no temporary tree", async () => {
    const site = await exampleCopy();
    expect((await run("synth", "--site", site)).code).toBe(0);
    const before = await readTree(path.join(site, "rendered"));
    await addEastWorker(site);
    const preload = path.join(site, "interrupt.mjs");
    await writeFile(preload, INTERRUPT_FIRST_WRITE);

    const child = spawnSync(
      process.execPath,
      [
        "--import",
        pathToFileURL(preload).href,
        path.join(REPO, "bin", "metalsynth.js"),
        "synth",
        "--site",
        site,
      ],
      { encoding: "utf8" },
    );

    expect(child.signal, child.stderr).toBe("SIGINT");
    expect(child.stdout).toBe("");
    expect(await readTree(path.join(site, "rendered"))).toEqual(before);
    expect((await readdir(site)).filter((name) => name.startsWith(".rendered"))).toEqual([]);
    // The change it was writing lands on the next run.
    const again = await run("synth", "--site", site);
    expect(again.out).toMatch(/wrote .*: \d+ added, [1-9]\d* changed/);
  });
});

describe("metalsynth synth --out -", () => {
  it("prints every rendered object as one YAML stream, writes nothing, and leaves out the lock and kustomizations", async () => {
    const dir = await copyExampleSite();
    const result = await run("synth", "--site", dir, "--out", "-");
    expect(result.code).toBe(0);
    expect(existsSync(path.join(dir, "rendered"))).toBe(false);
    const objects = parseAllDocuments(result.out).map(
      (document) => document.toJS() as { apiVersion: string; kind: string },
    );
    const kinds = new Set(objects.map((object) => `${object.apiVersion} ${object.kind}`));
    expect(kinds).toContain("batch/v1 Job");
    expect(kinds).toContain("argoproj.io/v1alpha1 ApplicationSet");
    expect(kinds).not.toContain("metalsynth.io/v1alpha1 Lock");
    // kustomize's own files are no objects; Flux's Kustomizations are.
    expect(kinds).not.toContain("kustomize.config.k8s.io/v1beta1 Kustomization");
    // The same objects synth writes, file by file.
    await run("synth", "--site", dir);
    const written = [...(await readTree(path.join(dir, "rendered")))]
      .filter(([file]) => file !== "metalsynth.lock.yaml" && !file.endsWith("kustomization.yaml"))
      .flatMap(([, text]) => parseAllDocuments(text).map((document) => document.toJS()));
    expect(objects).toHaveLength(written.length);
  });
});

describe("metalsynth synth at scale", () => {
  it("prints one line for more than 20 clusters, and a line each with --verbose", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-many-"));
    await mkdir(path.join(dir, "specs"));
    await mkdir(path.join(dir, "inventory"));
    const hosts = Array.from({ length: 21 }, (_, index) => makeBmh({ name: `h${index}` }));
    await writeFile(
      path.join(dir, "inventory", "hosts.json"),
      JSON.stringify({ kind: "List", apiVersion: "v1", items: hosts }),
    );
    const specs = Array.from(
      { length: 21 },
      (_, index) =>
        `apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: c${index}, namespace: edge, labels: {cluster: c${index}}}\nspec:\n  masters:\n    - master-1: {cpu: 1}\n`,
    );
    await writeFile(path.join(dir, "specs", "clusters.yaml"), specs.join("---\n"));
    const quiet = await run("synth", "--site", dir);
    expect(quiet.code).toBe(0);
    expect(quiet.out.split("\n")).toEqual([
      expect.stringMatching(/^21 clusters, \d+ objects \(--verbose lists each cluster\)$/),
      expect.stringMatching(/^wrote .*rendered: \d+ added, 0 changed, 0 removed, 0 unchanged$/),
      "",
    ]);
    const verbose = await run("synth", "--site", dir, "--verbose", "--full");
    expect(verbose.out.split("\n").filter((line) => line.startsWith("edge/c"))).toHaveLength(21);
  });
});
