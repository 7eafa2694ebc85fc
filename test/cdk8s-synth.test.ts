import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { asKubeObject, type KubeObject } from "./support/charts.ts";
import { readTree } from "../gitops/replace-dir.ts";
import { compareText } from "../synth/issue.ts";
import { REPO } from "./harness.ts";

/** Objects of a YAML stream, each with its `kind namespace/name`. */
function objectsOf(text: string): [string, KubeObject][] {
  return parseAllDocuments(text)
    .map((document): unknown => document.toJS())
    .filter((value) => value !== null)
    .map(asKubeObject)
    .map((object) => [`${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`, object]);
}

describe("npx cdk8s synth (cdk8s.yaml)", () => {
  it("writes somewhere other than dist/, which holds the compiled CLI and which cdk8s empties first", async () => {
    const config = parse(await readFile(path.join(REPO, "cdk8s.yaml"), "utf8")) as { output?: string };
    expect(config.output).toBe("cdk8s.out");
  });

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
        const fromCdk8s: [string, KubeObject][] = [];
        for (const file of (await readdir(output)).sort())
          fromCdk8s.push(...objectsOf(await readFile(path.join(output, file), "utf8")));

        const rendered: [string, KubeObject][] = [];
        for (const [file, content] of await readTree(path.join(REPO, "examples", "site", "rendered"))) {
          if (file === "metalsynth.lock.yaml" || file.endsWith("/kustomization.yaml")) continue;
          rendered.push(...objectsOf(content));
        }
        // Keys with repeats: an object written twice by either tool fails here, not in a Map.
        const keys = (objects: [string, KubeObject][]) => objects.map(([key]) => key).sort(compareText);
        expect(keys(fromCdk8s)).toEqual(keys(rendered));
        const byKey = new Map(fromCdk8s);
        for (const [key, object] of rendered) expect(byKey.get(key), key).toEqual(object);
      } finally {
        await rm(output, { recursive: true, force: true });
      }
    },
  );
});
