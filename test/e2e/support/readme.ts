/** README.md's blocks that the e2e suite runs as written. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { REPO } from "../../harness.ts";

/** The shell block after `<!-- e2e: name … -->` in README.md, and the fenced block after it, if any. */
export async function readmeBlock(name: string): Promise<{ script: string; shown: string }> {
  const readme = await readFile(path.join(REPO, "README.md"), "utf8");
  const marker = readme.indexOf(`<!-- e2e: ${name} `);
  expect(marker, `README.md has a block marked e2e: ${name}`).toBeGreaterThan(-1);
  const blocks = [...readme.slice(marker).matchAll(/```(\w*)\n([\s\S]*?)```/g)];
  const [script, shown] = blocks;
  expect(script?.[1]).toBe("sh");
  return { script: script?.[2] ?? "", shown: shown?.[2] ?? "" };
}
