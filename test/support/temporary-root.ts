/**
 * A vitest globalSetup that gives a test run one temporary directory and removes it when the run
 * ends. The tests, and the CLI, git and servers they start, make their scratch directories under
 * `os.tmpdir()`, and not all of them remove what they made: each run of the slow tier left about 60
 * directories in /tmp, and each run of the unit tier 4.
 *
 * `TMPDIR` is set before vitest starts its workers, so they and every process they spawn inherit it;
 * `XDG_CACHE_HOME` too, so the synth cache (decision 0066) of a test run is its own and goes with it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export async function setup(): Promise<() => Promise<void>> {
  const previous = process.env.TMPDIR;
  const previousCache = process.env.XDG_CACHE_HOME;
  const root = await mkdtemp(path.join(tmpdir(), "metalsynth-test-run-"));
  process.env.TMPDIR = root;
  process.env.XDG_CACHE_HOME = path.join(root, "cache");
  return async () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (previousCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = previousCache;
    await rm(root, { recursive: true, force: true });
  };
}
