import { compareIssues, oneLine, type Issue } from "../../synth/issue.ts";
import type {
  ChangeStatus,
  ClusterDiff,
  HostAssignment,
  ObjectChanges,
  ObjectRef,
  RenderedDiff,
} from "./diff.ts";

/** Lists longer than this are folded into `<details>`, so the summary stays a screen or two. */
const FOLD_AFTER = 5;
/**
 * Items a folded list shows at most; past it the rest are counted. Keeps a site-wide change well
 * under a pull-request comment's 65,536 characters and a job summary's 1 MiB.
 */
const MAX_LISTED = 50;

/**
 * `metalsynth diff -o markdown`: a pull-request summary of what synth would change in `out` (for
 * `$GITHUB_STEP_SUMMARY` or a comment). A count line, a table of the clusters that change, then per
 * cluster the hosts that change hands and the objects added, changed and removed, long lists folded
 * in `<details>`; the findings last. Self-contained: no links, every user value in a code span.
 * `diff` undefined means the site has errors and nothing was compared.
 */
export function diffMarkdown(diff: RenderedDiff | undefined, issues: readonly Issue[], out: string): string {
  const parts = ["### metalsynth diff", ""];
  if (diff === undefined) {
    const errors = issues.filter((found) => found.severity === "error").length;
    parts.push(
      `**The site has ${plural(errors, "error")}**: nothing was rendered, so nothing is compared.`,
      "",
    );
  } else parts.push(...changeSummary(diff, out));
  parts.push(...findings(issues));
  return `${parts.join("\n").trimEnd()}\n`;
}

function changeSummary(diff: RenderedDiff, out: string): string[] {
  if (diff.files.length === 0) return [`${code(out)} is up to date: synth would change nothing.`, ""];
  const moved = diff.clusters.reduce(
    (sum, cluster) => sum + cluster.hosts.added.length + cluster.hosts.removed.length,
    0,
  );
  const all = [...diff.clusters.map((cluster) => cluster.objects), diff.wiring];
  const count = (status: keyof ObjectChanges) =>
    all.reduce((sum, objects) => sum + objects[status].length, 0);
  const files = (status: ChangeStatus) => diff.files.filter((file) => file.status === status).length;
  const lines = [
    `**clusters that change: ${diff.clusters.length}** · ${plural(moved, "host assignment")} ` +
      `added or removed · objects: ${count("added")} added, ${count("changed")} changed, ${count("removed")} removed · ` +
      `${code(out)}: ${files("added")} file(s) added, ${files("changed")} changed, ${files("removed")} removed`,
    "",
  ];
  if (diff.clusters.length > 0) {
    lines.push(
      "| cluster | status | hosts in | hosts out | objects + | ~ | − |",
      "|---|---|--:|--:|--:|--:|--:|",
    );
    for (const cluster of diff.clusters) {
      const { added, changed, removed } = cluster.objects;
      lines.push(
        `| ${code(cluster.cluster)} | ${cluster.status} | ${cluster.hosts.added.length} | ${cluster.hosts.removed.length} | ` +
          `${added.length} | ${changed.length} | ${removed.length} |`,
      );
    }
    lines.push("");
  }
  for (const cluster of diff.clusters) lines.push(...clusterSection(cluster));
  if (objectCount(diff.wiring) > 0) lines.push("#### GitOps wiring", "", ...objectLists(diff.wiring));
  return lines;
}

function clusterSection(cluster: ClusterDiff): string[] {
  const hosts = [
    ...cluster.hosts.added.map((host) => `joins: ${describeHost(host)}`),
    ...cluster.hosts.removed.map((host) => `leaves: ${describeHost(host)}`),
  ];
  return [
    `#### ${code(cluster.cluster)} (${cluster.status})`,
    "",
    ...(hosts.length === 0 ? [] : list("Hosts that change hands", hosts)),
    ...objectLists(cluster.objects),
    ...(hosts.length === 0 && objectCount(cluster.objects) === 0
      ? [`Files: ${cluster.files.map((file) => code(file.path)).join(", ")}`, ""]
      : []),
  ];
}

function objectLists(objects: ObjectChanges): string[] {
  return (["added", "changed", "removed"] as const).flatMap((status) =>
    objects[status].length === 0 ? [] : list(`Objects ${status}`, objects[status].map(describeObject)),
  );
}

function findings(issues: readonly Issue[]): string[] {
  if (issues.length === 0) return [];
  const errors = issues.filter((found) => found.severity === "error").length;
  const items = [...issues].sort(compareIssues).map((found) => {
    const where = found.source
      ? `${code(`${found.source.file}:${found.source.line}:${found.source.column}`)} `
      : "";
    const path = found.path === "" ? "" : `${code(found.path)}: `;
    return `${where}${found.severity} ${code(found.rule)} ${path}${escapeText(found.message)}`;
  });
  return list(`Findings: ${plural(errors, "error")}, ${plural(issues.length - errors, "warning")}`, items);
}

/** A titled bullet list: inline up to {@link FOLD_AFTER} items, else folded; capped at {@link MAX_LISTED}. */
function list(title: string, items: readonly string[]): string[] {
  const shown = items.slice(0, MAX_LISTED).map((item) => `- ${item}`);
  if (items.length > MAX_LISTED)
    shown.push(`- … and ${items.length - MAX_LISTED} more ('metalsynth diff' lists them all)`);
  if (items.length <= FOLD_AFTER) return [`${title}:`, "", ...shown, ""];
  // The blank lines around the list let GitHub render Markdown inside the HTML block.
  return [`<details><summary>${title} (${items.length})</summary>`, "", ...shown, "", "</details>", ""];
}

/** `worker \`worker-2=metal3/r02-node-08\``, `(standby)` for a SIP standby. */
function describeHost(host: HostAssignment): string {
  const who = host.node === undefined ? host.host : `${host.node}=${host.host}`;
  return `${host.role} ${code(who)}${host.standby ? " (standby)" : ""}`;
}

function describeObject(ref: ObjectRef): string {
  return `${ref.kind} ${code(`${ref.namespace === undefined ? "" : `${ref.namespace}/`}${ref.name}`)}`;
}

/**
 * A user value as an inline code span on one line: fenced with one more backtick than the longest
 * run it holds (CommonMark), and `|` escaped, which would otherwise end a table cell.
 */
export function code(text: string): string {
  const value = oneLine(text).replace(/\|/g, "\\|");
  const longest = Math.max(0, ...[...value.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = value.startsWith("`") || value.endsWith("`") ? " " : "";
  return `${fence}${pad}${value}${pad}${fence}`;
}

/** Prose from user values, on one line, with Markdown's and HTML's special characters escaped. */
function escapeText(text: string): string {
  return oneLine(text).replace(/[\\`*_[\]<>|#!~&]/g, "\\$&");
}

function objectCount(objects: ObjectChanges): number {
  return objects.added.length + objects.changed.length + objects.removed.length;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}
