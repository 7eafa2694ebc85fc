import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
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

/**
 * Gives cluster-east of a copy of the example site a third worker, pinned by the MAC of a host no
 * cluster has (r02-node-08): one host changes hands, and cluster-east's objects change.
 */
export async function addEastWorker(site: string): Promise<void> {
  const file = path.join(site, "specs", "cluster-east", "provisioning.yaml");
  const text = await readFile(file, "utf8");
  if (!text.includes("  KUDPlugins:")) throw new Error(`${file} has no KUDPlugins`);
  await writeFile(
    file,
    text.replace("  KUDPlugins:", "    - worker-3:\n        mac-address: 3c:fd:fe:87:80:3c\n  KUDPlugins:"),
  );
}
