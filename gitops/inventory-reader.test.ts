import { createWriteStream } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { factsOf, generateBmhs, kubectlJson, kubectlYaml, makeBmh } from "../test/builders/inventory.ts";
import { parseDocuments } from "../synth/codec/read-documents.ts";
import type { Issue } from "../synth/issue.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import { InventoryBuilder } from "../synth/inventory/load.ts";
import { UsageError } from "./errors.ts";
import { listInputFiles } from "./files.ts";
import { InventoryPathError, readInventory } from "./inventory-reader.ts";
import { capSyntaxErrors, SYNTAX_ERRORS_PER_FILE } from "./report/report.ts";

const FIXTURES = fileURLToPath(new URL("../test/fixtures/inventory/", import.meta.url));
const EXAMPLE_INVENTORY = fileURLToPath(new URL("../examples/site/inventory/", import.meta.url));

/**
 * The reference read: each file under `root` parsed whole by the `yaml` package, positions and
 * all, where `readInventory` streams every file through its fast reader (decision 0016).
 */
async function readWhole(root: string): Promise<{ inventory: Inventory; issues: Issue[] }> {
  const builder = new InventoryBuilder();
  for (const file of (await listInputFiles([root], { relativeTo: root })).files) {
    builder.beginFile(file.display);
    const parsed = parseDocuments(file.display, await readFile(file.absolute, "utf8"));
    for (const found of parsed.issues) builder.report(found);
    for (const document of parsed.documents) {
      builder.add({ value: document.value, source: document.position([]), position: document.position });
    }
  }
  const { inventory, issues } = builder.build();
  return { inventory, issues: capSyntaxErrors(issues) };
}
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "metalsynth-inventory-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(relative: string, text: string): Promise<string> {
  const file = path.join(dir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

async function writeLines(relative: string, pieces: Iterable<string>): Promise<string> {
  const file = path.join(dir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await pipeline(Readable.from(pieces), createWriteStream(file));
  return file;
}

describe("readInventory", () => {
  it("reads newline-delimited JSON (jq -c, kubectl get --watch) one object per line", async () => {
    const lines = Array.from({ length: 500 }, (_, index) => JSON.stringify(makeBmh({ name: `h${index}` })));
    await write("ndjson/hosts.json", `${lines.join("\n")}\n`);
    const { inventory, issues } = await readInventory([path.join(dir, "ndjson")], { relativeTo: dir });
    expect(inventory.size).toBe(500);
    expect(issues).toEqual([]);
  });

  it("shows the first 20 syntax errors of a file and counts the rest", async () => {
    const broken = Array.from(
      { length: 100 },
      (_, index) => `kind: BareMetalHost\nmetadata:\n  name: [h${index}\n`,
    );
    await write("broken/hosts.yaml", broken.join("---\n"));
    const { issues } = await readInventory([path.join(dir, "broken")], { relativeTo: dir });
    expect(issues.filter((found) => found.rule === "yaml-syntax")).toHaveLength(SYNTAX_ERRORS_PER_FILE + 1);
    expect(issues.at(-1)?.message).toMatch(
      /^… and \d+ more syntax errors in this file \(only the first 20 are shown\)/,
    );
  });

  it("reports dangling and looping links and unreadable directories instead of throwing", async () => {
    await write("links/host.yaml", JSON.stringify(makeBmh({ name: "kept" })));
    await symlink("gone.yaml", path.join(dir, "links", "dangling.yaml"));
    await symlink("self.yaml", path.join(dir, "links", "self.yaml"));
    await mkdir(path.join(dir, "links", "dir.yaml"));
    const { inventory, issues } = await readInventory([path.join(dir, "links")], { relativeTo: dir });
    expect(inventory.hosts.map((host) => host.name)).toEqual(["kept"]);
    expect(issues.map((found) => `${found.rule} ${found.source?.file}: ${found.message}`)).toEqual([
      "file-unread links/dangling.yaml: not read: symbolic link to gone.yaml, which does not exist",
      "file-unread links/self.yaml: not read: symbolic link loop (self.yaml)",
    ]);
  });

  it("reads directories recursively (yaml, yml, json only), with relative '/' paths", async () => {
    await write("tree/b/one.yaml", JSON.stringify(makeBmh({ name: "one" })));
    await write("tree/a/two.yml", JSON.stringify(makeBmh({ name: "two" })));
    await write(
      "tree/three.json",
      JSON.stringify({ kind: "List", apiVersion: "v1", items: [makeBmh({ name: "three" })] }),
    );
    await write("tree/notes.txt", "kind: [ not read");
    const { inventory, issues } = await readInventory([path.join(dir, "tree")], { relativeTo: dir });
    expect(issues).toEqual([]);
    expect(inventory.hosts.map((host) => [host.name, host.source?.file])).toEqual([
      ["one", "tree/b/one.yaml"],
      ["three", "tree/three.json"],
      ["two", "tree/a/two.yml"],
    ]);
  });

  it("reads a file named directly whatever its extension, and a file reached twice once", async () => {
    const file = await write("direct/hosts.txt", JSON.stringify(makeBmh({ name: "direct" })));
    const again = await write("direct/again.yaml", JSON.stringify(makeBmh({ name: "again" })));
    const { inventory, issues } = await readInventory([file, path.join(dir, "direct"), again], {
      relativeTo: dir,
    });
    expect(issues).toEqual([]);
    expect(inventory.hosts.map((host) => host.name)).toEqual(["again", "direct"]);
  });

  it("writes paths relative to the working directory by default", async () => {
    const file = await write("cwd/host.yaml", JSON.stringify(makeBmh()));
    const { inventory } = await readInventory([file]);
    const expected = path.relative(process.cwd(), file).split(path.sep).join("/");
    expect(inventory.hosts[0]?.source?.file).toBe(expected);
  });

  it("throws InventoryPathError, a UsageError (exit 2), for a path that does not exist", async () => {
    const reading = readInventory([path.join(dir, "missing")]);
    await expect(reading).rejects.toThrow(InventoryPathError);
    await expect(reading).rejects.toThrow(UsageError);
    await expect(reading).rejects.toThrow(/missing: no such file or directory/);
  });

  it.each<[string, string, number, number]>([
    ["YAML", "broken.yaml", 4, 1],
    ["JSON", "broken.json", 3, 29],
  ])(
    "reports %s syntax errors with file, line and column, whole or streamed",
    async (_name, name, line, column) => {
      const text =
        name === "broken.json"
          ? '{"kind": "List", "items": [\n  {"kind": "BareMetalHost",\n   "metadata": {"name": "a" "b"}}\n]}'
          : "kind: BareMetalHost\nmetadata:\n  name: [a\nspec: {}\n";
      const file = await write(`syntax/${name}`, text);
      const { issues } = await readInventory([file], { relativeTo: dir });
      expect(issues[0]).toMatchObject({
        rule: "yaml-syntax",
        source: { file: `syntax/${name}`, line, column },
      });
    },
  );

  it.each([
    ["fixture", FIXTURES],
    ["example site's", EXAMPLE_INVENTORY],
  ])("reads every %s file as the full YAML parser reads it whole", async (_name, root) => {
    const whole = await readWhole(root);
    const streamed = await readInventory([root], { relativeTo: root });
    expect(whole.inventory.size).toBeGreaterThan(10);
    expect(streamed.inventory.hosts).toEqual(whole.inventory.hosts);
    expect(streamed.issues).toEqual(whole.issues);
  });

  it("gives the same result whatever the file order (different names, same content)", async () => {
    const items = [...generateBmhs(40, { seed: 7 })];
    await writeLines("order/a.yaml", kubectlYaml(items.slice(0, 20)));
    await writeLines("order/b.json", kubectlJson(items.slice(20)));
    await writeLines("order2/z.yaml", kubectlYaml(items.slice(0, 20)));
    await writeLines("order2/m.json", kubectlJson(items.slice(20)));
    const one = await readInventory([path.join(dir, "order")], { relativeTo: dir });
    const two = await readInventory([path.join(dir, "order2")], { relativeTo: dir });
    expect(one.inventory.hosts.map(factsOf)).toEqual(two.inventory.hosts.map(factsOf));
    expect(one.inventory.size).toBe(40);
  });

  it("reads the same hosts from the same content in JSON and YAML, streamed", async () => {
    const items = (): Iterable<unknown> => generateBmhs(2000, { seed: 42 });
    const json = await writeLines("same/region.json", kubectlJson(items()));
    const yaml = await writeLines("same/region.yaml", kubectlYaml(items()));
    expect((await stat(yaml)).size).toBeGreaterThan(1024 * 1024); // large enough to be streamed
    const fromJson = await readInventory([json], { relativeTo: dir });
    const fromYaml = await readInventory([yaml], { relativeTo: dir });
    expect(fromJson.issues).toEqual([]);
    expect(fromYaml.issues).toEqual([]);
    expect(fromJson.inventory.size).toBe(2000);
    expect(fromYaml.inventory.hosts.map(factsOf)).toEqual(fromJson.inventory.hosts.map(factsOf));
    // The generator's variety made it through: networkData, unknown resources, dual-stack NICs.
    expect(
      fromJson.inventory.hosts.filter((host) => host.networks["oam-ipv4"] !== undefined).length,
    ).toBeGreaterThan(300);
    expect(fromJson.inventory.withUnknownResources().length).toBeGreaterThan(50);
    expect(fromJson.inventory.hosts.some((host) => host.nics.some((nic) => nic.ipv6 !== undefined))).toBe(
      true,
    );
  });

  it("streams a 20k-host JSON List with retained memory proportional to the hosts", async () => {
    const count = 20_000;
    const file = await writeLines("memory/region.json", kubectlJson(generateBmhs(count, { seed: 1 })));
    const size = (await stat(file)).size;
    expect(size).toBeGreaterThan(20 * 1024 * 1024);
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    const collect = (): void => {
      if (typeof gc === "function") gc();
    };
    collect();
    const before = process.memoryUsage().heapUsed;
    const result = await readInventory([file], { relativeTo: dir });
    collect();
    const retained = process.memoryUsage().heapUsed - before;
    expect(result.issues).toEqual([]);
    expect(result.inventory.size).toBe(count);
    expect(result.inventory.byId("site/r0001n01")?.macs.length).toBeGreaterThanOrEqual(2);
    // Hosts cost well under their JSON text; a copy of the file or its parse tree would not fit.
    expect(retained).toBeLessThan(size);
  });
});

it("reads a copy of the upstream anchors directory as a site would hold it", async () => {
  const site = path.join(dir, "site-inventory");
  await cp(path.join(FIXTURES, "airship-sip"), site, { recursive: true });
  const { inventory, issues } = await readInventory([site], { relativeTo: dir });
  // The sample copies one BMC address from host to host (decision 0052).
  expect(new Set(issues.map((found) => found.rule))).toEqual(new Set(["bmc-duplicate"]));
  expect(inventory.size).toBe(6);
  expect(inventory.byId("default/rdm9r009o002")?.source).toEqual({
    file: "site-inventory/bmh.yaml",
    line: 106,
    column: 1,
  });
});
