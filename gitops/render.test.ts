import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { clusterKey } from "../synth/cluster-key.ts";
import { ALLOCATION_FILE, SPECS_FILE } from "../synth/plan/allocation.ts";
import { LOCK_FILE } from "../synth/plan/lock.ts";
import { lockFromAllocations } from "../synth/rules/allocation.ts";
import { parseLock } from "../synth/rules/lock.ts";
import { renderPlan, type RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { REPO } from "../test/harness.ts";
import { UsageError } from "./errors.ts";
import { checkOutput, renderSite, writeRendered } from "./render.ts";
import { readTree } from "./replace-dir.ts";
import { evaluateFromSite } from "./render-site.ts";
import { dnsLabel } from "../test/builders/inventory.ts";

/** The example site's plan (two BPA clusters, a SIPCluster) plus a retired SIPCluster. */
async function examplePlan(): Promise<{ plan: RenderPlan; settings: SiteSettings }> {
  const { input, plan, issues } = await evaluateFromSite({ site: path.join(REPO, "examples", "site") });
  const ready = renderPlan(plan, issues);
  if (!ready) throw new Error("the example site has errors");
  const sip = ready.clusters.find((cluster) => cluster.kind === "sip");
  const released = sip?.members.slice(0, 1).map((member) => member.host) ?? [];
  const retired = {
    key: clusterKey("edge-sip", "tenant-old"),
    namespace: dnsLabel("edge-sip"),
    name: dnsLabel("tenant-old"),
    released,
  };
  return { plan: { ...ready, retired: [retired] }, settings: input.settings };
}

describe("renderSite", () => {
  it("renders on worker threads what it renders in this one, files in the same order", async () => {
    const { plan, settings } = await examplePlan();
    const here = await renderSite(plan, settings, { workers: 0 });
    // One directory per share: a worker is sent two ahead, so with one worker this thread renders
    // some too, with two it renders none; the shares finish in whatever order they do.
    for (const workers of [1, 2]) {
      const there = await renderSite(plan, settings, { workers, shareSize: 1 });
      expect([...there.files]).toEqual([...here.files]);
      expect(there.clusters).toEqual(here.clusters);
    }
    expect(here.clusters.map((cluster) => cluster.cluster)).toEqual([
      "edge-a/cluster-east",
      "edge-a/cluster-west",
      "edge-sip/tenant-a",
      "edge-sip/tenant-old",
    ]);
  });

  it("carries the lock as one Allocation per cluster directory, and each cluster's own CRs", async () => {
    const { plan, settings } = await examplePlan();
    for (const options of [{ workers: 0 }, { workers: 1, shareSize: 1 }]) {
      const { files } = await renderSite(plan, settings, options);
      const allocations = [...files]
        .filter(([file]) => file.endsWith(`/${ALLOCATION_FILE}`))
        .map(([, content]) => parse(content) as unknown);
      expect(allocations).toHaveLength(3);
      expect(lockFromAllocations(allocations)).toEqual(parseLock(parse(files.get(LOCK_FILE)!)));
      const kinds = (file: string) =>
        parseAllDocuments(files.get(file) ?? "").map(
          (document) => (document.toJS() as { kind: string }).kind,
        );
      expect(kinds(`clusters/edge-a/cluster-east/${SPECS_FILE}`)).toEqual([
        "Provisioning",
        "Cluster",
        "Software",
      ]);
      expect(kinds(`clusters/edge-sip/tenant-a/${SPECS_FILE}`)).toEqual(["SIPCluster"]);
      expect(files.has(`clusters/edge-sip/tenant-old/${SPECS_FILE}`)).toBe(false);
    }
  });

  it("fails with a chart's error, whichever thread met it", async () => {
    const { plan, settings } = await examplePlan();
    const bad = { masterPackages: [{ name: "not a package!" }], workerPackages: [] };
    const clusters = plan.clusters.map((cluster) =>
      cluster.kind === "bpa" ? { ...cluster, software: bad } : cluster,
    );
    await expect(renderSite({ ...plan, clusters }, settings, { workers: 2, shareSize: 1 })).rejects.toThrow(
      "is not a Debian package name or version",
    );
  });

  it("fails, and stops its workers, when a share can't be sent to one", async () => {
    const { plan, settings } = await examplePlan();
    // A plan that did not come from renderPlan can hold what a thread can't receive.
    const unsendable = { ...plan, clusters: plan.clusters.map((cluster) => ({ ...cluster, at: () => 0 })) };
    await expect(renderSite(unsendable, settings, { workers: 2, shareSize: 1 })).rejects.toThrow(
      /could not be cloned/,
    );
  });
});

describe("writeRendered: what of rendered/ is metalsynth's", () => {
  const managed = "metadata:\n  labels:\n    app.kubernetes.io/managed-by: metalsynth\n";
  /** A small tree whose files isRenderedFile recognises; `overrides` replaces or drops entries. */
  const tree = (overrides: Record<string, string | undefined> = {}): Map<string, string> =>
    new Map(
      Object.entries({
        [LOCK_FILE]: "clusters: {}\n",
        "argocd/applicationset.yaml": `kind: ApplicationSet\n${managed}`,
        "clusters/site-a/cluster-a/kustomization.yaml":
          "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
        "clusters/site-a/cluster-b/kud-installer.yaml": `kind: Job\n${managed}`,
        ...overrides,
      }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
  /** A fresh `rendered/` path in a directory of its own, which the run's temporary root removes. */
  const freshOut = async () =>
    path.join(await mkdtemp(path.join(os.tmpdir(), "write-rendered-")), "rendered");

  it.each([
    ["a file", { "README.md": "my notes" }],
    ["nested files", { "src/main.ts": "code", "package.json": "{}" }],
  ])(
    "refuses a non-empty directory without a lock file (%s), leaving it as it was",
    async (_label, content) => {
      const out = await freshOut();
      for (const [file, text] of Object.entries(content)) {
        await mkdir(path.dirname(path.join(out, file)), { recursive: true });
        await writeFile(path.join(out, file), text);
      }

      await expect(writeRendered(out, tree())).rejects.toThrow(UsageError);
      await expect(writeRendered(out, tree())).rejects.toThrow(/not empty and has no metalsynth\.lock\.yaml/);
      expect(Object.fromEntries(await readTree(out))).toEqual(content);
    },
  );

  it("refuses a directory holding only an empty subdirectory, or a lock file below the root", async () => {
    const out = await freshOut();
    await mkdir(path.join(out, "keep"), { recursive: true });
    await expect(writeRendered(out, tree())).rejects.toThrow(/refusing to replace it/);
    await writeFile(path.join(out, "keep", LOCK_FILE), "");
    await writeFile(path.join(out, "data.txt"), "precious");
    await expect(writeRendered(out, tree())).rejects.toThrow(/refusing/);
  });

  it("refuses a tree without a lock file, which the next run could not recognise", async () => {
    const out = await freshOut();
    await expect(writeRendered(out, tree({ [LOCK_FILE]: undefined }))).rejects.toThrow(
      /has no metalsynth\.lock\.yaml/,
    );
  });

  it("refuses to delete a file it did not write, naming it, and changes nothing", async () => {
    const out = await freshOut();
    await writeRendered(out, tree());
    await writeFile(path.join(out, "NOTES.md"), "my notes");
    await writeFile(path.join(out, "argocd", "hand-added.yaml"), "kind: ConfigMap\n");
    await symlink("argocd", path.join(out, "link"));
    const before = await readTree(out);

    const writing = writeRendered(out, tree({ "argocd/applicationset.yaml": undefined }));
    await expect(writing).rejects.toThrow(UsageError);
    await expect(writing).rejects.toThrow(
      /holds files metalsynth did not write \(NOTES.md, argocd\/hand-added.yaml, link\)/,
    );
    expect(await readTree(out)).toEqual(before);
  });

  it("deletes what it wrote", async () => {
    const out = await freshOut();
    await writeRendered(out, tree());

    const change = await writeRendered(
      out,
      tree({ "clusters/site-a/cluster-b/kud-installer.yaml": undefined }),
    );

    expect(change.removed).toEqual(["clusters/site-a/cluster-b/kud-installer.yaml"]);
  });

  it("deletes any file of a tree known to be rendered (a commit undone)", async () => {
    const out = await freshOut();
    await writeRendered(out, tree({ "argocd/notes.yaml": "kind: Note\n" }));

    const change = await writeRendered(out, tree(), { previousIsRendered: true });

    expect(change.removed).toEqual(["argocd/notes.yaml"]);
  });

  it("keeps the previous tree when its signal is aborted", async () => {
    const out = await freshOut();
    await writeRendered(out, tree());

    const writing = writeRendered(out, tree({ "argocd/applicationset.yaml": "changed\n" }), {
      signal: AbortSignal.abort(new Error("interrupted")),
    });

    await expect(writing).rejects.toThrow(/interrupted/);
    expect(await readTree(out)).toEqual(tree());
  });

  it("checkOutput accepts a missing, empty or metalsynth directory and refuses anything else before any work", async () => {
    const out = await freshOut();
    await checkOutput(out);
    await mkdir(out);
    await checkOutput(out);
    await writeRendered(out, tree());
    await checkOutput(out);
    const parent = path.dirname(out);
    await expect(checkOutput(parent, "compare with")).rejects.toThrow(
      /has no metalsynth.lock.yaml, so metalsynth did not write it; refusing to compare with it/,
    );
    await writeFile(path.join(parent, "file"), "x");
    await expect(checkOutput(path.join(parent, "file"))).rejects.toThrow(/exists and is not a directory/);
  });
});
