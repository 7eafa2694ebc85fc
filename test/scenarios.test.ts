/**
 * Golden scenarios: each directory under `test/scenarios/` is a site (its `scenario.yaml` names the
 * specs and inventory, a `metalsynth.yaml` beside it the settings, `previous-lock.yaml` the lock of
 * an earlier run), and `expected/` holds the exact `rendered/` tree synth must write for it, or
 * `expected/diagnostics.txt` for a site synth must refuse. `UPDATE_GOLDEN=1 npm run test:slow` rewrites the
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
import { asKubeObject, type KubeObject, validateKubernetesObject } from "./support/charts.ts";
import { writeRendered } from "../gitops/render.ts";
import { readTree } from "../gitops/replace-dir.ts";
import { compareText } from "../synth/issue.ts";
import { clusterDirectoryName } from "../synth/names.ts";
import { secretMaterialIn } from "../synth/rules/secrets.ts";
import { hasKubectl, REPO } from "./harness.ts";
import { dnsLabel } from "./builders/inventory.ts";

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
      const { specs, inventory } = scenarioManifest(manifest);
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
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name)))
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
  };
  walk(SCENARIOS);
  return found;
}

/** `specs` and `inventory` of a `scenario.yaml`, refused unless both are lists of paths. */
function scenarioManifest(file: string): { specs: string[]; inventory: string[] } {
  const value: unknown = parse(readFileSync(file, "utf8"));
  const paths = (key: string): string[] => {
    const list: unknown = typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined;
    if (!Array.isArray(list) || !list.every((entry) => typeof entry === "string"))
      throw new Error(`${file}: ${key} must be a list of paths`);
    return list;
  };
  return { specs: paths("specs"), inventory: paths("inventory") };
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
    await writeRendered(expected, actual);
    return;
  }
  await rm(expected, { recursive: true, force: true });
  await mkdir(expected, { recursive: true });
  await writeFile(path.join(expected, "diagnostics.txt"), diagnostics);
}

/** The objects of a rendered YAML stream. */
function objectsIn(content: string): KubeObject[] {
  return content
    .split(/^---\n/m)
    .filter((text) => text.trim() !== "")
    .map((document) => asKubeObject(parse(document)));
}

/** docs/contract.md §4: the component files a cluster directory may hold, each with its objects' sync wave. */
const COMPONENT_WAVES: Readonly<Record<string, string>> = {
  "allocation.yaml": "-3",
  "specs.yaml": "-2",
  "bmh-labels.yaml": "-1",
  "jumphost.yaml": "0",
  "auth.yaml": "0",
  "loadbalancer-controlplane.yaml": "0",
  "loadbalancer-worker.yaml": "0",
  "cluster-configmap.yaml": "1",
  "kud-installer.yaml": "1",
  "software.yaml": "2",
};

/** docs/contract.md §4.1, §4.2: the name each component gives its objects of a kind (a further service adds `-<n>`). */
function specName(component: string, kind: string, clusterName: string): RegExp | undefined {
  const cluster = clusterName.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const names: Readonly<Record<string, RegExp>> = {
    "cluster-configmap.yaml ConfigMap": new RegExp(`^${cluster}-configmap$`),
    "kud-installer.yaml Job": new RegExp(`^kud-${cluster}-[0-9a-f]{8}$`),
    "software.yaml Job": new RegExp(`^software-${cluster}-[0-9a-f]{8}$`),
    "loadbalancer-controlplane.yaml Service": new RegExp(`^loadbalancer-controlplane-${cluster}(-\\d+)?$`),
    "loadbalancer-worker.yaml Service": new RegExp(`^loadbalancer-worker-${cluster}(-\\d+)?$`),
    "jumphost.yaml Service": new RegExp(`^jumphost-${cluster}(-\\d+)?$`),
    "auth.yaml Service": new RegExp(`^auth-${cluster}$`),
    "auth.yaml Deployment": new RegExp(`^auth-${cluster}$`),
    "auth.yaml Certificate": new RegExp(`^auth-${cluster}$`),
  };
  return names[`${component} ${kind}`];
}

/** The BareMetalHost namespaces the label Job of a `bmh-labels.yaml` works in: its containers' first argument. */
function bmhNamespaces(content: string): (string | undefined)[] {
  return objectsIn(content)
    .filter((object) => object.kind === "Job")
    .flatMap(
      (job) =>
        (job.spec as { template: { spec: { containers: { args: string[] }[] } } }).template.spec.containers,
    )
    .map((container) => container.args[0]);
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

    it("renders the same tree again from its own output: a second synth writes nothing", async () => {
      const expected = await readTree(scenario.expected);
      if (!expected.has(LOCK_FILE)) return;
      const again = await outcome({ ...scenario, previousLock: path.join(scenario.expected, LOCK_FILE) });
      expect([...again.keys()]).toEqual([...expected.keys()]);
      for (const [file, content] of again) expect(content, file).toBe(expected.get(file));
    });

    it("renders only objects valid for their kind, and no secret material", async () => {
      const expected = await readTree(scenario.expected);
      for (const [file, content] of expected) {
        expect(secretMaterialIn(content), file).toBeUndefined();
        if (!file.endsWith(".yaml") || file === LOCK_FILE || file.endsWith("kustomization.yaml")) continue;
        for (const object of objectsIn(content)) {
          expect(
            () => validateKubernetesObject(object),
            `${file} ${object.kind}/${object.metadata.name}`,
          ).not.toThrow();
        }
      }
    });

    it("follows docs/contract.md §4: component files, object names, namespaces, labels, sync waves and wiring", async () => {
      const expected = await readTree(scenario.expected);
      const directories = new Map<string, string[]>();
      for (const [file, content] of expected) {
        const match = /^clusters\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(file);
        if (!match) continue;
        const [, namespace = "", cluster = "", component = ""] = match;
        const components = directories.get(`${namespace}/${cluster}`) ?? [];
        directories.set(`${namespace}/${cluster}`, components);
        if (component === "kustomization.yaml") continue;
        components.push(component);
        expect(Object.keys(COMPONENT_WAVES), file).toContain(component);
        for (const object of objectsIn(content)) {
          const where = `${file} ${object.kind}/${object.metadata.name}`;
          expect(object.metadata.annotations?.["argocd.argoproj.io/sync-wave"], where).toBe(
            COMPONENT_WAVES[component],
          );
          const name = specName(component, object.kind, cluster);
          if (name) expect(object.metadata.name, where).toMatch(name);
          // Deleting the cluster's Argo CD Application removes its Allocation and CRs only (decision 0039).
          const kept = /(^|,)Delete=false(,|$)/.test(
            object.metadata.annotations?.["argocd.argoproj.io/sync-options"] ?? "",
          );
          expect(kept, where).toBe(!["allocation.yaml", "specs.yaml"].includes(component));
          // No agent may create a BareMetalHost, so none is rendered (decision 0040).
          expect(object.kind, where).not.toBe("BareMetalHost");
          // The label Job's access is granted where the hosts are (a Role in each BMH namespace).
          if (component === "bmh-labels.yaml" && ["Role", "RoleBinding"].includes(object.kind)) {
            expect(bmhNamespaces(content), where).toContain(object.metadata.namespace);
          } else {
            expect(object.metadata.namespace, where).toBe(namespace);
          }
          expect(object.metadata.labels, where).toMatchObject({
            "app.kubernetes.io/managed-by": "metalsynth",
            "metalsynth.io/cluster": cluster,
          });
        }
      }
      for (const [directory, components] of directories) {
        const kustomization: unknown = parse(expected.get(`clusters/${directory}/kustomization.yaml`) ?? "");
        expect(kustomization, directory).toEqual({
          apiVersion: "kustomize.config.k8s.io/v1beta1",
          kind: "Kustomization",
          resources: [...components].sort(compareText),
        });
      }
      // Flux, when the site renders it, has one Kustomization per cluster directory, named after it.
      const flux = [...expected.keys()].filter((file) => file.startsWith("flux/"));
      if (flux.length > 0) {
        expect(flux.sort(compareText)).toEqual(
          [...directories.keys()]
            .map((directory) => {
              const [namespace, cluster] = directory.split("/");
              return `flux/${clusterDirectoryName(dnsLabel(namespace!), dnsLabel(cluster!))}.yaml`;
            })
            .sort(compareText),
        );
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
