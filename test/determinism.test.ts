/**
 * docs/contract.md §3.4 / §8: the rendered tree is a function of the site's content only. The example site is
 * re-written with its spec documents regrouped into other files in another order, and its
 * inventory objects shuffled across YAML streams and JSON Lists; synth must write the same bytes.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile, copyFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { parseAllDocuments, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { main } from "../bin/cli.ts";
import { expandPaths } from "../gitops/files.ts";
import { readTree } from "../gitops/replace-dir.ts";
import { REPO } from "./harness.ts";

const EXAMPLE = path.join(REPO, "examples", "site");

/** Every object of the files under `dir`, with Lists flattened into their items. */
async function objectsUnder(dir: string): Promise<unknown[]> {
  const { files } = await expandPaths([dir]);
  const objects: unknown[] = [];
  for (const file of files) {
    const text = await readFile(file, "utf8");
    const values = file.endsWith(".json")
      ? [JSON.parse(text)]
      : parseAllDocuments(text).map((doc) => doc.toJS());
    for (const value of values) {
      const items: unknown = Reflect.get(Object(value), "items");
      objects.push(...(Array.isArray(items) ? items : [value]));
    }
  }
  return objects;
}

/** Writes `objects` into `count` files (round robin), alternately as YAML streams and JSON Lists. */
async function writeObjects(dir: string, objects: readonly unknown[], count: number, prefix: string) {
  await mkdir(dir, { recursive: true });
  for (let index = 0; index < count; index++) {
    const share = objects.filter((_, position) => position % count === index);
    if (share.length === 0) continue;
    const name = `${prefix}-${String(count - index).padStart(2, "0")}`;
    if (index % 2 === 1) {
      const list = { apiVersion: "v1", kind: "List", items: share };
      await writeFile(path.join(dir, `${name}.json`), JSON.stringify(list));
    } else {
      await writeFile(path.join(dir, `${name}.yaml`), share.map((object) => stringify(object)).join("---\n"));
    }
  }
}

async function synthTree(site: string): Promise<Map<string, string>> {
  const silent = { out: () => undefined, err: () => undefined };
  expect(await main(["synth", "--site", site], silent)).toBe(0);
  return readTree(path.join(site, "rendered"));
}

describe("determinism", () => {
  it("renders byte-identical trees whatever the file, document and inventory order (property)", async () => {
    const specs = await objectsUnder(path.join(EXAMPLE, "specs"));
    const inventory = await objectsUnder(path.join(EXAMPLE, "inventory"));
    const reference = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-order-")), "site");
    await writeObjects(path.join(reference, "specs"), specs, 1, "specs");
    await writeObjects(path.join(reference, "inventory"), inventory, 1, "inventory");
    await copyFile(path.join(EXAMPLE, "metalsynth.yaml"), path.join(reference, "metalsynth.yaml"));
    const expected = await synthTree(reference);
    await rm(path.dirname(reference), { recursive: true });
    // The reference is a whole tree, not an empty or partial one that any run would match.
    expect([...expected.keys()]).toEqual([...(await readTree(path.join(EXAMPLE, "rendered"))).keys()]);

    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(specs, { minLength: specs.length }),
        fc.shuffledSubarray(inventory, { minLength: inventory.length }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        async (shuffledSpecs, shuffledInventory, specFiles, inventoryFiles) => {
          const site = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-order-")), "site");
          try {
            await writeObjects(path.join(site, "specs"), shuffledSpecs, specFiles, "specs");
            await writeObjects(path.join(site, "inventory"), shuffledInventory, inventoryFiles, "hosts");
            await copyFile(path.join(EXAMPLE, "metalsynth.yaml"), path.join(site, "metalsynth.yaml"));
            expect(await synthTree(site)).toEqual(expected);
          } finally {
            await rm(path.dirname(site), { recursive: true });
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});
