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
/** Items a folded list shows at most; past it the rest are counted. */
const MAX_LISTED = 50;

/**
 * The summary's length at most, in UTF-16 code units (never fewer than its characters), whatever the
 * site: under a pull-request comment's 65,536 characters with room for a caller's own lines, and far
 * under the job summary's 1 MiB, past which GitHub drops the whole summary (decision 0055).
 */
export const MAX_SUMMARY = 60_000;
/** Kept for the line that counts the clusters without a section. */
const FOLD_ROOM = 1_000;
/** The most the findings take beside a diff; what they leave goes to the clusters. */
const FINDINGS_ROOM = 8_000;
/** The most the GitOps wiring's three lists take; what they leave goes to the clusters. */
const WIRING_ROOM = 12_000;
/** The most one list of a cluster's section takes, so one cluster with many objects leaves room for others. */
const LIST_ROOM = 4_000;
/** The share of the clusters' room the table may take; the sections take the rest. */
const TABLE_SHARE = 1 / 3;
/**
 * Where a user value in a code span and a message are cut: a value metalsynth renders is at most a
 * 63-character namespace, `/` and a 253-character name, so only a file path or a message reaches it.
 */
const MAX_CODE = 320;
const MAX_PROSE = 1_000;

/**
 * `metalsynth diff -o markdown`: a pull-request summary of what synth would change in `out` (for
 * `$GITHUB_STEP_SUMMARY` or a comment). A count line, a table of the clusters that change, then per
 * cluster the hosts that change hands and the objects added, changed and removed, long lists folded
 * in `<details>`; the GitOps wiring; the findings last, errors first. Self-contained: no links, every
 * user value in a code span. At most {@link MAX_SUMMARY} long: what does not fit is counted instead,
 * the clusters whose hosts change before the others. `diff` undefined means the site has errors and
 * nothing was compared.
 */
export function diffMarkdown(diff: RenderedDiff | undefined, issues: readonly Issue[], out: string): string {
  const parts = ["### metalsynth diff", ""];
  if (diff === undefined) {
    const errors = issues.filter((found) => found.severity === "error").length;
    parts.push(
      `**The site has ${plural(errors, "error")}**: nothing was rendered, so nothing is compared.`,
      "",
    );
    parts.push(...findings(issues, MAX_SUMMARY - size(parts) - FOLD_ROOM));
  } else {
    const found = findings(issues, FINDINGS_ROOM);
    parts.push(...changeSummary(diff, out, MAX_SUMMARY - size(parts) - size(found) - FOLD_ROOM), ...found);
  }
  return `${parts.join("\n").trimEnd()}\n`;
}

function changeSummary(diff: RenderedDiff, out: string, room: number): string[] {
  if (diff.files.length === 0) return [`${code(out)} is up to date: synth would change nothing.`, ""];
  const all = [...diff.clusters.map((cluster) => cluster.objects), diff.wiring];
  const count = (status: keyof ObjectChanges) =>
    all.reduce((sum, objects) => sum + objects[status].length, 0);
  const files = (status: ChangeStatus) => diff.files.filter((file) => file.status === status).length;
  const lines = [
    `**clusters that change: ${diff.clusters.length}** · ${plural(hostCount(diff.clusters), "host assignment")} ` +
      `added or removed · objects: ${count("added")} added, ${count("changed")} changed, ${count("removed")} removed · ` +
      `${code(out)}: ${files("added")} file(s) added, ${files("changed")} changed, ${files("removed")} removed`,
    "",
  ];
  const wiring =
    objectCount(diff.wiring) > 0
      ? ["#### GitOps wiring", "", ...objectLists(diff.wiring, WIRING_ROOM / 3)]
      : [];
  const clusters = clusterParts(byImportance(diff.clusters), room - size(lines) - size(wiring));
  return [...lines, ...clusters, ...wiring];
}

/** Clusters whose hosts change first, then the rest, each group by key (as the diff sorts them). */
function byImportance(clusters: readonly ClusterDiff[]): ClusterDiff[] {
  const moves = (cluster: ClusterDiff) => cluster.hosts.added.length + cluster.hosts.removed.length > 0;
  return [...clusters.filter(moves), ...clusters.filter((cluster) => !moves(cluster))];
}

/**
 * The cluster table and the clusters' sections in `room`: the table takes rows in order while they
 * fit its share, the sections follow for the clusters of the table while whole sections fit, and a
 * line after each counts what it leaves out.
 */
function clusterParts(clusters: readonly ClusterDiff[], room: number): string[] {
  if (clusters.length === 0) return [];
  const table = [
    "| cluster | status | hosts in | hosts out | objects + | ~ | − |",
    "|---|---|--:|--:|--:|--:|--:|",
  ];
  let used = size(table);
  for (const cluster of clusters) {
    const { added, changed, removed } = cluster.objects;
    const row =
      `| ${code(cluster.cluster)} | ${cluster.status} | ${cluster.hosts.added.length} | ${cluster.hosts.removed.length} | ` +
      `${added.length} | ${changed.length} | ${removed.length} |`;
    if (used + row.length + 1 > room * TABLE_SHARE) break;
    table.push(row);
    used += row.length + 1;
  }
  const rows = table.length - 2;
  const tableFold = ["", ...folded(clusters.slice(rows), "not in this table")];
  used += size(tableFold);
  const sections: string[] = [];
  let shown = 0;
  for (const cluster of clusters.slice(0, rows)) {
    const section = clusterSection(cluster);
    if (used + size(section) > room) break;
    sections.push(...section);
    used += size(section);
    shown++;
  }
  return [...table, ...tableFold, ...sections, ...folded(clusters.slice(shown), "without a section here")];
}

/** A line counting the clusters left out, with the host assignments and objects they change. */
function folded(clusters: readonly ClusterDiff[], where: string): string[] {
  if (clusters.length === 0) return [];
  const objects = (status: keyof ObjectChanges) =>
    clusters.reduce((sum, cluster) => sum + cluster.objects[status].length, 0);
  const added = clusters.reduce((sum, cluster) => sum + cluster.hosts.added.length, 0);
  const removed = clusters.reduce((sum, cluster) => sum + cluster.hosts.removed.length, 0);
  return [
    `… and ${plural(clusters.length, "more cluster")} ${where}: ${plural(added, "host assignment")} added, ` +
      `${removed} removed; objects: ${objects("added")} added, ${objects("changed")} changed, ` +
      `${objects("removed")} removed ('metalsynth diff' lists them all)`,
    "",
  ];
}

function clusterSection(cluster: ClusterDiff): string[] {
  const hosts = [
    ...cluster.hosts.added.map((host) => `joins: ${describeHost(host)}`),
    ...cluster.hosts.removed.map((host) => `leaves: ${describeHost(host)}`),
  ];
  return [
    `#### ${code(cluster.cluster)} (${cluster.status})`,
    "",
    ...(hosts.length === 0 ? [] : list("Hosts that change hands", hosts, LIST_ROOM)),
    ...objectLists(cluster.objects, LIST_ROOM),
    ...(hosts.length === 0 && objectCount(cluster.objects) === 0
      ? [`Files: ${cluster.files.map((file) => code(file.path)).join(", ")}`, ""]
      : []),
  ];
}

/** The objects added, changed and removed, each list in at most `room`. */
function objectLists(objects: ObjectChanges, room: number): string[] {
  return (["added", "changed", "removed"] as const).flatMap((status) =>
    objects[status].length === 0 ? [] : list(`Objects ${status}`, objects[status].map(describeObject), room),
  );
}

/** The findings, errors first, in at most `room`. */
function findings(issues: readonly Issue[], room: number): string[] {
  if (issues.length === 0) return [];
  const sorted = [...issues].sort(compareIssues);
  const errors = sorted.filter((found) => found.severity === "error");
  const items = [...errors, ...sorted.filter((found) => found.severity !== "error")].map((found) => {
    const where = found.source
      ? `${code(`${found.source.file}:${found.source.line}:${found.source.column}`)} `
      : "";
    const path = found.path === "" ? "" : `${code(found.path)}: `;
    return `${where}${found.severity} ${code(found.rule)} ${path}${escapeText(found.message)}`;
  });
  const warnings = issues.length - errors.length;
  const more = (shown: number) => {
    const left = Math.max(0, errors.length - shown);
    return `${plural(left, "error")}, ${plural(issues.length - shown - left, "warning")}; 'metalsynth validate' lists them all`;
  };
  return list(
    `Findings: ${plural(errors.length, "error")}, ${plural(warnings, "warning")}`,
    items,
    room,
    more,
  );
}

/**
 * A titled bullet list: inline up to {@link FOLD_AFTER} items, else folded; at most
 * {@link MAX_LISTED} items and `room` characters (an item that does not fit is counted too), the
 * rest counted by `more`, given how many are shown.
 */
function list(
  title: string,
  items: readonly string[],
  room: number,
  more: (shown: number) => string = () => "'metalsynth diff' lists them all",
): string[] {
  // The blank lines around the list let GitHub render Markdown inside the HTML block.
  const [open, close] =
    items.length > FOLD_AFTER
      ? [
          [`<details><summary>${title} (${items.length})</summary>`, ""],
          ["", "</details>", ""],
        ]
      : [[`${title}:`, ""], [""]];
  // Room for the line that counts the rest: two counts and the words around them.
  let used = size(open) + size(close) + 120;
  const shown: string[] = [];
  for (const item of items.slice(0, MAX_LISTED)) {
    const line = `- ${item}`;
    if (used + line.length + 1 > room) break;
    shown.push(line);
    used += line.length + 1;
  }
  const rest = items.length - shown.length;
  if (rest > 0) shown.push(`- … and ${rest} more (${more(shown.length)})`);
  return [...open, ...shown, ...close];
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
  const value = clip(oneLine(text), MAX_CODE).replace(/\|/g, "\\|");
  const longest = Math.max(0, ...[...value.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = value.startsWith("`") || value.endsWith("`") ? " " : "";
  return `${fence}${pad}${value}${pad}${fence}`;
}

/** Prose from user values, on one line, with Markdown's and HTML's special characters escaped. */
function escapeText(text: string): string {
  return clip(oneLine(text), MAX_PROSE).replace(/[\\`*_[\]<>|#!~&]/g, "\\$&");
}

/** `text` cut to `length` code units and `…`, never between the two halves of a surrogate pair. */
function clip(text: string, length: number): string {
  if (text.length <= length) return text;
  const end = /[\ud800-\udbff]/.test(text[length - 1] ?? "") ? length - 1 : length;
  return `${text.slice(0, end)}…`;
}

/** The length of `lines` joined by line breaks, with one after the last. */
function size(lines: readonly string[]): number {
  return lines.reduce((sum, line) => sum + line.length + 1, 0);
}

function hostCount(clusters: readonly ClusterDiff[]): number {
  return clusters.reduce(
    (sum, cluster) => sum + cluster.hosts.added.length + cluster.hosts.removed.length,
    0,
  );
}

function objectCount(objects: ObjectChanges): number {
  return objects.added.length + objects.changed.length + objects.removed.length;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}
