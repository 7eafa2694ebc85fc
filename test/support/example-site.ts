import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO } from "../harness.ts";

/**
 * Copies the example site's inputs to `target` (by default a fresh temporary directory) and returns
 * the copy. Without its committed `rendered/`: no lock, so tests don't depend on the last synth.
 */
export async function copyExampleSite(target?: string): Promise<string> {
  const site = target ?? (await mkdtemp(path.join(tmpdir(), "metalsynth-example-site-")));
  await cp(path.join(REPO, "examples", "site"), site, { recursive: true });
  await rm(path.join(site, "rendered"), { recursive: true, force: true });
  return site;
}
