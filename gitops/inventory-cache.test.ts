import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addEastWorker, copyExampleSite } from "../test/support/example-site.ts";
import { issue } from "../synth/issue.ts";
import { Inventory } from "../synth/inventory/inventory.ts";
import { makeHost } from "../test/builders/inventory.ts";
import { sha256 } from "./cache-files.ts";
import { cachedInventory, storeInventory } from "./inventory-cache.ts";
import { readSiteDigest, SiteDigest, type SiteRead } from "./site-digest.ts";
import { readSite, type SiteInput } from "./site-reader.ts";

let site: string;
let cache: string;

beforeEach(async () => {
  site = await copyExampleSite();
  cache = await mkdtemp(path.join(tmpdir(), "metalsynth-inventory-cache-"));
});

afterEach(async () => {
  await rm(site, { recursive: true, force: true });
  await rm(cache, { recursive: true, force: true });
});

/** The site as the CLI's synth reads it: hashed first, then read with both caches. */
async function readAsSynth(read?: SiteRead): Promise<{ input: SiteInput; digest: SiteDigest }> {
  const seen = read ?? (await readSiteDigest({ site }));
  if (seen === undefined) throw new Error("the example site's digest can be read");
  const digest = new SiteDigest({ site });
  const input = await readSite(
    { site },
    { digest, inventoryCache: { directory: cache, seen: seen.inventory, keep: true } },
  );
  return { input, digest };
}

/** What a read of the site gives of its inventory, without any cache. */
async function uncached(): Promise<Pick<SiteInput, "inventory" | "issues">> {
  const { inventory, issues } = await readSite({ site });
  return { inventory, issues };
}

const RACK = ["inventory", "rack-r01.yaml"];

/** The inventory cache's entries, by file name. */
async function entries(): Promise<string[]> {
  return (await readdir(path.join(cache, "inventory")).catch(() => [])).filter((name) =>
    name.endsWith(".v8"),
  );
}

describe("the inventory digest", () => {
  it("is the same read from the files alone as fed by the site reader", async () => {
    const read = await readSiteDigest({ site });
    const fed = new SiteDigest({ site });
    await readSite({ site }, { digest: fed });
    expect(read?.inventory.digest).toBe(fed.inventoryDigest());
    expect(read?.inventory.files).toHaveLength(5);
  });

  it("changes with a host's facts, and not with a spec", async () => {
    const first = (await readSiteDigest({ site }))?.inventory.digest;
    await addEastWorker(site);
    expect((await readSiteDigest({ site }))?.inventory.digest).toBe(first);
    const rack = path.join(site, ...RACK);
    await writeFile(rack, (await readFile(rack, "utf8")).replace("count: 48", "count: 46"));
    expect((await readSiteDigest({ site }))?.inventory.digest).not.toBe(first);
  });
});

describe("the inventory cache", () => {
  it("gives a site whose specs changed the hosts and findings of its unchanged inventory, reading no inventory file", async () => {
    await readAsSynth();
    expect(await entries()).toHaveLength(1);
    await addEastWorker(site);
    const read = await readSiteDigest({ site });
    const expected = await uncached();
    // Whatever the file says now, the hosts come from the cache: the read `seen` is what counts.
    await writeFile(path.join(site, ...RACK), "not: [an inventory");
    const { input, digest } = await readAsSynth(read);
    expect(input.inventory.hosts).toEqual(expected.inventory.hosts);
    expect(input.inventory.setAside).toEqual(expected.inventory.setAside);
    expect(input.issues).toEqual(expected.issues);
    // The run's digest is the one of the files it was answered for.
    expect(digest.digest()).toBe(read?.digest);
  });

  it("reads an inventory whose host facts changed again, and keeps it beside the first", async () => {
    await readAsSynth();
    const rack = path.join(site, ...RACK);
    await writeFile(rack, (await readFile(rack, "utf8")).replace("count: 48", "count: 46"));
    const { input } = await readAsSynth();
    expect(input.inventory.hosts).toEqual((await uncached()).inventory.hosts);
    expect(input.inventory.hosts.some((host) => host.cpus === 46)).toBe(true);
    expect(await entries()).toHaveLength(2);
  });

  it.each([
    ["truncated", (content: Buffer) => content.subarray(0, content.length >> 1)],
    [
      "a byte changed",
      (content: Buffer) => Buffer.from(content.map((byte, at) => (at === 100 ? byte ^ 1 : byte))),
    ],
    ["empty", () => Buffer.alloc(0)],
  ])("misses an entry that is %s", async (_, damage) => {
    await readAsSynth();
    const [name] = await entries();
    const file = path.join(cache, "inventory", name!);
    await writeFile(file, damage(await readFile(file)));
    const digest = (await readSiteDigest({ site }))!.inventory.digest;
    expect(cachedInventory(cache, digest)).toBeUndefined();
  });

  it("misses the entry of another inventory kept under this one's name", async () => {
    await readAsSynth();
    const first = (await readSiteDigest({ site }))!.inventory.digest;
    const rack = path.join(site, ...RACK);
    await writeFile(rack, (await readFile(rack, "utf8")).replace("count: 48", "count: 46"));
    await readAsSynth();
    const second = (await readSiteDigest({ site }))!.inventory.digest;
    const inventory = path.join(cache, "inventory");
    await writeFile(
      path.join(inventory, `${first}.v8`),
      await readFile(path.join(inventory, `${second}.v8`)),
    );
    expect(cachedInventory(cache, first)).toBeUndefined();
    expect(cachedInventory(cache, second)).toBeDefined();
  });

  it("gives back what it kept, and misses an entry cut short behind a checksum that holds", async () => {
    const hosts = Array.from({ length: 2500 }, (_, at) =>
      makeHost({ name: `node-${String(at).padStart(4, "0")}`, cpus: 16 + (at % 7) }),
    );
    const kept = {
      inventory: new Inventory(hosts),
      issues: [issue("inventory-invalid", "spec", "a finding the read gave")],
    };
    const digest = "ab".repeat(32);
    storeInventory(cache, digest, kept);
    const found = cachedInventory(cache, digest);
    expect(found?.inventory.hosts).toEqual(kept.inventory.hosts);
    expect(found?.issues).toEqual(kept.issues);
    const file = path.join(cache, "inventory", `${digest}.v8`);
    const shorter = (await readFile(file)).subarray(65, -100);
    await writeFile(file, Buffer.concat([Buffer.from(`${sha256(shorter)}\n`), shorter]));
    expect(cachedInventory(cache, digest)).toBeUndefined();
  });

  it("keeps nothing from a read told not to keep (a first render's)", async () => {
    const seen = (await readSiteDigest({ site }))!.inventory;
    const digest = new SiteDigest({ site });
    await readSite({ site }, { digest, inventoryCache: { directory: cache, seen, keep: false } });
    expect(await entries()).toEqual([]);
  });

  it("keeps the two most recently used inventories", async () => {
    const rack = path.join(site, ...RACK);
    const original = await readFile(rack, "utf8");
    for (const cpus of [40, 42, 44]) {
      await writeFile(rack, original.replace("count: 48", `count: ${cpus}`));
      await readAsSynth();
    }
    expect(await entries()).toHaveLength(2);
  });
});
