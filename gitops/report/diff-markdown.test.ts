import { describe, expect, it } from "vitest";
import { clusterKey } from "../../synth/cluster-key.ts";
import { issue } from "../../synth/issue.ts";
import { lockDocument } from "../../synth/plan/lock.ts";
import type { LockEntry } from "../../synth/model/lock.ts";
import { toYaml, toYamlStream } from "../../synth/codec/yaml-output.ts";
import { diffTrees } from "./diff.ts";
import { code, diffMarkdown } from "./diff-markdown.ts";

const lock = (...entries: LockEntry[]) => toYaml(lockDocument({ entries }));
const bpa = (host: string, role: "master" | "worker", node: string): LockEntry => ({
  host,
  cluster: clusterKey("edge-a", "east"),
  kind: "bpa",
  role,
  node,
});
const configMap = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "edge-a" },
  data,
});
const tree = (files: Record<string, string>) => new Map(Object.entries(files));
const EAST = "clusters/edge-a/east";

describe("diffMarkdown", () => {
  it("counts, tables and lists per cluster the hosts that change hands and the objects", () => {
    const diff = diffTrees(
      tree({
        "metalsynth.lock.yaml": lock(bpa("m3/n1", "master", "m1"), bpa("m3/n2", "worker", "w1")),
        [`${EAST}/a.yaml`]: toYamlStream([configMap("hosts", { a: "1" }), configMap("gone")]),
      }),
      tree({
        "metalsynth.lock.yaml": lock(bpa("m3/n1", "master", "m1"), bpa("m3/n7", "worker", "w1")),
        [`${EAST}/a.yaml`]: toYamlStream([configMap("hosts", { a: "2" }), configMap("new")]),
      }),
    );
    const warning = issue("host-not-ready", "spec.workers[0].w1", "host m3/n7 is <available> | not *ready*", {
      source: { file: "specs/east.yaml", line: 4, column: 7 },
    });
    expect(diffMarkdown(diff, [warning], "rendered")).toBe(
      [
        "### metalsynth diff",
        "",
        "**clusters that change: 1** · 2 host assignments added or removed · objects: 1 added, 1 changed, 1 removed · " +
          "`rendered`: 0 file(s) added, 2 changed, 0 removed",
        "",
        "| cluster | status | hosts in | hosts out | objects + | ~ | − |",
        "|---|---|--:|--:|--:|--:|--:|",
        "| `edge-a/east` | changed | 1 | 1 | 1 | 1 | 1 |",
        "",
        "#### `edge-a/east` (changed)",
        "",
        "Hosts that change hands:",
        "",
        "- joins: worker `w1=m3/n7`",
        "- leaves: worker `w1=m3/n2`",
        "",
        "Objects added:",
        "",
        "- ConfigMap `edge-a/new`",
        "",
        "Objects changed:",
        "",
        "- ConfigMap `edge-a/hosts`",
        "",
        "Objects removed:",
        "",
        "- ConfigMap `edge-a/gone`",
        "",
        "Findings: 0 errors, 1 warning:",
        "",
        "- `specs/east.yaml:4:7` warning `host-not-ready` `spec.workers[0].w1`: host m3/n7 is \\<available\\> \\| not \\*ready\\*",
        "",
      ].join("\n"),
    );
    expect(diffMarkdown(diff, [], "rendered")).not.toMatch(/https?:|\]\(/);
  });

  it("folds a long list in <details> and counts what is past the cap", () => {
    const names = Array.from({ length: 60 }, (_, index) => `cm-${String(index).padStart(2, "0")}`);
    const diff = diffTrees(
      tree({}),
      tree({ [`${EAST}/a.yaml`]: toYamlStream(names.map((name) => configMap(name))) }),
    );
    const text = diffMarkdown(diff, [], "rendered");
    expect(text).toContain("<details><summary>Objects added (60)</summary>\n\n- ConfigMap `edge-a/cm-00`\n");
    expect(text).toContain(
      "- ConfigMap `edge-a/cm-49`\n- … and 10 more ('metalsynth diff' lists them all)\n\n</details>",
    );
    expect(text).not.toContain("cm-50");
  });

  it("says when nothing changes, and when errors left nothing to compare", () => {
    expect(diffMarkdown(diffTrees(tree({}), tree({})), [], "rendered")).toBe(
      "### metalsynth diff\n\n`rendered` is up to date: synth would change nothing.\n",
    );
    const error = issue("mac-format", "spec.x", "bad MAC", {
      source: { file: "s.yaml", line: 1, column: 1 },
    });
    expect(diffMarkdown(undefined, [error], "rendered")).toBe(
      "### metalsynth diff\n\n**The site has 1 error**: nothing was rendered, so nothing is compared.\n\n" +
        "Findings: 1 error, 0 warnings:\n\n- `s.yaml:1:1` error `mac-format` `spec.x`: bad MAC\n",
    );
  });

  it.each([
    ["plain", "`plain`"],
    ["a`b", "``a`b``"],
    ["`a", "`` `a ``"],
    ["a|b", "`a\\|b`"],
    ["a\nb", "`a\\nb`"],
  ])("code(%j) is %s", (text, expected) => {
    expect(code(text)).toBe(expected);
  });
});
