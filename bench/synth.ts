/**
 * One synth benchmark run (SPEC §8), in a process of its own so its peak RSS is its own:
 * `tsx bench/synth.ts <hosts> <clusters> [<directory>]` generates a site (a JSON inventory as
 * `kubectl get -o json` prints it, and BPA clusters half by MAC, half by resources, every fourth with
 * a Software CR), then times each phase of `metalsynth synth` on it and prints one JSON line. The
 * site is removed at the end, unless it was made in `<directory>`: then the caller removes it, after
 * its other runs (see `bench/index.ts`).
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { evaluateSite, readSite, renderPlan, renderSite, writeTree } from "./product.ts";
import { writeGeneratedInventory } from "./generated-inventory.ts";

/** The result line of one run. */
export interface SynthBenchResult {
  readonly hosts: number;
  readonly clusters: number;
  readonly inventoryMiB: number;
  readonly seconds: { read: number; evaluate: number; render: number; write: number; total: number };
  readonly files: number;
  readonly maxRssMiB: number;
}

const MAC_NODES = 2;

function provisioning(index: number, macs: readonly string[]): string {
  const name = `c${String(index).padStart(5, "0")}`;
  const nodes =
    macs.length > 0
      ? `  masters:\n    - master-1:\n        mac-address: ${macs[0]}\n  workers:\n    - worker-1:\n        mac-address: ${macs[1]}\n`
      : "  masters:\n    - master-1:\n        cpu: 8\n        memory: 32Gi\n  workers:\n    - worker-1:\n        cpu: 16\n        memory: 64Gi\n    - worker-2:\n        cpu: 16\n        memory: 64Gi\n";
  const software =
    index % 4 === 0
      ? `---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Software\nmetadata:\n  name: ${name}-software\n  namespace: bench\n  labels:\n    cluster: ${name}\nspec:\n  masterSoftware:\n    - htop\n  workerSoftware:\n    - curl\n    - jq:\n        version: 1.6-2.1ubuntu3\n`
      : "";
  return `---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata:\n  name: ${name}\n  namespace: bench\n  labels:\n    cluster: ${name}\nspec:\n${nodes}  KUDPlugins:\n    - multus\n${software}`;
}

async function generateSite(site: string, hosts: number, clusters: number): Promise<number> {
  const inventoryFile = path.join(site, "inventory", "bmh.json");
  const macs = await writeGeneratedInventory(inventoryFile, hosts, { seed: 2026, format: "json" });
  const specs: string[] = [];
  let macsUsed = 0;
  for (let index = 0; index < clusters; index++) {
    const byMac = index % 2 === 0 && macsUsed + MAC_NODES <= macs.length;
    specs.push(provisioning(index, byMac ? macs.slice(macsUsed, macsUsed + MAC_NODES) : []));
    if (byMac) macsUsed += MAC_NODES;
  }
  await mkdir(path.join(site, "specs"), { recursive: true });
  await writeFile(path.join(site, "specs", "clusters.yaml"), specs.join(""));
  const { size } = await stat(inventoryFile);
  return size;
}

async function run(hosts: number, clusters: number, keptIn: string | undefined): Promise<SynthBenchResult> {
  const site = await mkdtemp(path.join(keptIn ?? tmpdir(), "metalsynth-bench-"));
  try {
    const inventoryBytes = await generateSite(site, hosts, clusters);
    const clock = () => performance.now() / 1000;
    const start = clock();
    const input = await readSite({ site, relativeTo: site });
    const read = clock();
    const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
    const evaluated = clock();
    const problems = [...input.issues, ...evaluation.issues];
    const ready = renderPlan(evaluation.plan, problems);
    if (!ready)
      throw new Error(`the generated site has errors: ${JSON.stringify(problems.slice(0, 3), null, 2)}`);
    const rendered = await renderSite(ready, input.settings);
    const renderedAt = clock();
    await writeTree(input.out, rendered.files);
    const written = clock();
    const round = (value: number) => Math.round(value * 100) / 100;
    return {
      hosts,
      clusters,
      inventoryMiB: round(inventoryBytes / 2 ** 20),
      seconds: {
        read: round(read - start),
        evaluate: round(evaluated - read),
        render: round(renderedAt - evaluated),
        write: round(written - renderedAt),
        total: round(written - start),
      },
      files: rendered.files.size,
      maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  } finally {
    if (keptIn === undefined) await rm(site, { recursive: true, force: true });
  }
}

const [hosts, clusters] = process.argv.slice(2, 4).map(Number);
if (!hosts || !clusters) throw new Error("usage: tsx bench/synth.ts <hosts> <clusters> [<directory>]");
process.stdout.write(`${JSON.stringify(await run(hosts, clusters, process.argv[4]))}\n`);
