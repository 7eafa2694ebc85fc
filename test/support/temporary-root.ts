/**
 * A vitest globalSetup that gives a test run one temporary directory and removes it when the run
 * ends. The tests, and the CLI, git and servers they start, make their scratch directories under
 * `os.tmpdir()`, and not all of them remove what they made: each run of the slow tier left about 60
 * directories in /tmp, and each run of the unit tier 4.
 *
 * `TMPDIR` is set before vitest starts its workers, so they and every process they spawn inherit it;
 * `METALSYNTH_SYNTH_CACHE` too, so the synth cache (decision 0066) of a test run is its own and goes
 * with it (not `XDG_CACHE_HOME`, which would take the e2e suite's build cache along).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export async function setup(): Promise<() => Promise<void>> {
  const previous = process.env.TMPDIR;
  const previousCache = process.env.METALSYNTH_SYNTH_CACHE;
  const root = await mkdtemp(path.join(tmpdir(), "metalsynth-test-run-"));
  process.env.TMPDIR = root;
  process.env.METALSYNTH_SYNTH_CACHE = path.join(root, "synth-cache");
  return async () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (previousCache === undefined) delete process.env.METALSYNTH_SYNTH_CACHE;
    else process.env.METALSYNTH_SYNTH_CACHE = previousCache;
    await rm(root, { recursive: true, force: true });
  };
}
