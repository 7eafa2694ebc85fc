/**
 * Reads the BMH inventory snapshot (docs/contract.md §1.3) from files and directories. The edge half of the
 * loader: it lists and reads files; synth/inventory decides what the objects mean.
 *
 * Memory follows the hosts, not the files: small files are parsed whole, large ones (a region's
 * `kubectl get bmh -A -o json`, 100k hosts ≈ 100 MB) are streamed and split per list item, and each
 * item becomes a Host's facts before the next one is read.
 */
import { open, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { InventoryBuilder, type InventoryResult } from "../synth/inventory/load.ts";
import { jsonInventoryStream, yamlInventoryStream } from "../synth/inventory/stream.ts";
import { UsageError } from "./errors.ts";
import { errorCode, listInputFiles, systemReason, unreadIssue } from "./files.ts";
import { capSyntaxErrors } from "./report/report.ts";
import { cachedInventory, storeInventory, type InventoryCacheUse } from "./inventory-cache.ts";
import type { InventorySeen, SiteDigest } from "./site-digest.ts";

/** Options of {@link readInventory}. */
export interface ReadInventoryOptions {
  /**
   * Directory that `source.file` of hosts and issues is written relative to, with `/` separators, so
   * output never carries an absolute path.
   * @default process.cwd()
   */
  readonly relativeTo?: string;
  /**
   * The site directory: symbolic links below a path inside it must stay inside it (see
   * {@link listInputFiles}). Without it, each named path is its own boundary.
   */
  readonly site?: string;
  /**
   * The builder the files' objects go into, which may already hold objects from elsewhere (the
   * snapshot `metalsynth inventory pull` is about to write), or watch what each file holds.
   * @default a new {@link InventoryBuilder}
   */
  readonly builder?: InventoryBuilder;
  /**
   * Fed every file as it is read, for the synth cache (decision 0066).
   * @default undefined
   */
  readonly digest?: SiteDigest;
  /**
   * The inventory cache (decision 0068), with a `digest` to key it: the hosts and findings of the
   * inventory as `seen` are taken from it when it holds them (no file is read again), and what a
   * read builds is kept there if it should be. Not with a `builder` of one's own.
   * @default undefined
   */
  readonly cache?: InventoryCacheUse;
}

/**
 * A path given to {@link readInventory} that does not exist. A {@link UsageError}, so the CLI exits 2
 * (how metalsynth was called), not 1 (what the site contains).
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

const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * Loads every `*.yaml`, `*.yml` and `*.json` file under `paths` (files or directories, recursively)
 * into an {@link Inventory}. A file named directly is read whatever its extension. A named path that
 * does not exist throws {@link InventoryPathError}; a file that can't be read, a symbolic link that
 * leaves the site, and everything wrong inside files come back as issues.
 */
export async function readInventory(
  paths: readonly string[],
  options: ReadInventoryOptions = {},
): Promise<InventoryResult> {
  const { digest, cache } = options;
  const cached = digest && cache && fromCache(cache.directory, cache.seen, digest);
  if (cached) return cached;
  const relativeTo = path.resolve(options.relativeTo ?? process.cwd());
  const builder = options.builder ?? new InventoryBuilder();
  const listing = await listInputFiles(paths, {
    relativeTo,
    ...(options.site !== undefined && { site: options.site }),
  });
  const [missing] = listing.missing;
  if (missing !== undefined) throw new InventoryPathError(missing, "no such file or directory");
  for (const entry of listing.unread) {
    builder.report(unreadIssue(entry));
    digest?.unread("inventory", entry.display, entry.reason);
  }
  for (const file of listing.files) {
    builder.beginFile(file.display);
    const content = digest?.stream("inventory", file.display, file.absolute);
    try {
      await readOne(file.absolute, file.display, builder, content?.update);
      content?.end();
    } catch (error) {
      // A file that vanished or can't be opened is a finding about the site; anything else is a bug.
      if (errorCode(error) === undefined) throw error;
      builder.report(unreadIssue({ display: file.display, reason: systemReason(error) }));
      digest?.incomplete("inventory");
    }
  }
  const { inventory, issues } = builder.build();
  const read = { inventory, issues: capSyntaxErrors(issues) };
  const key = cache?.keep === true && digest?.inventoryDigest();
  if (key) storeInventory(cache.directory, key, read);
  return read;
}

/** The inventory `seen` from the cache in `directory`, its parts fed to `digest` as a read feeds them. */
function fromCache(directory: string, seen: InventorySeen, digest: SiteDigest): InventoryResult | undefined {
  const found = cachedInventory(directory, seen.digest);
  if (found === undefined) return undefined;
  feedSeenInventory(seen, digest);
  return found;
}

/** Feeds `digest` the inventory as `seen`, the parts a read of it would feed. */
export function feedSeenInventory(seen: InventorySeen, digest: SiteDigest): void {
  for (const entry of seen.unread) digest.unread("inventory", entry.display, entry.reason);
  for (const file of seen.files) digest.file("inventory", file.display, file.absolute, file.sha256);
}

/**
 * Streams one file into `builder`, whatever its size: each list item or document goes through the
 * fast block-YAML reader (or `JSON.parse`), and only an item that leaves that subset is parsed by the
 * full YAML parser (decision 0016). A small file gains as much as a big one: the full parser reads
 * about 1 MB/s, and a site's example inventory of 130 kB took a third of `validate`.
 */
async function readOne(
  absolute: string,
  file: string,
  builder: InventoryBuilder,
  read: (chunk: string | Uint8Array) => void = () => undefined,
): Promise<void> {
  // One open per file: its head tells JSON from YAML, and the same handle streams it from the start.
  const handle = await open(absolute, "r");
  try {
    const from = { start: 0, highWaterMark: READ_CHUNK_BYTES, autoClose: false };
    if (await looksLikeJson(handle)) {
      const stream = jsonInventoryStream(file, builder);
      for await (const chunk of handle.createReadStream(from)) {
        if (chunk instanceof Uint8Array) {
          read(chunk);
          stream.write(chunk);
        }
      }
      stream.end();
    } else {
      const stream = yamlInventoryStream(file, builder);
      for await (const chunk of handle.createReadStream({ encoding: "utf8", ...from })) {
        if (typeof chunk === "string") {
          read(chunk);
          stream.write(chunk);
        }
      }
      stream.end();
    }
  } finally {
    await handle.close();
  }
}

/**
 * JSON by content, not by name: `kubectl get -o json > hosts.yaml` happens. A YAML flow mapping also
 * starts with `{`; the JSON path hands text that isn't strict JSON to the YAML parser, so it still reads.
 */
async function looksLikeJson(handle: FileHandle): Promise<boolean> {
  const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
  const head = buffer
    .subarray(0, bytesRead)
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .trimStart();
  return head.startsWith("{") || head.startsWith("[");
}
