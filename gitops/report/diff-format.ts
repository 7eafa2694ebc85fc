import type {
  ClusterDiff,
  FileChange,
  HostAssignment,
  ObjectChanges,
  ObjectRef,
  RenderedDiff,
} from "./diff.ts";
import { unifiedDiff } from "./diff-lines.ts";

/**
 * `metalsynth diff`'s text report: per cluster its host and object changes, then the wiring, then a
 * count of files. `out` names the tree in the last line.
 */
export function diffText(diff: RenderedDiff, out: string): string {
  let text = clusterLines(diff);
  const count = (status: FileChange["status"]) => diff.files.filter((file) => file.status === status).length;
  text +=
    diff.files.length === 0
      ? `${out}: up to date\n`
      : `${out}: ${count("added")} file(s) added, ${count("changed")} changed, ${count("removed")} removed\n`;
  return text;
}

/**
 * Per cluster its status, host and object changes, then the GitOps wiring's objects: the body of
 * `metalsynth diff`'s report, which `inventory pull` prints for the clusters a new inventory affects.
 */
export function clusterLines(diff: RenderedDiff): string {
  let text = "";
  for (const cluster of diff.clusters) {
    text += `${cluster.cluster} (${cluster.status})\n`;
    for (const host of cluster.hosts.added) text += `  + host    ${describeHost(host)}\n`;
    for (const host of cluster.hosts.removed) text += `  - host    ${describeHost(host)}\n`;
    text += objectLines(cluster.objects);
  }
  const wiring = objectLines(diff.wiring);
  return wiring === "" ? text : `${text}gitops wiring\n${wiring}`;
}

function objectLines(objects: ObjectChanges): string {
  const line = (mark: string, ref: ObjectRef) => `  ${mark} object  ${describeObject(ref)}\n`;
  return [
    ...objects.added.map((ref) => line("+", ref)),
    ...objects.changed.map((ref) => line("~", ref)),
    ...objects.removed.map((ref) => line("-", ref)),
  ].join("");
}

/**
 * The unified diff of one changed file, with paths relative to the tree (`a/clusters/…`), so
 * `git apply --directory=rendered` or `patch -p1 -d rendered` applies it.
 */
export function filePatch(
  change: FileChange,
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string {
  return unifiedDiff(before.get(change.path) ?? "", after.get(change.path) ?? "", {
    oldLabel: change.status === "added" ? "/dev/null" : `a/${change.path}`,
    newLabel: change.status === "removed" ? "/dev/null" : `b/${change.path}`,
  });
}

/** `worker worker-2=metal3/r02-node-08` (BPA) or `Worker metal3/r02-node-02 (standby)` (SIP). */
function describeHost(host: HostAssignment): string {
  const who = host.node === undefined ? host.host : `${host.node}=${host.host}`;
  return `${host.role} ${who}${host.standby ? " (standby)" : ""}`;
}

/** `Job edge-a/kud-cluster-east-1a2b3c4d`. */
function describeObject(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace === undefined ? "" : `${ref.namespace}/`}${ref.name}`;
}

/** A git commit message: the subject line and the body (empty when there is nothing to add). */
export interface CommitMessage {
  readonly subject: string;
  readonly body: string;
}

/** Git's advice for a subject line; longer ones are cut off in `git log --oneline` and most UIs. */
const SUBJECT_WIDTH = 72;

/**
 * The message of a render commit (docs/contract.md §6.2): the body has one line per changed cluster,
 * `edge-a/cluster-east: +worker worker-2=metal3/r02-node-08; -worker …; Job kud-cluster-east
 * replaced`, and one for the GitOps wiring. The subject is `subject` when given, else it names what
 * changed: `metalsynth: edge-a/cluster-east, edge-a/cluster-west` or, when that is too long,
 * `metalsynth: 12 clusters`.
 */
export function commitMessage(diff: RenderedDiff, subject?: string): CommitMessage {
  const lines = diff.clusters.map(clusterLine);
  const wiring = objectSummary(diff.wiring);
  if (wiring.length > 0) lines.push(`gitops wiring: ${wiring.join("; ")}`);
  // Only files outside every cluster changed, and no object in them (the lock's comment, say).
  if (lines.length === 0 && diff.files.length > 0)
    lines.push(`${diff.files.map((file) => file.path).join(", ")} changed`);

  const names = [
    ...diff.clusters.map((cluster) => cluster.cluster),
    ...(wiring.length > 0 ? ["gitops wiring"] : []),
  ];
  const listed = `metalsynth: ${names.join(", ")}`;
  const generated =
    names.length === 0
      ? "metalsynth: rendered tree"
      : listed.length <= SUBJECT_WIDTH
        ? listed
        : `metalsynth: ${plural(diff.clusters.length, "cluster")}${wiring.length > 0 ? " and gitops wiring" : ""}`;
  return { subject: subject ?? generated, body: lines.join("\n") };
}

/** `edge-a/cluster-east: +worker worker-3=metal3/r02-node-08; Job kud-cluster-east replaced`. */
function clusterLine(cluster: ClusterDiff): string {
  const count = objectCount(cluster.objects);
  const objects = count === 0 ? "" : `; ${plural(count, "object")}`;
  let parts =
    cluster.status === "added"
      ? [`new cluster (${roleCounts(cluster.hosts.added)}${objects})`]
      : cluster.status === "removed"
        ? [`removed (${plural(cluster.hosts.removed.length, "host")} released${objects})`]
        : [
            ...cluster.hosts.added.map((host) => `+${describeHost(host)}`),
            ...cluster.hosts.removed.map((host) => `-${describeHost(host)}`),
            ...objectSummary(cluster.objects),
          ];
  // A change no host or object explains (kustomization.yaml, a hand-edited comment) is still named.
  if (parts.length === 0)
    parts = [`${cluster.files.map((file) => file.path.split("/").pop()).join(", ")} changed`];
  return `${cluster.cluster}: ${parts.join("; ")}`;
}

/** How many added, changed or removed objects a summary line names before it counts them instead. */
const MAX_NAMED = 3;

/**
 * Object changes in a few words each. A removed and an added object of the same kind, namespace and
 * file whose names differ only after the last dash are one object replaced under a new name: the
 * installer Jobs are named by a hash of what they run (Jobs are immutable), so a changed Job always
 * shows up that way, and is named without the hash (`Job kud-cluster-east replaced`). Replacements are always named (they are
 * what starts a new installer run); past {@link MAX_NAMED} other changes, those are only counted.
 */
function objectSummary(objects: ObjectChanges): string[] {
  const removed = [...objects.removed];
  const replaced: string[] = [];
  const added: ObjectRef[] = [];
  for (const ref of objects.added) {
    const stem = nameStem(ref.name);
    const index = removed.findIndex(
      (old) =>
        stem !== undefined &&
        nameStem(old.name) === stem &&
        old.apiVersion === ref.apiVersion &&
        old.kind === ref.kind &&
        old.namespace === ref.namespace &&
        old.file === ref.file,
    );
    if (index < 0) {
      added.push(ref);
      continue;
    }
    removed.splice(index, 1);
    replaced.push(`${ref.kind} ${stem} replaced`);
  }
  const others = [
    ...added.map((ref) => `+${ref.kind} ${ref.name}`),
    ...objects.changed.map((ref) => `${ref.kind} ${ref.name} changed`),
    ...removed.map((ref) => `-${ref.kind} ${ref.name}`),
  ];
  if (others.length <= MAX_NAMED) return [...replaced, ...others];
  const counts = [
    [added.length, "added"],
    [objects.changed.length, "changed"],
    [removed.length, "removed"],
  ] as const;
  const counted = counts.flatMap(([count, what]) => (count > 0 ? [`${count} ${what}`] : []));
  return [...replaced, `objects: ${counted.join(", ")}`];
}

/** A name without its last dash-separated part (`kud-east` of `kud-east-1a2b3c4d`), if it has one. */
function nameStem(name: string): string | undefined {
  const dash = name.lastIndexOf("-");
  return dash > 0 ? name.slice(0, dash) : undefined;
}

function objectCount(objects: ObjectChanges): number {
  return objects.added.length + objects.changed.length + objects.removed.length;
}

/** `3 master, 2 worker hosts` from a list of assignments, roles in order of appearance. */
function roleCounts(hosts: readonly HostAssignment[]): string {
  if (hosts.length === 0) return "no hosts";
  const counts = new Map<string, number>();
  for (const host of hosts) counts.set(host.role, (counts.get(host.role) ?? 0) + 1);
  return `${[...counts].map(([role, count]) => `${count} ${role}`).join(", ")} ${hosts.length === 1 ? "host" : "hosts"}`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}
