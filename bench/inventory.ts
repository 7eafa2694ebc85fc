/**
 * One inventory read benchmark run (docs/contract.md §8: "inventory read ≥ 20 MB/s for YAML as `kubectl get -o
 * yaml` writes it, not only JSON"), in a process of its own so its peak RSS is its own:
 * `tsx bench/inventory.ts <hosts> <yaml|json>` has a child process write a generated snapshot as one
 * `kind: List` file the way kubectl prints it, then times `readInventory` on it and prints one JSON
 * line. MB/s is 10^6 bytes of file per second.
 *
 * `readInventory` is the whole read `metalsynth validate`, `synth` and `webhook` do: the file read and
 * split, each item parsed and turned into a host, and the Inventory's indexes built. Only the
 * closest-MAC index is left out: it is built on the first `mac-unknown`, not on every read. The read
 * is the compiled code the installed CLI runs (bench/product.ts), and nothing is imported while it
 * is timed.
 */
import { execFileSync } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { readInventory } from "./product.ts";
import { generateBmhs, kubectlJson, kubectlYaml } from "../test/builders/inventory.ts";

/** The result line of one run. */
export interface InventoryBenchResult {
  readonly hosts: number;
  readonly format: InventoryFormat;
  readonly fileMiB: number;
  /** Wall-clock seconds of the read. */
  readonly seconds: number;
  /** CPU seconds of the read, all threads (the garbage collector's helpers too). */
  readonly cpuSeconds: number;
  readonly megabytesPerSecond: number;
  readonly maxRssMiB: number;
}

/** `kubectl get bmh,secret -A -o yaml` or `-o json`. */
export type InventoryFormat = "yaml" | "json";

/** Writes the snapshot (in the child process, so generating it leaves nothing in the reader's heap). */
async function writeSnapshot(file: string, hosts: number, format: InventoryFormat): Promise<void> {
  const objects = generateBmhs(hosts, { seed: 2026, namespace: "metal3" });
  const text = format === "yaml" ? kubectlYaml(objects) : kubectlJson(objects);
  await pipeline(Readable.from(text), createWriteStream(file));
}

async function run(hosts: number, format: InventoryFormat): Promise<InventoryBenchResult> {
  const directory = await mkdtemp(path.join(tmpdir(), "metalsynth-bench-inventory-"));
  try {
    const file = path.join(directory, `hosts.${format}`);
    execFileSync(
      process.execPath,
      ["--import", "tsx", fileURLToPath(import.meta.url), "--write", file, String(hosts), format],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    const { size } = await stat(file);
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    const { inventory, issues } = await readInventory([file], { relativeTo: directory });
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    if (inventory.size !== hosts || issues.length > 0)
      throw new Error(`read ${inventory.size} of ${hosts} hosts, ${issues.length} issue(s)`);
    return {
      hosts,
      format,
      fileMiB: Math.round((size / 2 ** 20) * 10) / 10,
      seconds: Math.round(seconds * 100) / 100,
      cpuSeconds: Math.round((cpu.user + cpu.system) / 1e4) / 100,
      megabytesPerSecond: Math.round((size / 1e6 / seconds) * 10) / 10,
      maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

function isFormat(text: string | undefined): text is InventoryFormat {
  return text === "yaml" || text === "json";
}

const args = process.argv.slice(2);
if (args[0] === "--write") {
  const [, file, hosts, format] = args;
  if (file === undefined || !isFormat(format)) throw new Error("usage: --write <file> <hosts> <yaml|json>");
  await writeSnapshot(file, Number(hosts), format);
} else {
  const [hosts, format] = [Number(args[0]), args[1]];
  if (!hosts || !isFormat(format)) throw new Error("usage: tsx bench/inventory.ts <hosts> <yaml|json>");
  process.stdout.write(`${JSON.stringify(await run(hosts, format))}\n`);
}
