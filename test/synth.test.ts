import { cp, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { main, type Console } from "../bin/cli.ts";
import { readTree } from "../gitops/tree-writer.ts";
import { secretMaterialIn } from "../synth/secrets.ts";
import { REPO } from "./harness.ts";

async function run(...argv: string[]) {
  let out = "";
  let err = "";
  const io: Console = { out: (text) => void (out += text), err: (text) => void (err += text) };
  return { code: await main(argv, io), out: () => out, err: () => err };
}

async function exampleCopy(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-synth-"));
  await cp(path.join(REPO, "examples", "site"), dir, { recursive: true });
  return dir;
}

describe("metalsynth synth", () => {
  it("writes the rendered tree, and a second run changes nothing", async () => {
    const site = await exampleCopy();
    const first = await run("synth", "--site", site);
    expect(first.code).toBe(0);
    expect(first.out()).toMatch(/^edge-a\/cluster-east: 3 master\(s\)/m);
    const tree = await readTree(path.join(site, "rendered"));
    // The committed example output is the golden (test/scenarios.test.ts checks its bytes).
    expect([...tree.keys()]).toEqual([
      ...(await readTree(path.join(REPO, "examples", "site", "rendered"))).keys(),
    ]);
    expect(tree.get("clusters/edge-sip/tenant-a/kustomization.yaml")).toContain("bmh-labels.yaml");
    const second = await run("synth", "--site", site);
    expect(second.out()).toContain(`0 added, 0 changed, 0 removed, ${tree.size} unchanged`);
    expect(await readTree(path.join(site, "rendered"))).toEqual(tree);
  });

  it("renders the same bytes from another directory (no absolute paths, no environment)", async () => {
    const [a, b] = [await exampleCopy(), await exampleCopy()];
    await run("synth", "--site", a);
    await run("synth", "--site", b);
    expect(await readTree(path.join(a, "rendered"))).toEqual(await readTree(path.join(b, "rendered")));
    for (const content of (await readTree(path.join(a, "rendered"))).values()) {
      expect(content).not.toContain(a);
      expect(secretMaterialIn(content)).toBeUndefined();
    }
  });

  it("leaves rendered/ untouched and exits 1 when the input has errors", async () => {
    const site = await exampleCopy();
    await run("synth", "--site", site);
    const before = await readTree(path.join(site, "rendered"));
    await writeFile(
      path.join(site, "specs", "typo.yaml"),
      "apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: x, namespace: edge-a, labels: {cluster: x}}\nspec: {mastrs: []}\n",
    );
    const result = await run("synth", "--site", site);
    expect(result.code).toBe(1);
    expect(result.out()).toMatch(/error\[schema\] spec\.mastrs/);
    expect(await readTree(path.join(site, "rendered"))).toEqual(before);
  });
});
