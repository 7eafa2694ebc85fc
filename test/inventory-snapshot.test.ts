/**
 * The canonical snapshot `metalsynth inventory pull` writes (decision 0023) gives exactly the plan the
 * objects it was taken from give: the same hosts in the same roles with the same addresses, the same
 * findings, the same rendered tree. Over the example site, every golden scenario, and random
 * variations of the example site's inventory (property).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { expandPaths } from "../gitops/files.ts";
import { readInventory } from "../gitops/inventory-reader.ts";
import { renderSite } from "../gitops/render.ts";
import { parseDocuments } from "../synth/codec/read-documents.ts";
import type { SourceDocument } from "../synth/documents.ts";
import { evaluateSite } from "../synth/evaluate.ts";
import { compareText, type Issue } from "../synth/issue.ts";
import { canonicalFiles } from "../synth/inventory/canonical.ts";
import type { Host } from "../synth/inventory/host.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import { buildInventory, documentObjects } from "../synth/inventory/load.ts";
import { listItem } from "../synth/inventory/raw.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock } from "../synth/model/lock.ts";
import { parseLock } from "../synth/rules/lock.ts";
import type { SitePlan } from "../synth/plan/model.ts";
import { renderPlan } from "../synth/plan/render-plan.ts";
import { DEFAULT_SETTINGS, type SiteSettings } from "../synth/schema/settings.ts";
import { resolvePathPrefix } from "../synth/site/path-prefix.ts";
import { readSettings } from "../synth/site/settings.ts";
import { REPO } from "./harness.ts";

const EXAMPLE = path.join(REPO, "examples", "site");
const SCENARIOS = path.join(REPO, "test", "scenarios");

interface Site {
  readonly name: string;
  readonly documents: readonly SourceDocument[];
  readonly inventoryPaths: readonly string[];
  readonly lock: Lock;
  readonly settings: SiteSettings;
}

function documentsOf(files: readonly string[]): SourceDocument[] {
  return files.flatMap(
    (file) => parseDocuments(path.relative(REPO, file), readFileSync(file, "utf8")).documents,
  );
}

function lockAt(file: string): Lock {
  if (!existsSync(file)) return EMPTY_LOCK;
  const parsed = parseLock(parse(readFileSync(file, "utf8")));
  if (parsed.issues.length > 0)
    throw new Error(`${file}: ${parsed.issues.map((found) => found.message).join("; ")}`);
  return parsed.lock;
}

function settingsAt(dir: string): SiteSettings {
  const file = path.join(dir, "metalsynth.yaml");
  if (!existsSync(file)) return DEFAULT_SETTINGS;
  const read = readSettings(parseDocuments("metalsynth.yaml", readFileSync(file, "utf8")).documents);
  return resolvePathPrefix(read.settings, { kind: "work-tree", path: "rendered" }).settings;
}

/** The example site and each golden scenario (`scenario.yaml`: specs and inventory paths). */
async function sites(): Promise<Site[]> {
  const found: Site[] = [
    {
      name: "examples/site",
      documents: documentsOf((await expandPaths([path.join(EXAMPLE, "specs")])).files),
      inventoryPaths: [path.join(EXAMPLE, "inventory")],
      lock: lockAt(path.join(EXAMPLE, "rendered", "metalsynth.lock.yaml")),
      settings: settingsAt(EXAMPLE),
    },
  ];
  const manifests = (await expandPaths([`${SCENARIOS}/**/scenario.yaml`])).files;
  for (const manifest of manifests) {
    const dir = path.dirname(manifest);
    const { specs, inventory } = parse(readFileSync(manifest, "utf8")) as {
      specs: string[];
      inventory: string[];
    };
    found.push({
      name: path.relative(SCENARIOS, dir),
      documents: documentsOf((await expandPaths(specs.map((entry) => path.resolve(dir, entry)))).files),
      inventoryPaths: inventory.map((entry) => path.resolve(dir, entry)),
      lock: lockAt(path.join(dir, "previous-lock.yaml")),
      settings: settingsAt(dir),
    });
  }
  return found;
}

/** The inventory the snapshot of `hosts` reads back as. */
function snapshotOf(hosts: readonly Host[]): { inventory: Inventory; issues: Issue[] } {
  return buildInventory(
    [...canonicalFiles(hosts)].flatMap(([file, text]) =>
      documentObjects(parseDocuments(`inventory/${file}`, text).documents),
    ),
  );
}

/** Everything a plan decided, by host id (a host object's source differs between the two readings). */
function decisions(plan: SitePlan): unknown {
  return {
    clusters: plan.clusters.map((cluster) =>
      cluster.kind === "bpa"
        ? {
            key: cluster.key,
            nodes: [...cluster.masters, ...cluster.workers].map((node) => [
              node.request.role,
              node.request.label,
              node.host.id,
              node.ip,
              node.reason,
            ]),
          }
        : {
            key: cluster.key,
            members: cluster.members.map((member) => [
              member.role,
              member.standby,
              member.host.id,
              member.reason,
            ]),
            released: cluster.released.map((host) => host.id),
          },
    ),
    retired: plan.retired.map((cluster) => [cluster.key, cluster.released.map((host) => host.id)]),
    lock: plan.lock,
  };
}

/** Findings, without where inventory objects were read from (the snapshot is another file). */
function findings(issues: readonly Issue[], inventoryFiles: (file: string) => boolean): string[] {
  return issues
    .map((found) =>
      JSON.stringify([
        found.severity,
        found.rule,
        found.path,
        found.cluster ?? "",
        found.message,
        found.source && !inventoryFiles(found.source.file) ? found.source : "",
      ]),
    )
    .sort(compareText);
}

/**
 * What `evaluateSite` makes of `documents` with each inventory: decisions, findings other than the
 * inventory readers' own (the snapshot has no unused Secrets or label type warnings to report).
 */
function outcome(site: Pick<Site, "documents" | "lock">, inventory: Inventory) {
  const evaluation = evaluateSite(site.documents, inventory, site.lock);
  return { plan: evaluation.plan, issues: evaluation.issues };
}

const isInventoryFile = (file: string) => file.startsWith("inventory/") || file.includes("inventory");

describe("the canonical snapshot plans like the objects it was taken from", async () => {
  const all = await sites();

  it("covers the example site and every golden scenario", () => {
    expect(all.length).toBeGreaterThan(10);
  });

  it.each(all.map((site) => [site.name, site] as const))(
    "%s: same decisions, findings and rendered tree",
    async (_name, site) => {
      const raw = await readInventory(site.inventoryPaths, { relativeTo: REPO });
      const snapshot = snapshotOf(raw.inventory.hosts);
      expect(snapshot.issues.filter((found) => found.severity === "error")).toEqual([]);
      const before = outcome(site, raw.inventory);
      const after = outcome(site, snapshot.inventory);
      expect(decisions(after.plan)).toEqual(decisions(before.plan));
      // Where a host was read differs by design (the dump's file, the snapshot's): so do its findings' places.
      const inventoryFile = (file: string) =>
        isInventoryFile(file) ||
        site.inventoryPaths.some((input) => file.startsWith(path.relative(REPO, input)));
      expect(findings(after.issues, inventoryFile)).toEqual(findings(before.issues, inventoryFile));

      const issues = [...raw.issues, ...before.issues];
      const ready = [
        renderPlan(before.plan, issues),
        renderPlan(after.plan, [...snapshot.issues, ...after.issues]),
      ];
      expect(ready[1] === undefined).toBe(ready[0] === undefined);
      if (ready[0] === undefined || ready[1] === undefined) return;
      const [treeBefore, treeAfter] = [
        await renderSite(ready[0], site.settings),
        await renderSite(ready[1], site.settings),
      ];
      expect([...treeAfter.files.keys()]).toEqual([...treeBefore.files.keys()]);
      for (const [file, text] of treeBefore.files) expect(treeAfter.files.get(file), file).toBe(text);
    },
  );

  it("random variations of the example site's inventory (property)", async () => {
    const [example] = all;
    if (!example) throw new Error("no example site");
    const objects = exampleObjects();
    const names = [
      ...new Set(
        objects.filter((object) => object.kind === "BareMetalHost").map((object) => object.metadata.name),
      ),
    ];
    const mutation = fc.record({
      host: fc.constantFrom(...names),
      change: fc.constantFrom(...MUTATIONS),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (mutations) => {
        const variant = structuredClone(objects);
        for (const { host, change } of mutations) mutate(variant, host, change);
        const raw = buildInventory(
          variant.map((value, index) => ({
            value,
            source: { file: "raw.yaml", line: index + 1, column: 1 },
          })),
        );
        const snapshot = snapshotOf(raw.inventory.hosts);
        const before = outcome(example, raw.inventory);
        const after = outcome(example, snapshot.inventory);
        expect(decisions(after.plan)).toEqual(decisions(before.plan));
        const inventoryFile = (file: string) => file === "raw.yaml" || file.startsWith("inventory/");
        expect(findings(after.issues, inventoryFile)).toEqual(findings(before.issues, inventoryFile));
      }),
      { numRuns: 100 },
    );
  });
});

type RawObject = Record<string, unknown> & {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & {
    hardware?: {
      cpu?: { count?: number };
      ramMebibytes?: number;
      nics?: { name?: string; mac?: string; ip?: string }[];
    };
    provisioning?: { state?: string };
  };
};

/** The example site's inventory objects, lists unwrapped. */
function exampleObjects(): RawObject[] {
  const objects: RawObject[] = [];
  const dir = path.join(EXAMPLE, "inventory");
  for (const file of [
    "rack-r01.yaml",
    "rack-r02.yaml",
    "rack-r03.json",
    "hardwaredata.yaml",
    "networkdata-secrets.yaml",
  ]) {
    for (const document of parseDocuments(file, readFileSync(path.join(dir, file), "utf8")).documents) {
      const value = document.value as { kind?: string; apiVersion?: string; items?: unknown[] } | null;
      if (value === null) continue;
      if (Array.isArray(value.items)) {
        const header = {
          ...(value.kind && { kind: value.kind }),
          ...(value.apiVersion && { apiVersion: value.apiVersion }),
        };
        objects.push(...value.items.map((item) => listItem(header, item) as RawObject));
      } else objects.push(value as RawObject);
    }
  }
  return objects;
}

/** Changes a real inventory refresh can bring, each to one host. */
const MUTATIONS = [
  "cpus",
  "memory",
  "no hardware",
  "nic renumbered",
  "nic without address",
  "bond sharing the boot MAC",
  "nics reversed",
  "label rack",
  "label sriov",
  "state",
  "host gone",
  "secret gone",
  "networkData reference gone",
  "secret as YAML",
] as const;

function mutate(objects: RawObject[], name: string, change: (typeof MUTATIONS)[number]): void {
  const index = objects.findIndex(
    (object) => object.kind === "BareMetalHost" && object.metadata.name === name,
  );
  const host = objects[index];
  if (!host) return;
  const hardware = host.status?.hardware;
  const nics = hardware?.nics ?? [];
  const reference = host.spec?.["networkData"] as { name?: string } | undefined;
  const secret = objects.findIndex(
    (object) => object.kind === "Secret" && object.metadata.name === reference?.name,
  );
  switch (change) {
    case "cpus":
      if (hardware?.cpu) hardware.cpu.count = (hardware.cpu.count ?? 8) * 2;
      break;
    case "memory":
      if (hardware) hardware.ramMebibytes = 32768;
      break;
    case "no hardware":
      if (host.status) delete host.status.hardware;
      break;
    case "nic renumbered":
      for (const nic of nics) if (nic.ip?.startsWith("10.23.")) nic.ip = `10.99.${nic.ip.slice(6)}`;
      break;
    case "nic without address":
      for (const nic of nics) if (nic.ip?.startsWith("10.23.")) delete nic.ip;
      break;
    case "bond sharing the boot MAC":
      // After the NIC it shares the MAC with, but before it by name: only the order says which IP wins.
      nics.push({
        name: "bond0",
        mac: String(host.spec?.["bootMACAddress"] ?? "02:00:00:00:00:01"),
        ip: "10.77.0.1",
      });
      break;
    case "nics reversed":
      nics.reverse();
      break;
    case "label rack":
      host.metadata.labels = { ...host.metadata.labels, "vino.airshipit.org/rack": "r09" };
      break;
    case "label sriov":
      host.metadata.labels = { ...host.metadata.labels, "feature.metalsynth.io/sriov": "true" };
      break;
    case "state":
      if (host.status) host.status.provisioning = { state: "deprovisioning" };
      break;
    case "host gone":
      objects.splice(index, 1);
      break;
    case "secret gone":
      if (secret >= 0) objects.splice(secret, 1);
      break;
    case "networkData reference gone":
      delete host.spec?.["networkData"];
      break;
    case "secret as YAML": {
      const found = objects[secret];
      if (found) {
        delete found["data"];
        found["stringData"] = { networkData: "networks:\n  - { id: oam-ipv4, ip_address: 10.41.9.9 }\n" };
      }
      break;
    }
  }
}
