import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { issueText } from "../synth/issue.ts";
import type { PreviousLock } from "../synth/map/site-map.ts";
import { LOCK_FILE } from "../synth/plan/lock.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import { UsageError } from "./errors.ts";
import { displayPath } from "./files.ts";
import { committedFile, headCommit, openRepository } from "./git.ts";
import { lockFromText } from "../synth/rules/lock.ts";

/**
 * The lock a map compares with (`metalsynth map --diff [LOCKFILE]`): the file given, or else the
 * `metalsynth.lock.yaml` of the output directory `out` as HEAD has it, so a reviewer sees what the
 * working tree's change does to the committed allocation. A damaged lock is a usage error: comparing
 * with an empty lock instead would mark every host as changing hands.
 */
export async function readPreviousLock(
  file: string | undefined,
  out: string,
  relativeTo: string,
): Promise<PreviousLock> {
  if (file !== undefined) {
    const shown = displayPath(path.resolve(file), relativeTo);
    return { lock: parsed(shown, await readFile(file, "utf8")), source: shown };
  }
  const output = await resolvedPath(out);
  const repo = await openRepository(output.existing);
  if (repo === undefined)
    throw new UsageError(
      `--diff without a lock file compares with HEAD's, but ${displayPath(path.resolve(out), relativeTo)} is not in a Git work tree; give one: --diff FILE`,
    );
  const lockPath = path.relative(repo.root, path.join(output.full, LOCK_FILE)).split(path.sep).join("/");
  const source = `HEAD:${lockPath}`;
  if ((await headCommit(repo)) === undefined)
    return { lock: EMPTY_LOCK, source: `${source} (no commits yet)` };
  const text = await committedFile(repo, "HEAD", lockPath);
  // Not committed yet: every host the plan gives out changes hands, which is what the commit will do.
  if (text === undefined) return { lock: EMPTY_LOCK, source: `${source} (not committed yet)` };
  return { lock: parsed(source, text), source };
}

function parsed(shown: string, text: string) {
  const { lock, issues } = lockFromText(shown, text);
  const [problem] = issues;
  if (problem !== undefined) throw new UsageError(`--diff: ${issueText(problem)}`);
  return lock;
}

/**
 * `target` with its symbolic links resolved, as Git reports the work tree's root, also when its last
 * parts do not exist yet (an output directory not written): `existing` is the part that does.
 */
async function resolvedPath(target: string): Promise<{ existing: string; full: string }> {
  const absolute = path.resolve(target);
  let base = absolute;
  for (;;) {
    try {
      const real = await realpath(base);
      return { existing: real, full: path.join(real, path.relative(base, absolute)) };
    } catch (error) {
      const parent = path.dirname(base);
      if (parent === base) throw error;
      base = parent;
    }
  }
}
