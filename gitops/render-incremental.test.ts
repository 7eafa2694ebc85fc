import { mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderPlan, type RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { REPO } from "../test/harness.ts";
import { renderSite, writeRendered } from "./render.ts";
import { planShares, renderChanged } from "./render-incremental.ts";
import { evaluateFromSite } from "./render-site.ts";
import { readUnitHeader } from "./render-units.ts";
import { readTree } from "./replace-dir.ts";

const EAST = "clusters/edge-a/cluster-east";
const WEST = "clusters/edge-a/cluster-west";

/** The example site's plan: two BPA clusters and a SIPCluster. */
async function examplePlan(): Promise<{ plan: RenderPlan; settings: SiteSettings }> {
  const { input, plan, issues } = await evaluateFromSite({ site: path.join(REPO, "examples", "site") });
  const ready = renderPlan(plan, issues);
  if (!ready) throw new Error("the example site has errors");
  return { plan: ready, settings: input.settings };
}

/** `plan` with cluster-east's first master on another address: an input of that directory alone. */
function eastMoved(plan: RenderPlan): RenderPlan {
  const clusters = plan.clusters.map((cluster) =>
    cluster.kind === "bpa" && cluster.name === "cluster-east"
      ? {
          ...cluster,
          masters: cluster.masters.map((node, index) => (index === 0 ? { ...node, ip: "10.9.9.9" } : node)),
        }
      : cluster,
  );
  return { ...plan, clusters } as RenderPlan;
}

let out: string;

beforeEach(async () => {
  out = path.join(await mkdtemp(path.join(os.tmpdir(), "render-incremental-")), "rendered");
});

afterEach(async () => {
  await rm(path.dirname(out), { recursive: true, force: true });
});

/** Renders `plan` as synth does into `out`; what it rendered, and the tree it wrote. */
async function synth(plan: RenderPlan, settings: SiteSettings, full = false) {
  const rendered = await renderChanged(planShares(plan), settings, out, { full });
  const change = await writeRendered(out, rendered.files, { kept: rendered.kept });
  return { rendered, change, tree: await readTree(out) };
}

describe("renderChanged", () => {
  it("renders everything into an empty directory, as renderSite does", async () => {
    const { plan, settings } = await examplePlan();
    const { rendered, tree } = await synth(plan, settings);
    const full = await renderSite(plan, settings);
    expect(rendered.kept.size).toBe(0);
    expect(rendered.directories).toEqual({ rendered: 3, kept: 0 });
    expect(tree).toEqual(new Map([...full.files].sort(([a], [b]) => (a < b ? -1 : 1))));
    expect(rendered.clusters).toEqual(full.clusters);
  });

  it("keeps every unit the second time: only the lock is rendered, and nothing is written", async () => {
    const { plan, settings } = await examplePlan();
    const first = await synth(plan, settings);
    const { rendered, change, tree } = await synth(plan, settings);
    expect([...rendered.files.keys()]).toEqual(["metalsynth.lock.yaml"]);
    expect(rendered.directories).toEqual({ rendered: 0, kept: 3 });
    expect(rendered.kept.size).toBe(first.tree.size - 1);
    expect(change).toEqual({ added: [], changed: [], removed: [], unchanged: first.tree.size });
    expect(tree).toEqual(first.tree);
    // The summary counts the objects of the directories it did not render, as it did when it did.
    expect(rendered.clusters).toEqual(first.rendered.clusters);
  });

  it("renders again exactly the directory whose inputs changed, and its header says so", async () => {
    const { plan, settings } = await examplePlan();
    const first = await synth(plan, settings);
    const moved = eastMoved(plan);
    const { rendered, change, tree } = await synth(moved, settings);
    expect(rendered.directories).toEqual({ rendered: 1, kept: 2 });
    expect(
      [...rendered.files.keys()]
        .filter((file) => file.startsWith("clusters/"))
        .every((file) => file.startsWith(EAST)),
    ).toBe(true);
    expect(change.changed).toContain(`${EAST}/kustomization.yaml`);
    expect(change.changed).toContain(`${EAST}/cluster-configmap.yaml`);
    expect(change.changed.every((file) => file.startsWith(EAST) || file === "metalsynth.lock.yaml")).toBe(
      true,
    );
    expect(tree).toEqual(
      new Map([...(await renderSite(moved, settings)).files].sort(([a], [b]) => (a < b ? -1 : 1))),
    );
    const header = (files: ReadonlyMap<string, string>) =>
      readUnitHeader(Buffer.from(files.get(`${EAST}/kustomization.yaml`) ?? ""))?.header;
    expect(header(tree)?.inputs).not.toBe(header(first.tree)?.inputs);
    expect(header(tree)?.files).not.toBe(header(first.tree)?.files);
  });

  it.each([
    ["edited by hand", (file: string) => writeFile(file, "kind: ConfigMap\n")],
    ["deleted", (file: string) => unlink(file)],
  ])("restores a file %s, rendering its directory again, and reports it", async (_label, touch) => {
    const { plan, settings } = await examplePlan();
    const first = await synth(plan, settings);
    await touch(path.join(out, WEST, "cluster-configmap.yaml"));
    const { rendered, change, tree } = await synth(plan, settings);
    expect(rendered.directories).toEqual({ rendered: 1, kept: 2 });
    expect([...change.added, ...change.changed]).toEqual([`${WEST}/cluster-configmap.yaml`]);
    expect(tree).toEqual(first.tree);
  });

  it.each([
    ["its header", (text: string) => text.replace(/inputs sha256:./, "inputs sha256:0")],
    ["its list of files", (text: string) => text.replace("  - specs.yaml\n", "")],
    [
      "a header of another metalsynth",
      (text: string) => text.replace(/metalsynth [^,]+,/, "metalsynth 0.0.1,"),
    ],
  ])("renders a directory again when someone changed %s", async (_label, edit) => {
    const { plan, settings } = await examplePlan();
    const first = await synth(plan, settings);
    const kustomization = path.join(out, EAST, "kustomization.yaml");
    await writeFile(kustomization, edit(await readFile(kustomization, "utf8")));
    const { rendered, change, tree } = await synth(plan, settings);
    expect(rendered.directories).toEqual({ rendered: 1, kept: 2 });
    expect(change.changed).toEqual([`${EAST}/kustomization.yaml`]);
    expect(tree).toEqual(first.tree);
  });

  it("restores a hand-edited Flux Kustomization and ApplicationSet", async () => {
    const { plan, settings } = await examplePlan();
    const first = await synth(plan, settings);
    const flux = [...first.tree.keys()].find((file) => file.startsWith("flux/"))!;
    await writeFile(path.join(out, flux), "kind: Kustomization\n");
    await writeFile(path.join(out, "argocd/applicationset.yaml"), "kind: ApplicationSet\n");
    const { change, tree } = await synth(plan, settings);
    expect(change.changed).toEqual(["argocd/applicationset.yaml", flux]);
    expect(tree).toEqual(first.tree);
  });

  it("renders every directory with full, and writes nothing new", async () => {
    const { plan, settings } = await examplePlan();
    const first = await synth(plan, settings);
    const { rendered, change } = await synth(plan, settings, true);
    expect(rendered.kept.size).toBe(0);
    expect(rendered.directories).toEqual({ rendered: 3, kept: 0 });
    expect(change.unchanged).toBe(first.tree.size);
  });

  it("renders every directory again when a setting that shapes them changes, and none for one that does not", async () => {
    const { plan, settings } = await examplePlan();
    await synth(plan, settings);
    const author = { ...settings, git: { ...settings.git, authorName: "someone else" } };
    expect((await synth(plan, author)).rendered.directories).toEqual({ rendered: 0, kept: 3 });
    const image = { ...settings, images: { ...settings.images, kubectl: "kubectl:9" } } as SiteSettings;
    expect((await synth(plan, image)).rendered.directories).toEqual({ rendered: 3, kept: 0 });
  });
});
