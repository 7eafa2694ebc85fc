/**
 * Writing `rendered/`: the ownership policy of that directory (what may be replaced, which files
 * may go, rendered-file.ts) over the mechanism of `replace-dir.ts`. Apart from render.ts so that
 * writing a tree loads neither cdk8s nor the charts: a synth that renders nothing never loads them
 * (decision 0057).
 */
import { readdir } from "node:fs/promises";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";
import { UsageError } from "./errors.ts";
import { errorCode } from "./files.ts";
import { replaceDirAtomically, resolveDir, type ExistingTree, type TreeChange } from "./replace-dir.ts";

/** Options of {@link writeRendered}. */
export interface WriteRenderedOptions {
  /**
   * Aborting it (the CLI does on SIGINT, SIGTERM and SIGHUP) stops the write at its next file
   * operation; the previous tree is then kept, and the write rejects with the signal's reason.
   * @default undefined
   */
  readonly signal?: AbortSignal;
  /**
   * The tree being replaced is known to be metalsynth's output in full (a run undoing its own
   * write puts the committed tree back), so its files go without asking `isRenderedFile`.
   * @default false: a file about to be removed that metalsynth did not write refuses the write
   */
  readonly previousIsRendered?: boolean;
  /**
   * Files of the tree kept as `out` has them, not in `files` (`renderChanged`'s `kept`).
   * @default none
   */
  readonly kept?: ReadonlySet<string>;
}

/**
 * Replaces `rendered/` (`out`) with the tree `files` of a render, atomically (replaceDirAtomically):
 * the ownership policy of that directory lives here, beside what decides which files a render
 * writes. `out` must be missing, empty, or hold {@link LOCK_FILE} (a mistyped `--out` is never
 * wiped); a non-empty `files` must hold the lock too, so the next run recognises the tree; and a
 * file about to be removed that metalsynth did not write (a user's notes, a hand-added manifest, a
 * symbolic link) refuses the write instead of being deleted.
 *
 * @throws UsageError when `out` is not a directory, is a non-empty directory metalsynth did not
 *   write, or holds files metalsynth did not write that the new tree would remove (exit 2).
 * @throws Error when `files` has no lock file or a path that is not a plain relative POSIX path (a
 *   bug in the caller), and for any file system error, after cleaning up.
 */
export async function writeRendered(
  out: string,
  files: ReadonlyMap<string, string>,
  options: WriteRenderedOptions = {},
): Promise<TreeChange> {
  if (files.size > 0 && !files.has(LOCK_FILE)) {
    throw new Error(
      `writeRendered: the tree has no ${LOCK_FILE}, so the next run could not recognise it as ours`,
    );
  }
  const kept = options.kept ?? new Set<string>();
  return replaceDirAtomically(out, files, {
    ...(options.signal && { signal: options.signal }),
    kept,
    checkPrevious: async (previous) => {
      refuseForeign(previous);
      if (!options.previousIsRendered) await refuseUnrendered(out, previous, files, kept);
    },
  });
}

/**
 * Refuses a write to (or, with `action`, another use of) `out` before anything is read or rendered
 * (a mistyped `--out /tmp` is told at once, not after a whole render): `out` must be missing, an
 * empty directory, or a directory with metalsynth's lock file.
 *
 * @throws UsageError otherwise.
 */
export async function checkOutput(out: string, action = "replace"): Promise<void> {
  const target = await resolveDir(out);
  const names = await readdir(target).catch((error: unknown): string[] => {
    if (errorCode(error) === "ENOENT") return [];
    throw error;
  });
  if (names.length > 0 && !names.includes(LOCK_FILE)) throw foreignTree(target, action);
}

/** Guards an unrelated directory (a mistyped `--out`) against being replaced wholesale. */
function refuseForeign(previous: ExistingTree): void {
  const empty = previous.files.size + previous.specials.size + previous.directories.size === 0;
  if (empty || previous.files.has(LOCK_FILE)) return;
  throw foreignTree(previous.dir);
}

function foreignTree(target: string, action = "replace"): UsageError {
  return new UsageError(
    `${target} is not empty and has no ${LOCK_FILE}, so metalsynth did not write it; refusing to ` +
      `${action} it. Pass another --out, or empty the directory if it really is metalsynth's output`,
    { showHelp: false },
  );
}

/** How many paths a refusal names before it only counts. */
const LISTED_PATHS = 5;

/** Refuses to delete files of the previous tree that metalsynth did not write. */
async function refuseUnrendered(
  out: string,
  previous: ExistingTree,
  files: ReadonlyMap<string, string>,
  kept: ReadonlySet<string>,
): Promise<void> {
  const inTree = (file: string) => files.has(file) || kept.has(file);
  const unowned = [...previous.specials].filter((file) => !inTree(file));
  const going = [...previous.files].filter((file) => !inTree(file));
  // Loaded only when a file goes: a synth that changes nothing loads no YAML parser (decision 0066).
  const { isRenderedFile } =
    going.length > 0 ? await import("./rendered-file.ts") : { isRenderedFile: () => true };
  for (const file of going) if (!isRenderedFile(file, await previous.read(file))) unowned.push(file);
  unowned.sort();
  if (unowned.length === 0) return;
  const listed = unowned.slice(0, LISTED_PATHS).join(", ");
  const more = unowned.length > LISTED_PATHS ? ` and ${unowned.length - LISTED_PATHS} more` : "";
  throw new UsageError(
    `${out} holds files metalsynth did not write (${listed}${more}), and writing the new tree would ` +
      `delete them; move them out of ${out} (metalsynth owns that directory) or delete them, then run again`,
    { showHelp: false },
  );
}
