/**
 * `metalsynth release` as a user runs it (decision 0052): a snapshot that lost a locked host refuses
 * the site until the host is released, and releasing renders it with only that node moved.
 */
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { readTree } from "../gitops/replace-dir.ts";
import { REPO } from "./harness.ts";
import { run } from "./run-cli.ts";

/** A copy of the example site, rendered/ and all, whose snapshot no longer holds `host`. */
async function siteWithout(host: string): Promise<string> {
  const site = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-release-")), "site");
  await cp(path.join(REPO, "examples", "site"), site, { recursive: true });
  const file = path.join(site, "inventory", "rack-r01.yaml");
  const list = parse(await readFile(file, "utf8")) as { items: { metadata: { name: string } }[] };
  list.items = list.items.filter((item) => item.metadata.name !== host);
  await writeFile(file, stringify(list));
  return site;
}

describe("metalsynth release", () => {
  it("holds cluster-west's master-1 on its lost host until released, then moves only that node", async () => {
    const site = await siteWithout("r01-node-05");
    const rendered = path.join(site, "rendered");
    const before = await readTree(rendered);

    const validate = await run("validate", "--site", site);
    expect(validate.code).toBe(1);
    expect(validate.out).toMatch(
      /specs\/cluster-west\/provisioning\.yaml:\d+:\d+: error\[host-vanished\] spec\.masters\[0\]\.master-1: host metal3\/r01-node-05, which the lock gives to edge-a\/cluster-west as master master-1, is missing from the inventory snapshot/,
    );
    expect((await run("synth", "--site", site)).code).toBe(1);

    const healthy = await run("release", "metal3/r01-node-01", "--site", site);
    expect(healthy.code).toBe(1);
    expect(healthy.err).toContain(
      "metalsynth: cannot release metal3/r01-node-01: the host is in the snapshot and available",
    );
    expect(await readTree(rendered)).toEqual(before);

    const released = await run("release", "r01-node-05", "--site", site);
    expect(released.code).toBe(0);
    expect(released.out).toContain(
      "released metal3/r01-node-05 from edge-a/cluster-west (master master-1): missing from the snapshot\n",
    );
    const after = await readTree(rendered);
    const lock = after.get("metalsynth.lock.yaml") ?? "";
    expect(lock).not.toContain("metal3/r01-node-05");
    const changed = [...after.keys()].filter((file) => after.get(file) !== before.get(file));
    expect(changed.every((file) => file === "metalsynth.lock.yaml" || file.includes("cluster-west"))).toBe(
      true,
    );
    expect((await run("validate", "--site", site)).code).toBe(0);
    expect((await run("synth", "--site", site)).out).toMatch(/0 added, 0 changed, 0 removed/);
  });

  it("takes hosts and nothing else", async () => {
    const result = await run("release", "--site", path.join(REPO, "examples", "site"));
    expect(result.code).toBe(2);
    expect(result.err).toContain("release takes the hosts to release");
  });
});
