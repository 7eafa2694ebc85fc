/**
 * Decision 0057: synth renders again only the cluster directories whose inputs or files changed, and
 * the tree it leaves is byte for byte the one a full render gives, the way the planner's incremental
 * review is held to a full evaluation. A small mixed site goes through random changes
 * (test/support/site-changes.ts). After every step synth runs as users run it, and its tree must
 * equal what `renderFromSite` renders from scratch.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderFromSite, synthFromSite } from "../gitops/render-site.ts";
import { readTree } from "../gitops/replace-dir.ts";
import { run } from "./run-cli.ts";
import { apply, readSpecs, step, writeChangingSite } from "./support/site-changes.ts";

let template: string;

beforeAll(async () => {
  template = await mkdtemp(path.join(tmpdir(), "metalsynth-incremental-site-"));
  await writeChangingSite(template);
});

afterAll(async () => {
  await rm(template, { recursive: true, force: true });
});

describe("synth renders only what changed", () => {
  it("leaves byte for byte the tree a full render gives, after every random site change", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), async (steps) => {
        const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-incremental-"));
        try {
          await cp(template, dir, { recursive: true });
          const specs = await readSpecs(dir);
          expect((await run("synth", "--site", dir)).code).toBe(0);
          for (const change of steps) {
            await apply(dir, specs, change);
            const before = await readTree(path.join(dir, "rendered"));
            const synth = await run("synth", "--site", dir);
            const after = await readTree(path.join(dir, "rendered"));
            if (synth.code !== 0) {
              // A refused site writes nothing; the step stays part of the history that follows.
              expect(synth.code, synth.err).toBe(1);
              expect(after).toEqual(before);
              continue;
            }
            const full = await renderFromSite({ site: dir });
            expect(full.rendered).toBeDefined();
            const expected = new Map(
              [...full.rendered!.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
            );
            expect([...after.keys()]).toEqual([...expected.keys()]);
            for (const [file, content] of expected) expect(after.get(file), file).toBe(content);
          }
          // And what it wrote reads back whole: with nothing changed, no directory is rendered again.
          const again = await synthFromSite({ site: dir });
          if (again.rendered) expect(again.rendered.directories.rendered).toBe(0);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
  }, 600_000);
});
