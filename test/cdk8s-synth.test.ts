import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { readTree } from "../gitops/tree-writer.ts";
import { REPO } from "./harness.ts";

/** Objects of a YAML stream, by `kind namespace/name`. */
function objectsOf(text: string): [string, unknown][] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as { kind: string; metadata: { namespace?: string; name: string } })
    .filter((object) => object !== null)
    .map((object) => [`${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`, object]);
}

describe("npx cdk8s synth (cdk8s.yaml)", () => {
  it(
    "writes the same objects as metalsynth synth, into cdk8s's own output directory",
    { timeout: 60_000 },
    async () => {
      const output = await mkdtemp(path.join(tmpdir(), "metalsynth-cdk8s-"));
      try {
        execFileSync("npx", ["cdk8s", "synth", "--output", output], {
          cwd: REPO,
          env: { ...process.env, METALSYNTH_SITE: "examples/site" },
          stdio: "pipe",
        });
        const fromCdk8s = new Map<string, unknown>();
        for (const file of (await readdir(output)).sort())
          for (const [key, object] of objectsOf(await readFile(path.join(output, file), "utf8")))
            fromCdk8s.set(key, object);

        const rendered = new Map<string, unknown>();
        for (const [file, content] of await readTree(path.join(REPO, "examples", "site", "rendered"))) {
          if (file === "metalsynth.lock.yaml" || file.endsWith("/kustomization.yaml")) continue;
          for (const [key, object] of objectsOf(content)) rendered.set(key, object);
        }
        expect([...fromCdk8s.keys()].sort()).toEqual([...rendered.keys()].sort());
        for (const [key, object] of rendered) expect(fromCdk8s.get(key), key).toEqual(object);
      } finally {
        await rm(output, { recursive: true, force: true });
      }
    },
  );
});
