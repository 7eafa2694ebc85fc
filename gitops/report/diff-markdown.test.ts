import { describe, expect, it } from "vitest";
import { clusterKey } from "../../synth/cluster-key.ts";
import { issue } from "../../synth/issue.ts";
import { lockDocument } from "../../synth/plan/lock.ts";
import type { LockEntry } from "../../synth/model/lock.ts";
import { toYaml, toYamlStream } from "../../synth/codec/yaml-output.ts";
import { diffTrees, type ClusterDiff, type ObjectRef, type RenderedDiff } from "./diff.ts";
import { code, diffMarkdown, MAX_SUMMARY } from "./diff-markdown.ts";

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

  it("cuts a user value past any name metalsynth renders, keeping the code span whole", () => {
    const long = code(`${"x".repeat(400)}|`);
    expect(long).toBe(`\`${"x".repeat(320)}…\``);
    expect(code(`${"a".repeat(319)}😀`)).toBe(`\`${"a".repeat(319)}…\``);
  });
});

/** One changed cluster of a diff: `hosts` assignments in and out, `objects` ConfigMaps changed. */
function changedCluster(
  index: number,
  { hosts = 0, objects = 1, name = "cluster" }: { hosts?: number; objects?: number; name?: string } = {},
): ClusterDiff {
  const key = `edge-${index % 7}/${name}-${String(index).padStart(5, "0")}`;
  const refs = (status: string): ObjectRef[] =>
    Array.from({ length: objects }, (_, object) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: key.split("/")[0],
      name: `${name}-${status}-${object}`,
      file: `clusters/${key}/cluster-configmap.yaml`,
    }));
  const host = (side: string, at: number) => ({
    host: `metal3/${side}-${index}-${at}`,
    role: "worker",
    node: `w${at}`,
  });
  return {
    cluster: key,
    status: "changed",
    hosts: {
      added: Array.from({ length: hosts }, (_, at) => host("in", at)),
      removed: Array.from({ length: hosts }, (_, at) => host("out", at)),
    },
    objects: { added: [], changed: refs("changed"), removed: [] },
    files: [{ path: `clusters/${key}/cluster-configmap.yaml`, status: "changed" }],
  };
}

/** A diff of `clusters` (sorted by key, as diffTrees sorts them) and a changed Flux Kustomization each. */
function siteDiff(clusters: ClusterDiff[]): RenderedDiff {
  const sorted = [...clusters].sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  const kustomizations = sorted.map((cluster) => ({
    apiVersion: "kustomize.toolkit.fluxcd.io/v1",
    kind: "Kustomization",
    namespace: "flux-system",
    name: cluster.cluster.replace("/", "."),
    file: `flux/${cluster.cluster.replace("/", ".")}.yaml`,
  }));
  return {
    clusters: sorted,
    wiring: { added: [], changed: kustomizations, removed: [] },
    files: [
      ...sorted.flatMap((cluster) => cluster.files),
      ...kustomizations.map(({ file }) => ({ path: file, status: "changed" as const })),
    ],
  };
}

/** Host and object counts: what a cluster row shows, and what a fold line counts for the clusters it leaves out. */
interface Counts {
  clusters: number;
  hostsIn: number;
  hostsOut: number;
  added: number;
  changed: number;
  removed: number;
}

function totals(clusters: readonly ClusterDiff[]): Counts {
  return clusters.reduce<Counts>(
    (sum, cluster) => ({
      clusters: sum.clusters + 1,
      hostsIn: sum.hostsIn + cluster.hosts.added.length,
      hostsOut: sum.hostsOut + cluster.hosts.removed.length,
      added: sum.added + cluster.objects.added.length,
      changed: sum.changed + cluster.objects.changed.length,
      removed: sum.removed + cluster.objects.removed.length,
    }),
    { clusters: 0, hostsIn: 0, hostsOut: 0, added: 0, changed: 0, removed: 0 },
  );
}

/** What the summary's fold line after `where` counts, or nothing when it has none. */
function foldCounts(text: string, where: string): Counts {
  const match = new RegExp(
    `^… and (\\d+) more clusters? ${where}: (\\d+) host assignments? added, (\\d+) removed; objects: (\\d+) added, (\\d+) changed, (\\d+) removed`,
    "m",
  ).exec(text);
  const [clusters, hostsIn, hostsOut, added, changed, removed] = (match?.slice(1) ?? []).map(Number);
  return {
    clusters: clusters ?? 0,
    hostsIn: hostsIn ?? 0,
    hostsOut: hostsOut ?? 0,
    added: added ?? 0,
    changed: changed ?? 0,
    removed: removed ?? 0,
  };
}

function sum(a: Counts, b: Counts): Counts {
  return {
    clusters: a.clusters + b.clusters,
    hostsIn: a.hostsIn + b.hostsIn,
    hostsOut: a.hostsOut + b.hostsOut,
    added: a.added + b.added,
    changed: a.changed + b.changed,
    removed: a.removed + b.removed,
  };
}

const LONG = "n".repeat(240);

describe("diffMarkdown stays under MAX_SUMMARY for any site (issue #35)", () => {
  it.each<[string, () => ClusterDiff[]]>([
    ["1 cluster", () => [changedCluster(0)]],
    [
      "500 clusters after one settings change",
      () => Array.from({ length: 500 }, (_, at) => changedCluster(at, { objects: 5 })),
    ],
    [
      "6,000 clusters of a hub, 40 with hosts changing hands",
      () =>
        Array.from({ length: 6000 }, (_, at) =>
          changedCluster(at, { objects: 4, hosts: at % 150 === 7 ? 2 : 0 }),
        ),
    ],
    [
      "300 clusters with names as long as Kubernetes allows and 400 objects each",
      () =>
        Array.from({ length: 300 }, (_, at) => changedCluster(at, { objects: 400, hosts: 60, name: LONG })),
    ],
    [
      "one cluster with 20,000 objects and 5,000 hosts moving",
      () => [changedCluster(0, { objects: 20000, hosts: 5000 })],
    ],
  ])("%s: at most MAX_SUMMARY long, and what it shows and what it counts add up", (_, clusters) => {
    const diff = siteDiff(clusters());
    const warnings = Array.from({ length: 200 }, (_, at) =>
      issue("host-not-ready", `spec.workers[${at}]`, `host ${"h".repeat(2000)} is not ready`, {
        source: { file: `specs/${"f".repeat(300)}.yaml`, line: at + 1, column: 1 },
      }),
    );
    for (const issues of [[], warnings]) {
      const text = diffMarkdown(diff, issues, "rendered");
      expect(text.length).toBeLessThanOrEqual(MAX_SUMMARY);
      expect(diffMarkdown(diff, issues, "rendered")).toBe(text);

      // The table's rows and the line after it count every cluster, host and object once.
      const byKey = new Map(diff.clusters.map((cluster) => [code(cluster.cluster), cluster]));
      const rows = [
        ...text.matchAll(/^\| (`[^`]+`) \| changed \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$/gm),
      ].map((match) => byKey.get(match[1]!)!);
      expect(rows.length).toBeGreaterThan(0);
      expect(sum(totals(rows), foldCounts(text, "not in this table"))).toEqual(totals(diff.clusters));
      // So do the sections and the line after them.
      const sections = [...text.matchAll(/^#### (`[^`]+`) \(changed\)$/gm)].map((match) =>
        byKey.get(match[1]!)!,
      );
      expect(sum(totals(sections), foldCounts(text, "without a section here"))).toEqual(
        totals(diff.clusters),
      );
      // Clusters whose hosts change come first: none is left out while another is shown.
      const moving = (cluster: ClusterDiff) => cluster.hosts.added.length > 0;
      if (rows.some((cluster) => !moving(cluster)))
        expect(rows.filter(moving)).toEqual(diff.clusters.filter(moving));
      if (issues.length > 0)
        expect(text).toMatch(
          /^- … and \d+ more \(0 errors, \d+ warnings; 'metalsynth validate' lists them all\)$/m,
        );
    }
  });

  it("lists errors before warnings, and counts both past what fits, when errors left nothing to compare", () => {
    const finding = (rule: "mac-format" | "host-not-ready", at: number) =>
      issue(rule, `spec.x[${at}]`, `${"m".repeat(3000)}`, {
        source: { file: "a.yaml", line: at + 1, column: 1 },
      });
    const issues = Array.from({ length: 4000 }, (_, at) =>
      finding(at % 2 === 0 ? "host-not-ready" : "mac-format", at),
    );
    const text = diffMarkdown(undefined, issues, "rendered");
    expect(text.length).toBeLessThanOrEqual(MAX_SUMMARY);
    const shown = [...text.matchAll(/^- `a\.yaml:\d+:1` (error|warning) /gm)].map((match) => match[1]);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((severity) => severity === "error")).toBe(true);
    expect(text).toContain("<details><summary>Findings: 2000 errors, 2000 warnings (4000)</summary>");
    expect(text).toContain(
      `- … and ${4000 - shown.length} more (${2000 - shown.length} errors, 2000 warnings; 'metalsynth validate' lists them all)`,
    );
  });
});
