import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * synth/ has an inner order (decision 0049): eslint.config.js keeps each tier from importing a later
 * one, and this test keeps the whole graph free of cycles, inside a tier too. Type imports count: a
 * cycle through `import type` is still two modules that cannot be read, or moved, one without the
 * other.
 */
const SYNTH = fileURLToPath(new URL(".", import.meta.url));

/** Every module of synth/ (tests aside: nothing imports them), by path relative to synth/. */
function synthModules(dir = ""): string[] {
  return readdirSync(path.join(SYNTH, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return synthModules(file);
    return file.endsWith(".ts") && !file.endsWith(".test.ts") ? [file] : [];
  });
}

/**
 * The modules `file` imports, by its relative specifiers: `import`, `import type`, `export … from` and
 * `import()` alike (TypeScript's own scan of a file's imports).
 */
function importsOf(file: string, text: string): string[] {
  const imported = ts
    .preProcessFile(text, true, true)
    .importedFiles.map((found) => found.fileName)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)));
  return [...new Set(imported)].sort();
}

/** Every module of synth/ with the modules it imports. */
function importGraph(modules: readonly string[]): Map<string, string[]> {
  return new Map(
    modules.map((file) => [file, importsOf(file, readFileSync(path.join(SYNTH, file), "utf8"))]),
  );
}

/** The first cycle a depth-first walk of `graph` meets, as the path that closes it; none: undefined. */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const walking: string[] = [];
  const visit = (module: string): string[] | undefined => {
    const open = walking.indexOf(module);
    if (open !== -1) return [...walking.slice(open), module];
    if (done.has(module)) return undefined;
    walking.push(module);
    for (const next of graph.get(module) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    walking.pop();
    done.add(module);
    return undefined;
  };
  for (const module of [...graph.keys()].sort()) {
    const cycle = visit(module);
    if (cycle) return cycle;
  }
  return undefined;
}

describe("importsOf", () => {
  it("sees type imports, re-exports and dynamic imports, and leaves packages out", () => {
    const text = [
      'import type { Lock } from "../model/lock.ts";',
      'export { parseLock } from "./lock.ts";',
      'export type * from "../model/bpa.ts";',
      'const later = () => import("../plan/plan-site.ts");',
      'import { z } from "zod";',
      'import { isIPv4 } from "../network.ts";',
    ].join("\n");
    expect(importsOf("rules/x.ts", text)).toEqual([
      "model/bpa.ts",
      "model/lock.ts",
      "network.ts",
      "plan/plan-site.ts",
      "rules/lock.ts",
    ]);
  });
});

describe("findCycle", () => {
  it("names a cycle, however long, by the path that closes it", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts", "d.ts"]],
      ["c.ts", []],
      ["d.ts", ["b.ts"]],
    ]);
    expect(findCycle(graph)).toEqual(["b.ts", "d.ts", "b.ts"]);
    expect(findCycle(new Map([["a.ts", ["a.ts"]]]))).toEqual(["a.ts", "a.ts"]);
  });

  it("finds none where two modules share an import", () => {
    const graph = new Map([
      ["a.ts", ["b.ts", "c.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", []],
    ]);
    expect(findCycle(graph)).toBeUndefined();
  });
});

describe("synth/'s import graph", () => {
  const graph = importGraph(synthModules());

  it("is read from the files", () => {
    expect(graph.get("model/site.ts")).toEqual(["model/bpa.ts", "model/sip.ts"]);
  });

  it("has no cycle, type imports included", () => {
    const cycle = findCycle(graph);
    expect(cycle?.join(" → ")).toBeUndefined();
  });
});
