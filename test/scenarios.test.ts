/**
 * Golden scenarios: each directory under `test/scenarios/` is a site (its `scenario.yaml` names the
 * specs and inventory, a `metalsynth.yaml` beside it the settings, `previous-lock.yaml` the lock of
 * an earlier run), and `expected/` holds the exact `rendered/` tree synth must write for it, or
 * `expected/diagnostics.txt` for a site synth must refuse. `UPDATE_GOLDEN=1 npm test` rewrites the
 * expected trees (review the diff before committing it). The bundled example site is one too: its
 * committed `rendered/` must be what `metalsynth synth --site examples/site` writes.
 */
import { execFileSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { main, type Console } from "../bin/cli.ts";
import { asKubeObject, validateKubernetesObject } from "../charts/test-support.ts";
import { readTree, writeTree } from "../gitops/tree-writer.ts";
import { secretMaterialIn } from "../synth/secrets.ts";
import { hasKubectl, REPO } from "./harness.ts";

const UPDATE = process.env["UPDATE_GOLDEN"] === "1";
const SCENARIOS = path.join(REPO, "test", "scenarios");
const EXAMPLE_SITE = path.join(REPO, "examples", "site");
const LOCK_FILE = "metalsynth.lock.yaml";

interface Scenario {
  readonly name: string;
  readonly site: string;
  readonly specs: readonly string[];
  readonly inventory: readonly string[];
  readonly previousLock?: string;
  /** Where the expected tree is. */
  readonly expected: string;
}

function scenarios(): Scenario[] {
  const found: Scenario[] = [];
  const walk = (dir: string) => {
    const manifest = path.join(dir, "scenario.yaml");
    if (existsSync(manifest)) {
      const { specs, inventory } = parse(readFileSync(manifest, "utf8")) as {
        specs: string[];
        inventory: string[];
      };
      const previousLock = path.join(dir, "previous-lock.yaml");
      found.push({
        name: path.relative(SCENARIOS, dir),
        site: dir,
        specs: specs.map((entry) => path.resolve(dir, entry)),
        inventory: inventory.map((entry) => path.resolve(dir, entry)),
        ...(existsSync(previousLock) ? { previousLock } : {}),
        expected: path.join(dir, "expected"),
      });
      return;
    }
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    ))
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
  };
  walk(SCENARIOS);
  return found;
}

const exampleSite: Scenario = {
  name: "examples/site",
  site: EXAMPLE_SITE,
  specs: [path.join(EXAMPLE_SITE, "specs")],
  inventory: [path.join(EXAMPLE_SITE, "inventory")],
  previousLock: path.join(EXAMPLE_SITE, "rendered", LOCK_FILE),
  expected: path.join(EXAMPLE_SITE, "rendered"),
};

const ALL = [exampleSite, ...scenarios()];

/** Runs `metalsynth synth` on a scenario into a fresh directory; returns that tree and the CLI's output. */
async function synthesise(scenario: Scenario) {
  const out = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-golden-")), "rendered");
  if (scenario.previousLock && existsSync(scenario.previousLock)) {
    await mkdir(out, { recursive: true });
    await copyFile(scenario.previousLock, path.join(out, LOCK_FILE));
  }
  let stdout = "";
  const io: Console = { out: (text) => void (stdout += text), err: () => undefined };
  const argv = ["synth", "--site", scenario.site, "--out", out];
  for (const spec of scenario.specs) argv.push("--specs", spec);
  for (const inventory of scenario.inventory) argv.push("--inventory", inventory);
  const code = await main(argv, io);
  const tree = await readTree(out);
  await rm(path.dirname(out), { recursive: true, force: true });
  // Diagnostics name files relative to the working directory; the golden must not depend on it.
  return { code, tree, stdout: stdout.replaceAll(`${REPO}${path.sep}`, "") };
}

/** The scenario's outcome as a tree: the rendered files, or the diagnostics of a refused site. */
async function outcome(scenario: Scenario): Promise<Map<string, string>> {
  const { code, tree, stdout } = await synthesise(scenario);
  if (code === 0) return tree;
  expect(code, stdout).toBe(1);
  return new Map([["diagnostics.txt", stdout]]);
}

/** Replaces a scenario's expected tree (`UPDATE_GOLDEN=1`). */
async function updateGolden(expected: string, actual: ReadonlyMap<string, string>): Promise<void> {
  const diagnostics = actual.get("diagnostics.txt");
  if (diagnostics === undefined) {
    await writeTree(expected, actual);
    return;
  }
  await rm(expected, { recursive: true, force: true });
  await mkdir(expected, { recursive: true });
  await writeFile(path.join(expected, "diagnostics.txt"), diagnostics);
}

describe.each(ALL.map((scenario) => [scenario.name, scenario] as const))(
  "golden scenario %s",
  (_, scenario) => {
    it("renders exactly the expected tree", async () => {
      const actual = await outcome(scenario);
      if (UPDATE) await updateGolden(scenario.expected, actual);
      const expected = await readTree(scenario.expected);
      expect([...actual.keys()]).toEqual([...expected.keys()]);
      for (const [file, content] of actual) expect(content, file).toBe(expected.get(file));
    });

    it("renders only objects valid for their kind, and no secret material", async () => {
      const expected = await readTree(scenario.expected);
      for (const [file, content] of expected) {
        expect(secretMaterialIn(content), file).toBeUndefined();
        if (!file.endsWith(".yaml") || file === LOCK_FILE || file.endsWith("kustomization.yaml")) continue;
        for (const document of content.split(/^---\n/m).filter((text) => text.trim() !== "")) {
          const object = asKubeObject(parse(document));
          expect(
            () => validateKubernetesObject(object),
            `${file} ${object.kind}/${object.metadata.name}`,
          ).not.toThrow();
        }
      }
    });

    it.skipIf(!hasKubectl)("builds every cluster directory with kubectl kustomize", async () => {
      const clusters = path.join(scenario.expected, "clusters");
      if (!existsSync(clusters)) return;
      for (const namespace of await readdir(clusters)) {
        for (const cluster of await readdir(path.join(clusters, namespace))) {
          const directory = path.join(clusters, namespace, cluster);
          const built = execFileSync("kubectl", ["kustomize", directory], { encoding: "utf8" });
          const files = (await readdir(directory)).filter((file) => file !== "kustomization.yaml");
          let objects = 0;
          for (const file of files)
            objects += (await readFile(path.join(directory, file), "utf8")).split(/^kind: /m).length - 1;
          expect(built.split(/^kind: /m).length - 1, directory).toBe(objects);
        }
      }
    });
  },
);
