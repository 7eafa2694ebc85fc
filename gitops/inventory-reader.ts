/**
 * Reads the BMH inventory snapshot (SPEC §1.3) from files and directories. The edge half of the
 * loader: it lists and reads files; synth/inventory decides what the objects mean.
 *
 * Memory follows the hosts, not the files: small files are parsed whole, large ones (a region's
 * `kubectl get bmh -A -o json`, 100k hosts ≈ 100 MB) are streamed and split per list item, and each
 * item becomes a Host's facts before the next one is read.
 */
import { createReadStream } from "node:fs";
import { open, readFile, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { parseDocuments } from "../synth/documents.ts";
import { compareText, type Issue } from "../synth/issue.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import { InventoryBuilder } from "../synth/inventory/load.ts";
import { jsonInventoryStream, yamlInventoryStream } from "../synth/inventory/stream.ts";
import { UsageError } from "./errors.ts";
import { displayPath } from "./files.ts";

/** Options of {@link readInventory}. */
export interface ReadInventoryOptions {
  /**
   * Directory that `source.file` of hosts and issues is written relative to, with `/` separators, so
   * output never carries an absolute path.
   * @default process.cwd()
   */
  readonly relativeTo?: string;
  /**
   * Files at least this big are streamed instead of parsed whole. Exposed for tests.
   * @default 1 MiB
   */
  readonly streamFromBytes?: number;
}

/**
 * A path given to {@link readInventory} that can't be read at all. A {@link UsageError}, so the CLI
 * exits 2 (how metalsynth was called), not 1 (what the site contains).
 */
export class InventoryPathError extends UsageError {
  /**
   * @param file the path as given
   * @param reason why it can't be read
   */
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`inventory path ${file}: ${reason}`);
  }
}

const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);
const STREAM_FROM_BYTES = 1024 * 1024;
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * Loads every `*.yaml`, `*.yml` and `*.json` file under `paths` (files or directories, recursively)
 * into an {@link Inventory}. A file named directly is read whatever its extension. Unreadable paths
 * throw {@link InventoryPathError}; everything wrong inside files comes back as issues.
 */
export async function readInventory(
  paths: readonly string[],
  options: ReadInventoryOptions = {},
): Promise<{ inventory: Inventory; issues: Issue[] }> {
  const relativeTo = path.resolve(options.relativeTo ?? process.cwd());
  const streamFrom = options.streamFromBytes ?? STREAM_FROM_BYTES;
  const builder = new InventoryBuilder();
  for (const file of await listFiles(paths, relativeTo)) {
    try {
      await readOne(file.absolute, file.display, builder, streamFrom);
    } catch (error) {
      // A file that vanished or can't be opened is about the call; anything else is a bug.
      if (isSystemError(error)) throw new InventoryPathError(file.display, reasonOf(error));
      throw error;
    }
  }
  return builder.build();
}

interface ListedFile {
  readonly absolute: string;
  readonly display: string;
}

async function listFiles(paths: readonly string[], relativeTo: string): Promise<ListedFile[]> {
  const found = new Map<string, ListedFile>();
  const add = async (absolute: string): Promise<void> => {
    // The same file reached twice (a directory and a file in it, or a symlink) is read once.
    const key = await realpath(absolute);
    if (!found.has(key)) found.set(key, { absolute, display: displayPath(absolute, relativeTo) });
  };
  for (const given of paths) {
    const absolute = path.resolve(given);
    let info;
    try {
      info = await stat(absolute);
    } catch (error) {
      throw new InventoryPathError(given, reasonOf(error));
    }
    if (info.isDirectory()) {
      for (const file of await walk(absolute)) await add(file);
    } else {
      await add(absolute);
    }
  }
  return [...found.values()].sort((a, b) => compareText(a.display, b.display));
}

async function walk(directory: string): Promise<string[]> {
  const files: string[] = [];
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(full)));
    else if (
      (entry.isFile() || entry.isSymbolicLink()) &&
      EXTENSIONS.has(path.extname(entry.name).toLowerCase())
    ) {
      files.push(full);
    }
  }
  return files;
}

async function readOne(
  absolute: string,
  file: string,
  builder: InventoryBuilder,
  streamFrom: number,
): Promise<void> {
  const info = await stat(absolute);
  if (info.size < streamFrom) {
    const parsed = parseDocuments(file, await readFile(absolute, "utf8"));
    for (const found of parsed.issues) builder.report(found);
    for (const document of parsed.documents) {
      builder.add({ value: document.value, source: document.position([]), position: document.position });
    }
    return;
  }
  if (await looksLikeJson(absolute)) {
    const stream = jsonInventoryStream(file, builder);
    for await (const chunk of createReadStream(absolute, { highWaterMark: READ_CHUNK_BYTES })) {
      if (chunk instanceof Uint8Array) stream.write(chunk);
    }
    stream.end();
  } else {
    const stream = yamlInventoryStream(file, builder);
    for await (const chunk of createReadStream(absolute, {
      highWaterMark: READ_CHUNK_BYTES,
      encoding: "utf8",
    })) {
      if (typeof chunk === "string") stream.write(chunk);
    }
    stream.end();
  }
}

/**
 * JSON by content, not by name: `kubectl get -o json > hosts.yaml` happens. A YAML flow mapping also
 * starts with `{`; the JSON path hands text that isn't strict JSON to the YAML parser, so it still reads.
 */
async function looksLikeJson(absolute: string): Promise<boolean> {
  const handle = await open(absolute, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    const head = buffer
      .subarray(0, bytesRead)
      .toString("utf8")
      .replace(/^\uFEFF/, "")
      .trimStart();
    return head.startsWith("{") || head.startsWith("[");
  } finally {
    await handle.close();
  }
}

function isSystemError(error: unknown): error is Error & { code: string } {
  return error instanceof Error && "code" in error && typeof error.code === "string";
}

function reasonOf(error: unknown): string {
  if (isSystemError(error) && error.code === "ENOENT") return "no such file or directory";
  if (isSystemError(error) && error.code === "EACCES") return "permission denied";
  return error instanceof Error ? error.message : String(error);
}
