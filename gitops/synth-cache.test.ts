import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyExampleSite } from "../test/support/example-site.ts";
import { writeRendered } from "./render-write.ts";
import { synthFromSite, synthOutcome } from "./render-site.ts";
import { readSiteDigest, SiteDigest } from "./site-digest.ts";
import { readSite } from "./site-reader.ts";
import { storeSynth, synthFromCache, type SynthOutcome } from "./synth-cache.ts";

let site: string;
let cache: string;

beforeEach(async () => {
  site = await copyExampleSite();
  cache = await mkdtemp(path.join(tmpdir(), "metalsynth-synth-cache-"));
});

afterEach(async () => {
  await rm(site, { recursive: true, force: true });
  await rm(cache, { recursive: true, force: true });
});

/** A synth of the site that fills the cache, with its tree written. */
async function fullSynth(): Promise<void> {
  const found = await synthFromSite({ site }, { cache });
  if (!found.rendered) throw new Error("the example site has errors");
  await writeRendered(path.join(site, "rendered"), found.rendered.files, { kept: found.rendered.kept });
}

/** The synth of the site from the cache, as the CLI asks for it. */
async function fromCache(): Promise<SynthOutcome | undefined> {
  const read = await readSiteDigest({ site });
  if (read === undefined) throw new Error("the example site's digest can be read");
  return synthFromCache({ site }, read, { directory: cache });
}

/** The cache's entries, by file name. */
async function entries(): Promise<string[]> {
  return (await readdir(cache)).filter((name) => name.endsWith(".json"));
}

describe("the site digest", () => {
  it("is the same read from the files alone as fed by the site reader", async () => {
    await fullSynth();
    const fed = new SiteDigest({ site });
    await readSite({ site }, { digest: fed });
    expect((await readSiteDigest({ site }))?.digest).toBe(fed.digest());
  });

  it("changes with any byte the evaluation reads, and with what reads it", async () => {
    await fullSynth();
    const digest = async () => (await readSiteDigest({ site }))?.digest;
    const first = await digest();
    await writeFile(
      path.join(site, "metalsynth.yaml"),
      `${await readFile(path.join(site, "metalsynth.yaml"), "utf8")}\n`,
    );
    expect(await digest()).not.toBe(first);
    const other = new SiteDigest({ site }, "another metalsynth");
    await readSite({ site }, { digest: other });
    expect(other.digest()).not.toBe(await digest());
  });

  it("is not taken where a read fails (the settings file is a directory)", async () => {
    await rm(path.join(site, "metalsynth.yaml"));
    await mkdir(path.join(site, "metalsynth.yaml"));
    expect(await readSiteDigest({ site })).toBeUndefined();
    await synthFromSite({ site }, { cache });
    expect(await entries()).toEqual([]);
  });
});

describe("the synth cache", () => {
  it("misses when it holds nothing for the site", async () => {
    expect(await fromCache()).toBeUndefined();
  });

  it("answers a site whose inputs and tree are as they were with what a full synth gives", async () => {
    await fullSynth();
    await fullSynth();
    const cached = await fromCache();
    const full = synthOutcome(await synthFromSite({ site }));
    expect(cached).toBeDefined();
    expect(cached?.issues).toEqual(full.issues);
    expect(cached?.rendered?.files).toEqual(full.rendered?.files);
    expect(cached?.rendered?.kept).toEqual(full.rendered?.kept);
    expect(cached?.rendered?.clusters).toEqual(full.rendered?.clusters);
    // The lock as read is not kept twice.
    const key = (await readSiteDigest({ site }))!.digest;
    expect(await readFile(path.join(cache, `${key}.json`), "utf8")).toContain('"lock":null');
  });

  it("leaves a tree with a file edited by hand to the full synth", async () => {
    await fullSynth();
    await fullSynth();
    const file = path.join(site, "rendered", "clusters", "edge-a", "cluster-east", "kustomization.yaml");
    await writeFile(file, `${await readFile(file, "utf8")}# edited\n`);
    expect(await fromCache()).toBeUndefined();
  });

  it.each([
    ["truncated", (text: string) => text.slice(0, text.length - 10)],
    ["a byte changed", (text: string) => text.replace('"issues":[', '"issues":[{"rule":"x"},')],
    ["not an entry", () => "{}"],
    ["empty", () => ""],
  ])("misses an entry that is %s", async (_, damage) => {
    await fullSynth();
    await fullSynth();
    for (const name of await entries()) {
      const file = path.join(cache, name);
      await writeFile(file, damage(await readFile(file, "utf8")));
    }
    expect(await fromCache()).toBeUndefined();
  });

  it("misses an entry of another site digest, or of another metalsynth", async () => {
    await fullSynth();
    await fullSynth();
    const key = (await readSiteDigest({ site }))!.digest;
    const text = await readFile(path.join(cache, `${key}.json`), "utf8");
    await rm(path.join(cache, `${key}.json`));
    // Another digest's entry under this digest's name.
    const other = text.replaceAll(key, "0".repeat(64));
    await writeFile(path.join(cache, `${key}.json`), other);
    expect(await fromCache()).toBeUndefined();
    // Another metalsynth's evaluation of the same files is kept under another digest.
    const foreign = new SiteDigest({ site }, "another metalsynth");
    const found = await synthFromSite({ site });
    await readSite({ site }, { digest: foreign });
    storeSynth(foreign, synthOutcome(found), cache);
    expect(await fromCache()).toBeUndefined();
  });
});
