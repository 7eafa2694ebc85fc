/**
 * The floors synth is held against (issue #40, docs/contract.md §8 "At the floor"): what a script
 * costs that does only the file work of a render, with node:fs and the files already in memory.
 *
 *   tsx bench/floor.ts write <tree> <target>   writes the files of <tree> into <target> (new)
 *   tsx bench/floor.ts read <tree>             reads every file of <tree> and compares it
 *
 * Each first loads <tree> into memory, untimed, then times only the floor's work with
 * process.cpuUsage (user + system time of the process) and prints one JSON line. The bench adds
 * the CPU of a bare `node` start, which every synth run pays too, so a ratio compares two whole
 * processes that differ only in the work.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The result line of a floor run. */
export interface FloorResult {
  /** CPU seconds (user + system) of the floor's work alone. */
  readonly cpuSeconds: number;
  /** Of which system time: creating files is mostly the kernel's work. */
  readonly systemSeconds: number;
  readonly seconds: number;
  readonly files: number;
  readonly bytes: number;
}

/** Every regular file below `tree`, relative path → bytes, in sorted order. */
function loadTree(tree: string): Map<string, Buffer> {
  const files = readdirSync(tree, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(tree, path.join(entry.parentPath, entry.name)))
    .sort();
  return new Map(files.map((file) => [file, readFileSync(path.join(tree, file))]));
}

/** Writes the tree from memory: each directory once, then each file, as a writer must. */
function writeFloor(files: ReadonlyMap<string, Buffer>, target: string): void {
  const directories = new Set([...files.keys()].map((file) => path.dirname(file)));
  for (const directory of directories) mkdirSync(path.join(target, directory), { recursive: true });
  for (const [file, content] of files) writeFileSync(path.join(target, file), content);
}

/** Lists the tree, reads every file and compares it with the bytes expected; the count that differ. */
function readFloor(expected: ReadonlyMap<string, Buffer>, tree: string): number {
  let differ = 0;
  const entries = readdirSync(tree, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = path.relative(tree, path.join(entry.parentPath, entry.name));
    const want = expected.get(file);
    if (want === undefined || !readFileSync(path.join(tree, file)).equals(want)) differ++;
  }
  return differ;
}

function timed(work: () => void): { cpuSeconds: number; systemSeconds: number; seconds: number } {
  const start = performance.now();
  const cpu = process.cpuUsage();
  work();
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - start) / 1000;
  return { cpuSeconds: (used.user + used.system) / 1e6, systemSeconds: used.system / 1e6, seconds };
}

const [mode, tree, target] = process.argv.slice(2);
if (tree === undefined || (mode !== "write" && mode !== "read") || (mode === "write" && !target))
  throw new Error("usage: tsx bench/floor.ts write <tree> <target> | read <tree>");
const files = loadTree(tree);
let differ = 0;
const time =
  mode === "write" ? timed(() => writeFloor(files, target!)) : timed(() => (differ = readFloor(files, tree)));
if (differ > 0) throw new Error(`${differ} files differ from themselves: the tree changed while it was read`);
const bytes = [...files.values()].reduce((sum, content) => sum + content.length, 0);
const result: FloorResult = { ...time, files: files.size, bytes };
process.stdout.write(`${JSON.stringify(result)}\n`);
