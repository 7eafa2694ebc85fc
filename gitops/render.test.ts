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
import { renderSite } from "./render.ts";
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
