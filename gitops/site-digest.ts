/**
 * The site digest (decision 0066): one SHA-256 over everything a synth's evaluation reads (every
 * spec and inventory file as listed, with the paths it reports them by; the settings file; the lock
 * in `rendered/`) and over what reads it (metalsynth's own code, its libraries' versions, Node.js,
 * the working directory and the paths it was given). Two runs with one digest evaluate the same
 * site to the same findings and plan, so the second may take the first's from the synth cache.
 *
 * The readers feed it the text they evaluate ({@link SiteDigest}); {@link readSiteDigest} computes it
 * again from the files alone, without parsing anything, for the cache's look-up. Both feed the
 * same parts in the same order, so a site read either way has one digest. Nothing here loads
 * `yaml`, `zod` or cdk8s.
 */
import { createHash, type Hash } from "node:crypto";
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { lstat, readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";
import { displayPath, errorCode, listInputFiles } from "./files.ts";
import type { RenderedPlace } from "../synth/site/path-prefix.ts";
import type { SiteLocation } from "./site-reader.ts";
import { thisRenderer } from "./render-units.ts";

/** The parts of a site the evaluation reads. */
export type SitePart = "spec" | "inventory" | "settings" | "lock";

/** Bumped when what the digest covers, or the cache entry it keys, changes shape. */
const DIGEST_FORMAT = "metalsynth site digest 1";

/** Bumped when what the inventory's own digest covers, or the cache entry it keys, changes shape. */
const INVENTORY_FORMAT = "metalsynth inventory digest 1";

/** The site settings file (site-reader's SETTINGS_FILE, which this module must not import). */
const SETTINGS_FILE = "metalsynth.yaml";

/**
 * A digest fed part by part as a site is read. A read that fails (a finding the cache could not
 * reproduce from the digest alone) makes it {@link SiteDigest.incomplete}: such a run is not cached.
 */
export class SiteDigest {
  readonly #hash: Hash = createHash("sha256");
  #complete = true;
  /**
   * The inventory's own digest, over the same lines as the inventory's share of the site's: the key
   * of the inventory cache (inventory-cache.ts), which a run whose specs changed can still hit.
   */
  readonly #inventory: Hash = createHash("sha256");
  #inventoryComplete = true;
  #lock: string | undefined;
  /**
   * The digest of every line but the specs' contents: the key of a plan kept for specs planned
   * alike (decision 0070), which a run whose specs changed only in what planning does not read
   * can still use.
   */
  readonly #plan: Hash = createHash("sha256");
  /**
   * Where `rendered/` sits in Git, when the evaluation asked (the settings leave the wiring's path
   * prefix to it, decision 0055). Kept beside the digest, not in it: whether it is asked follows
   * from the settings, which are, and the cache asks again before it answers.
   */
  place?: RenderedPlace;

  /**
   * @param location the site as it is read
   * @param identity what reads it (tests stand in another metalsynth)
   */
  constructor(location: SiteLocation, identity = codeIdentity()) {
    const site = location.site ?? ".";
    const caller = [identity, process.cwd(), path.resolve(location.relativeTo ?? ".")];
    this.#part(DIGEST_FORMAT, ...caller);
    this.#part(
      "location",
      JSON.stringify([site, location.specs ?? null, location.inventory ?? null, location.out ?? null]),
    );
    // Where the inventory is listed from and what its paths are shown relative to: its findings'
    // and hosts' positions say so.
    this.#inventory.update(
      `${JSON.stringify([INVENTORY_FORMAT, ...caller, site, location.inventory ?? null])}\n`,
    );
  }

  /** A listed path that is not read, and why (it becomes a `file-unread` finding). */
  unread(part: SitePart, display: string, reason: string): void {
    this.#feed(part, "unread", display, reason);
  }

  /** A file the evaluation looks for and does not find (no settings file, no lock yet). */
  absent(part: SitePart, display: string): void {
    this.#feed(part, "absent", display);
  }

  /** A whole file's content, as text or bytes (its UTF-8 bytes are what count). */
  content(part: SitePart, display: string, absolute: string, content: string | Uint8Array): void {
    this.file(part, display, absolute, createHash("sha256").update(content).digest("hex"));
  }

  /** A file by the SHA-256 of its content (hex), hashed earlier: an inventory answered from its cache. */
  file(part: SitePart, display: string, absolute: string, sha256: string): void {
    if (part === "lock") this.#lock = sha256;
    this.#feed(part, "file", display, path.resolve(absolute), sha256);
  }

  /**
   * A file's content fed chunk by chunk, as a streaming reader reads it; `end` when it is read,
   * which gives the content's SHA-256 (hex).
   */
  stream(
    part: SitePart,
    display: string,
    absolute: string,
  ): { update(chunk: string | Uint8Array): void; end(): string } {
    const hash = createHash("sha256");
    return {
      update: (chunk) => void hash.update(chunk),
      end: () => {
        const sha256 = hash.digest("hex");
        this.file(part, display, absolute, sha256);
        return sha256;
      },
    };
  }

  /** A read of `part` failed: the findings say so, and the run is not cached. */
  incomplete(part: SitePart): void {
    this.#complete = false;
    if (part === "inventory") this.#inventoryComplete = false;
  }

  /**
   * The inventory's digest, hex, once the inventory is read; undefined when a read of it failed.
   * Two runs with one inventory digest read the same hosts and findings from it.
   */
  inventoryDigest(): string | undefined {
    return this.#inventoryComplete ? this.#inventory.copy().digest("hex") : undefined;
  }

  /** The SHA-256 of the lock's content as read, when there was one. */
  get lock(): string | undefined {
    return this.#lock;
  }

  /**
   * The digest of everything but the specs' contents, hex; undefined when a read failed. Two runs
   * with one plan digest read the same inventory, settings and lock, from the same place, by the
   * same code. Call before {@link digest}.
   */
  planDigest(): string | undefined {
    return this.#complete ? this.#plan.copy().digest("hex") : undefined;
  }

  /** The digest, hex; undefined when a read failed. Call once, after the site is read. */
  digest(): string | undefined {
    return this.#complete ? this.#hash.digest("hex") : undefined;
  }

  #feed(part: SitePart, ...fields: string[]): void {
    this.#part(part, ...fields);
    if (part === "inventory") this.#inventory.update(`${JSON.stringify(fields)}\n`);
  }

  #part(...fields: string[]): void {
    const line = `${JSON.stringify(fields)}\n`;
    this.#hash.update(line);
    if (fields[0] !== "spec" || fields[1] !== "file") this.#plan.update(line);
  }
}

/**
 * The digest of the site at `location` as {@link readSite} would read it, computed from the files
 * alone, and the lock's bytes; undefined where reading the site would find an unreadable file or
 * a missing path (the full run then says so).
 */
export async function readSiteDigest(location: SiteLocation): Promise<SiteRead | undefined> {
  const site = location.site ?? ".";
  const relativeTo = location.relativeTo ?? process.cwd();
  const out = location.out ?? path.join(site, "rendered");
  const digest = new SiteDigest(location);
  // As readSite lists and reads them: specs, then the inventory, the settings, the lock.
  const specs = await listInputFiles(location.specs ?? [path.join(site, "specs")], { site, relativeTo });
  if (specs.missing.length > 0) return undefined;
  for (const entry of specs.unread) digest.unread("spec", entry.display, entry.reason);
  for (const file of specs.files) {
    const content = readBytes(file.absolute);
    if (content === undefined) return undefined;
    digest.content("spec", file.display, file.absolute, content);
  }
  const inventory = await listInputFiles(location.inventory ?? [path.join(site, "inventory")], {
    relativeTo: path.resolve(relativeTo),
    site,
  });
  if (inventory.missing.length > 0) return undefined;
  for (const entry of inventory.unread) digest.unread("inventory", entry.display, entry.reason);
  const inventoryFiles: SeenFile[] = [];
  for (const file of inventory.files) {
    const stream = digest.stream("inventory", file.display, file.absolute);
    if (!streamFile(file.absolute, stream.update)) return undefined;
    inventoryFiles.push({ display: file.display, absolute: file.absolute, sha256: stream.end() });
  }
  const seen: InventorySeen = {
    digest: digest.inventoryDigest()!,
    unread: inventory.unread,
    files: inventoryFiles,
  };
  const settings = path.join(site, SETTINGS_FILE);
  const shownSettings = displayPath(settings, relativeTo);
  if ((await lstat(settings).catch(() => undefined)) === undefined) digest.absent("settings", shownSettings);
  else {
    if ((await stat(settings).catch(() => undefined))?.isFile() !== true) return undefined;
    const content = await readFile(settings).catch(() => undefined);
    if (content === undefined) return undefined;
    digest.content("settings", shownSettings, settings, content);
  }
  const lockFile = path.join(out, LOCK_FILE);
  const shownLock = displayPath(lockFile, relativeTo);
  let lock: Buffer | undefined;
  try {
    lock = readFileSync(lockFile);
    digest.content("lock", shownLock, lockFile, lock);
  } catch (error) {
    if (errorCode(error) !== "ENOENT" && errorCode(error) !== "ENOTDIR") return undefined;
    digest.absent("lock", shownLock);
  }
  const plan = digest.planDigest();
  const found = digest.digest();
  return found === undefined || plan === undefined
    ? undefined
    : { digest: found, plan, ...(lock && { lock }), inventory: seen };
}

/** A site as {@link readSiteDigest} read it. */
export interface SiteRead {
  readonly digest: string;
  /** {@link SiteDigest.planDigest}: the key of a plan kept for these inventory, settings and lock. */
  readonly plan: string;
  /** The lock's bytes, when there is one. */
  readonly lock?: Buffer;
  readonly inventory: InventorySeen;
}

/** A file of the inventory as {@link readSiteDigest} read it. */
export interface SeenFile {
  readonly display: string;
  readonly absolute: string;
  /** Its content's SHA-256, hex. */
  readonly sha256: string;
}

/**
 * The inventory as {@link readSiteDigest} listed and hashed it: all a run needs to take its hosts
 * and findings from the inventory cache under `digest`, and to feed its {@link SiteDigest} the
 * same parts without reading a file again.
 */
export interface InventorySeen {
  /** {@link SiteDigest.inventoryDigest} of these parts. */
  readonly digest: string;
  readonly unread: readonly { readonly display: string; readonly reason: string }[];
  readonly files: readonly SeenFile[];
}

function readBytes(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Feeds a file to `update` a megabyte at a time (a region's inventory is hundreds); false if it can't be read. */
function streamFile(file: string, update: (chunk: Uint8Array) => void): boolean {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return false;
  }
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer))
      update(buffer.subarray(0, read));
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

const CHUNK_BYTES = 1024 * 1024;

let identity: string | undefined;

/**
 * What evaluates a site: the SHA-256 of metalsynth's own code (every module of `dist/`, or of the
 * sources when they run through tsx, so a work tree's change is seen without a version bump), its
 * package.json, the versions of the libraries it reads and renders with, and Node.js's version and
 * platform. Computed once per process.
 */
export function codeIdentity(): string {
  identity ??= readCodeIdentity();
  return identity;
}

function readCodeIdentity(): string {
  const here = fileURLToPath(import.meta.url);
  const fromSources = here.endsWith(".ts");
  // gitops/ beside the sources, dist/gitops/ once compiled.
  const root = path.resolve(path.dirname(here), fromSources ? ".." : "../..");
  const hash = createHash("sha256");
  hash.update(`${process.version} ${process.platform} ${process.arch}\n${thisRenderer().versions}\n`);
  const require = createRequire(import.meta.url);
  for (const library of EVALUATION_LIBRARIES) {
    const manifest = readFileSync(require.resolve(`${library}/package.json`));
    hash.update(`${library} ${createHash("sha256").update(manifest).digest("hex")}\n`);
  }
  hash.update(readFileSync(path.join(root, "package.json")));
  const code = fromSources
    ? SOURCE_DIRECTORIES.map((name) => path.join(root, name))
    : [path.join(root, "dist")];
  const ending = fromSources ? ".ts" : ".js";
  for (const directory of code) {
    const files = readdirSync(directory, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(ending))
      .sort();
    for (const file of files) {
      const content = readFileSync(path.join(directory, file));
      hash.update(`${path.relative(root, path.join(directory, file))}\0${content.length}\0`);
      hash.update(content);
    }
  }
  return hash.digest("hex");
}

/** The libraries an evaluation runs besides those {@link thisRenderer} names: schemas and globs. */
const EVALUATION_LIBRARIES = ["zod", "picomatch"];

/** The folders of metalsynth's sources that a synth can load. */
const SOURCE_DIRECTORIES = ["bin", "charts", "gitops", "synth", "webhook"];
