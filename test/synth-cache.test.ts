/**
 * Decision 0066: a synth that takes its evaluation from the synth cache prints and writes exactly
 * what a synth without it does. A small mixed site goes through random changes (CRs, host facts,
 * settings, rendered files edited or deleted by hand: test/support/site-changes.ts), runs that
 * change nothing, and a cache damaged on disk. After every step synth runs with the cache the
 * earlier steps filled, and again, from the same tree, with an empty one: same exit code, same bytes
 * on stdout and stderr, same tree.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTree } from "../gitops/replace-dir.ts";
import { readSiteDigest } from "../gitops/site-digest.ts";
import { cacheDirectory, synthFromCache } from "../gitops/synth-cache.ts";
import { run } from "./run-cli.ts";
import { apply, CLUSTERS, readSpecs, step, writeChangingSite, type Step } from "./support/site-changes.ts";

type CacheStep = Step | { readonly kind: "none" } | { readonly kind: "damage"; readonly how: number };

const cacheStep: fc.Arbitrary<CacheStep> = fc.oneof(
  { arbitrary: step, weight: 3 },
  { arbitrary: fc.constant({ kind: "none" as const }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("damage" as const), how: fc.nat({ max: 2 }) }), weight: 1 },
);

/**
 * Damages every entry of the caches in `home`, the synth cache's and the inventory cache's:
 * truncated, one byte changed, or not an entry at all.
 */
async function damage(home: string, how: number): Promise<void> {
  const directory = cacheDirectory({ METALSYNTH_SYNTH_CACHE: home });
  const names = await readdir(directory, { recursive: true }).catch(() => []);
  for (const name of names.filter((entry) => /\.(json|v8)$/.test(entry))) {
    const file = path.join(directory, name);
    const content = await readFile(file);
    const middle = Math.floor(content.length / 2);
    if (how === 1) content[middle] = (content[middle] ?? 0) ^ 0x01;
    await writeFile(
      file,
      how === 0 ? content.subarray(0, middle) : how === 1 ? content : "not a cache entry",
    );
  }
}

/** Runs synth on `dir` with the cache in `home` (METALSYNTH_SYNTH_CACHE). */
async function synth(dir: string, home: string, format: string): Promise<Awaited<ReturnType<typeof run>>> {
  const previous = process.env.METALSYNTH_SYNTH_CACHE;
  process.env.METALSYNTH_SYNTH_CACHE = home;
  try {
    return await run("synth", "--site", dir, "-o", format);
  } finally {
    if (previous === undefined) delete process.env.METALSYNTH_SYNTH_CACHE;
    else process.env.METALSYNTH_SYNTH_CACHE = previous;
  }
}

/**
 * Runs synth on `dir` with the cache in `home`, then from the same tree with an empty cache, and
 * expects the same exit code, output and tree (the second's is left in `dir`).
 */
async function expectAsWithoutCache(dir: string, home: string, format: string, step: string): Promise<void> {
  const rendered = path.join(dir, "rendered");
  const before = await mkdtemp(path.join(tmpdir(), "metalsynth-cache-before-"));
  await cp(rendered, before, { recursive: true });
  const cached = await synth(dir, home, format);
  const cachedTree = await readTree(rendered);
  await rm(rendered, { recursive: true });
  await cp(before, rendered, { recursive: true });
  await rm(before, { recursive: true });
  const empty = await mkdtemp(path.join(tmpdir(), "metalsynth-cache-empty-"));
  const full = await synth(dir, empty, format);
  await rm(empty, { recursive: true });
  expect(cached, step).toEqual(full);
  expect(cachedTree).toEqual(await readTree(rendered));
}

let template: string;

beforeAll(async () => {
  template = await mkdtemp(path.join(tmpdir(), "metalsynth-cache-site-"));
  await writeChangingSite(template);
});

afterAll(async () => {
  await rm(template, { recursive: true, force: true });
});

describe("the inventory cache", () => {
  it("is filled by the run after a first render, not by the first render", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-cache-"));
    const home = await mkdtemp(path.join(tmpdir(), "metalsynth-cache-home-"));
    const kept = async () =>
      (await readdir(path.join(home, "inventory")).catch(() => [])).filter((name) => name.endsWith(".v8"));
    try {
      await cp(template, dir, { recursive: true });
      expect((await synth(dir, home, "text")).code).toBe(0);
      expect(await kept()).toEqual([]);
      expect((await synth(dir, home, "text")).code).toBe(0);
      expect(await kept()).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("the plan cache", () => {
  const specStep = fc.record({
    kind: fc.constantFrom("plugins", "package", "drop", "workers"),
    cluster: fc.integer({ min: 0, max: CLUSTERS - 1 }),
  });

  it("answers a change of the specs alone as a synth without it does", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(specStep, { minLength: 1, maxLength: 5 }), async (steps) => {
        const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-plan-"));
        const home = await mkdtemp(path.join(tmpdir(), "metalsynth-plan-home-"));
        try {
          await cp(template, dir, { recursive: true });
          const specs = await readSpecs(dir);
          // A first render keeps nothing; the run after it keeps the inventory and the plan.
          expect((await synth(dir, home, "json")).code).toBe(0);
          expect((await synth(dir, home, "json")).code).toBe(0);
          expect(await readdir(path.join(home, "plan"))).toHaveLength(1);
          for (const change of steps) {
            await apply(dir, specs, change);
            await expectAsWithoutCache(dir, home, "text", change.kind);
          }
        } finally {
          await rm(dir, { recursive: true, force: true });
          await rm(home, { recursive: true, force: true });
        }
      }),
      { numRuns: 8 },
    );
  }, 600_000);
});

describe("the synth cache", () => {
  it("prints and writes what a synth without it does, after every random site change", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(cacheStep, { minLength: 1, maxLength: 6 }),
        fc.constantFrom("text", "json", "github", "sarif"),
        async (steps, format) => {
          const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-cache-"));
          const home = await mkdtemp(path.join(tmpdir(), "metalsynth-cache-home-"));
          try {
            await cp(template, dir, { recursive: true });
            const specs = await readSpecs(dir);
            expect((await synth(dir, home, format)).code).toBe(0);
            for (const change of steps) {
              if (change.kind === "damage") await damage(home, change.how);
              else if (change.kind !== "none") await apply(dir, specs, change);
              await expectAsWithoutCache(dir, home, format, change.kind);
            }
            // Twice more with nothing changed: the lock read is the lock written, and the cache answers.
            await synth(dir, home, format);
            await synth(dir, home, format);
            const directory = cacheDirectory({ METALSYNTH_SYNTH_CACHE: home });
            const read = await readSiteDigest({ site: dir });
            expect(read && (await synthFromCache({ site: dir }, read, { directory }))).toBeDefined();
          } finally {
            await rm(dir, { recursive: true, force: true });
            await rm(home, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 600_000);
});
