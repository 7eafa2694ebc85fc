import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../test/harness.ts";
import { RULES } from "./rule-catalogue.ts";

const source = (file: string) => readFileSync(path.join(REPO, file), "utf8");
const rules = Object.entries(RULES).map(([id, rule]) => [id, rule.module] as const);

describe("the rule catalogue", () => {
  it.each(rules)("names the module that reports %s", (id, module) => {
    expect(source(module)).toContain(`"${id}"`);
  });

  it.each(["synth/model", "synth/site", "synth/plan"])(
    "leaves no rule in %s: normalising and planning call the rules",
    (dir) => {
      const files = readdirSync(path.join(REPO, dir)).filter(
        (file) => file.endsWith(".ts") && !file.endsWith(".test.ts"),
      );
      const found = files.flatMap((file) => {
        const text = source(path.join(dir, file));
        return rules.filter(([id]) => text.includes(`"${id}"`)).map(([id]) => `${file}: ${id}`);
      });
      expect(found).toEqual([]);
    },
  );
});
