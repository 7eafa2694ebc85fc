import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readInventory } from "../gitops/inventory-reader.ts";
import { parseDocuments } from "../synth/codec/read-documents.ts";
import { evaluateSite, type Evaluation } from "../synth/evaluate.ts";
import type { Issue } from "../synth/issue.ts";
import type { Inventory } from "../synth/inventory/inventory.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock } from "../synth/model/lock.ts";

/** The repository root, for tests that run the CLI or read fixtures. */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A fixture path under test/fixtures. */
export function fixture(...parts: string[]): string {
  return path.join(REPO, "test", "fixtures", ...parts);
}

/** The small inventory the rule tests share (test/fixtures/rules). */
export async function rulesInventory(): Promise<Inventory> {
  const { inventory, issues } = await readInventory([fixture("rules")], { relativeTo: REPO });
  if (issues.length > 0) throw new Error(`rules inventory has issues: ${JSON.stringify(issues)}`);
  return inventory;
}

/** Evaluates spec YAML text (as `specs/test.yaml`) against an inventory: parse issues included. */
export function evaluateYaml(
  yaml: string,
  inventory: Inventory,
  lock: Lock = EMPTY_LOCK,
): Evaluation & { all: Issue[] } {
  const parsed = parseDocuments("specs/test.yaml", yaml);
  const evaluation = evaluateSite(parsed.documents, inventory, lock);
  return { ...evaluation, all: [...parsed.issues, ...evaluation.issues] };
}

/** `rule path` of each issue, the shape most rule assertions compare. */
export function rulesAndPaths(issues: readonly Issue[]): string[] {
  return issues.map((found) => `${found.rule} ${found.path}`);
}

/** Whether `kubectl` is on the PATH: tests that need it are skipped (and say so) without it. */
export const hasKubectl = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
