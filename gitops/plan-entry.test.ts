import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addEastWorker, copyExampleSite } from "../test/support/example-site.ts";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";
import { clusterKey } from "../synth/cluster-key.ts";
import { renderPlan } from "../synth/plan/render-plan.ts";
import { cachedPlan, keptShares, sharesOf, storePlan } from "./plan-entry.ts";
import { allShares, planShares } from "./render-incremental.ts";
import { evaluateFromSite, synthFromKeptPlan, synthFromSite, synthOutcome } from "./render-site.ts";
import { issue } from "../synth/issue.ts";
import { readSiteDigest, SiteDigest, type SiteRead } from "./site-digest.ts";
import { readSite, readSiteBesideInventory } from "./site-reader.ts";
import { writeRendered } from "./render-write.ts";

let site: string;
let cache: string;

beforeEach(async () => {
  site = await copyExampleSite();
  cache = await mkdtemp(path.join(tmpdir(), "metalsynth-plan-cache-"));
});

afterEach(async () => {
  await rm(site, { recursive: true, force: true });
  await rm(cache, { recursive: true, force: true });
});

const EAST = path.join("specs", "cluster-east", "provisioning.yaml");

async function digestOf(): Promise<SiteRead> {
  const read = await readSiteDigest({ site });
  if (read === undefined) throw new Error("the example site's digest can be read");
  return read;
}

/** Renders the site, then synths it as the CLI does with the cache: the plan is kept then. */
async function renderAndKeep(): Promise<void> {
  const first = await synthFromSite({ site });
  await writeRendered(first.input.out, first.rendered?.files ?? new Map());
  const read = await digestOf();
  const again = await synthFromSite({ site }, { cache, inventory: { seen: read.inventory, keep: true } });
  await writeRendered(again.input.out, again.rendered?.files ?? new Map(), {
    kept: again.rendered?.kept ?? new Set(),
  });
}

async function edit(file: string, from: string, to: string): Promise<void> {
  const text = await readFile(path.join(site, file), "utf8");
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
  await writeFile(path.join(site, file), text.replace(from, to));
}

describe("a kept plan", () => {
  it("is kept by a run that read a lock, one per inventory, settings and lock", async () => {
    await renderAndKeep();
    expect(await readdir(path.join(cache, "plan"))).toHaveLength(1);
  });

  it("answers a KUD plugin dropped as a full run does, without reading the inventory", async () => {
    await renderAndKeep();
    // Render-only: the plan stands, and only cluster-east's directory is rendered again.
    await edit(EAST, "    - ovn4nfv\n", "");
    const read = await digestOf();
    const full = synthOutcome(await synthFromSite({ site }));
    // Garbage where the inventory was: a run that read it would find nothing but errors.
    for (const file of await readdir(path.join(site, "inventory")))
      await writeFile(path.join(site, "inventory", file), "{ not an inventory");
    const kept = await synthFromKeptPlan({ site }, read, cache);
    expect(kept?.issues).toEqual(full.issues);
    expect(kept?.rendered?.files).toEqual(full.rendered?.files);
    expect(kept?.rendered?.clusters).toEqual(full.rendered?.clusters);
    expect(kept?.rendered?.directories).toEqual({ rendered: 1, kept: 2 });
    expect(full.rendered?.directories).toEqual({ rendered: 1, kept: 2 });
  });

  it("does not answer specs planned otherwise: a worker added", async () => {
    await renderAndKeep();
    await addEastWorker(site);
    expect(await synthFromKeptPlan({ site }, await digestOf(), cache)).toBeUndefined();
  });

  it("does not answer when other settings, another inventory or another lock is read", async () => {
    await renderAndKeep();
    const unchanged = await digestOf();
    const settings = path.join(site, "metalsynth.yaml");
    const text = await readFile(settings, "utf8");
    await writeFile(settings, "apiVersion: metalsynth.io/v1alpha1\nkind: SiteSettings\n");
    expect(await synthFromKeptPlan({ site }, await digestOf(), cache)).toBeUndefined();
    await writeFile(settings, text);
    expect((await digestOf()).plan).toBe(unchanged.plan);
    await edit(path.join("inventory", "rack-r01.yaml"), "count: 48", "count: 47");
    expect(await synthFromKeptPlan({ site }, await digestOf(), cache)).toBeUndefined();
    await edit(path.join("inventory", "rack-r01.yaml"), "count: 47", "count: 48");
    await edit(path.join("rendered", LOCK_FILE), "\n", "\n# edited by hand\n");
    expect(await synthFromKeptPlan({ site }, await digestOf(), cache)).toBeUndefined();
  });

  it("reads back only the shares of the directories it renders again", async () => {
    await renderAndKeep();
    await edit(EAST, "    - ovn4nfv\n", "");
    const read = await digestOf();
    const full = synthOutcome(await synthFromSite({ site }));
    const entry = cachedPlan(cache, read.plan);
    if (entry === undefined) throw new Error("the plan is kept");
    const east = entry.shares.keys.indexOf(clusterKey("edge-a", "cluster-east"));
    expect(east).toBeGreaterThanOrEqual(0);
    // Every other directory's share garbled: a run that read one would fail or differ.
    const bytes = Buffer.from(entry.shares.bytes).fill(0xff);
    const [start, end] = [entry.shares.ends[east - 1] ?? 0, entry.shares.ends[east]];
    bytes.set(entry.shares.bytes.subarray(start, end), start);
    storePlan(cache, { ...entry, shares: { ...entry.shares, bytes } });
    const kept = await synthFromKeptPlan({ site }, read, cache);
    expect(kept?.rendered?.files).toEqual(full.rendered?.files);
    expect(kept?.rendered?.clusters).toEqual(full.rendered?.clusters);
  });
});

describe("a site read beside a kept plan", () => {
  it("stands the kept lock findings for the lock's parse, and digests the lock it did not parse", async () => {
    await renderAndKeep();
    const read = await digestOf();
    // A lock the parse would refuse: read beside the plan, it is not parsed, and its digest misses.
    await edit(path.join("rendered", LOCK_FILE), "kind: Lock", "kind: NotALock");
    expect((await readSite({ site })).issues.map((found) => found.rule)).toContain("lock-invalid");
    const kept = issue("lock-invalid", "hosts[0]", "a finding the kept plan's run had");
    const digest = new SiteDigest({ site });
    const beside = await readSiteBesideInventory({ site }, digest, {
      inventory: { seen: read.inventory, issues: [] },
      lockIssues: [kept],
    });
    expect(beside.issues.at(-1)).toEqual(kept);
    expect(beside.issues.filter((found) => found.rule === "lock-invalid")).toEqual([kept]);
    expect(beside.lockIssues).toEqual([kept]);
    expect(digest.planDigest()).not.toBe(read.plan);
  });
});

describe("kept shares", () => {
  it("give back each directory's share and the lock's text as the plan has them", async () => {
    const { plan, issues } = await evaluateFromSite({ site });
    const ready = renderPlan(plan, issues);
    if (ready === undefined) throw new Error("the example site renders");
    const shares = planShares(ready);
    const kept = sharesOf(keptShares(shares));
    expect(kept.keys).toEqual(shares.keys);
    expect(kept.lock).toBe(shares.lock);
    expect(allShares(kept)).toEqual(allShares(shares));
  });
});
