import { isDeepStrictEqual } from "node:util";
import { clusterKey, type ClusterKey } from "../../synth/cluster-key.ts";
import { parseDocuments } from "../../synth/codec/read-documents.ts";
import { compact } from "../../synth/compact.ts";
import { compareText } from "../../synth/issue.ts";
import { LOCK_FILE } from "../../synth/plan/lock.ts";
import type { LockEntry } from "../../synth/model/lock.ts";
import { lockFromText } from "../../synth/rules/lock.ts";
import { isRecord } from "../../synth/inventory/raw.ts";

/** How a file, object or cluster differs between two rendered trees. */
export type ChangeStatus = "added" | "changed" | "removed";

/** A file of the tree that differs, by its path relative to `rendered/`. */
export interface FileChange {
  readonly path: string;
  readonly status: ChangeStatus;
}

/** A Kubernetes object found in a rendered file. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  /** Absent for cluster-scoped objects. */
  readonly namespace?: string;
  readonly name: string;
  /** The file it is in (the new tree's file for changed objects), relative to `rendered/`. */
  readonly file: string;
}

/** Objects that appear, change or disappear, each list sorted by kind, namespace and name. */
export interface ObjectChanges {
  readonly added: ObjectRef[];
  readonly changed: ObjectRef[];
  readonly removed: ObjectRef[];
}

/** One host allocation of the lock, as a cluster gains or loses it. */
export interface HostAssignment {
  /** `namespace/name` of the BareMetalHost. */
  readonly host: string;
  /** `master`/`worker` (BPA) or the SIP role. */
  readonly role: string;
  /** The BPA node label the host serves as. */
  readonly node?: string;
  /** SIP: the host is a standby. */
  readonly standby?: boolean;
}

/** What changes for one cluster: its host allocations (from the lock) and its objects. */
export interface ClusterDiff {
  /** `namespace/name`. */
  readonly cluster: string;
  /** `added`: the cluster is new; `removed`: it is gone from the site; `changed` otherwise. */
  readonly status: ChangeStatus;
  readonly hosts: { readonly added: HostAssignment[]; readonly removed: HostAssignment[] };
  readonly objects: ObjectChanges;
  /** The cluster directory's files that differ. */
  readonly files: FileChange[];
}

/** How a new rendered tree differs from the previous one (docs/contract.md §6.3). */
export interface RenderedDiff {
  /** Clusters with any change, sorted by key. */
  readonly clusters: ClusterDiff[];
  /** Objects outside the cluster directories: the Argo CD and Flux wiring. */
  readonly wiring: ObjectChanges;
  /** Every file that differs (cluster files, wiring, the lock), sorted by path. */
  readonly files: FileChange[];
}

/** Whether applying the new tree would change anything at all. */
export function hasChanges(diff: RenderedDiff): boolean {
  return diff.files.length > 0;
}

/**
 * Compares two rendered trees (relative path → content; an empty map for a tree that does not exist
 * yet). Host changes come from the lock files; object changes from the YAML documents, matched by
 * apiVersion, kind, namespace and name across the files of their cluster directory, so an object
 * that moves between files is not reported as changed.
 */
export function diffTrees(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): RenderedDiff {
  const files = fileChanges(before, after);
  // Everything grouped by cluster once, so the work grows with the tree, not with clusters × files.
  const oldTree = partition(before);
  const newTree = partition(after);
  const oldLock = groupBy(lockEntries(before.get(LOCK_FILE)), (entry) => entry.cluster);
  const newLock = groupBy(lockEntries(after.get(LOCK_FILE)), (entry) => entry.cluster);
  const changedFiles = groupBy<FileChange, string | undefined>(files, (change) => clusterOf(change.path));
  const keys = new Set([
    ...oldLock.keys(),
    ...newLock.keys(),
    ...oldTree.clusters.keys(),
    ...newTree.clusters.keys(),
  ]);

  const clusters: ClusterDiff[] = [];
  for (const cluster of [...keys].sort(compareText)) {
    // A host a SIPCluster is releasing no longer serves it: the release shows as its removal.
    const hostsIn = (lock: ReadonlyMap<string, readonly LockEntry[]>) =>
      (lock.get(cluster) ?? []).filter((entry) => entry.released !== true).map(assignment);
    const oldHosts = hostsIn(oldLock);
    const newHosts = hostsIn(newLock);
    const hosts = {
      added: newHosts
        .filter((host) => !oldHosts.some((old) => isDeepStrictEqual(old, host)))
        .sort(compareHosts),
      removed: oldHosts
        .filter((host) => !newHosts.some((next) => isDeepStrictEqual(next, host)))
        .sort(compareHosts),
    };
    const clusterFiles = changedFiles.get(cluster) ?? [];
    if (hosts.added.length + hosts.removed.length + clusterFiles.length === 0) continue;
    const oldFiles = oldTree.clusters.get(cluster);
    const newFiles = newTree.clusters.get(cluster);
    const existed = oldHosts.length > 0 || oldFiles !== undefined;
    const exists = newHosts.length > 0 || newFiles !== undefined;
    clusters.push({
      cluster,
      status: !existed ? "added" : !exists ? "removed" : "changed",
      hosts,
      objects: objectChanges(oldFiles ?? new Map(), newFiles ?? new Map()),
      files: clusterFiles,
    });
  }
  return { clusters, wiring: objectChanges(oldTree.wiring, newTree.wiring), files };
}

/** A tree's files per cluster directory, and the rest but the lock: the Argo CD and Flux wiring. */
function partition(tree: ReadonlyMap<string, string>): {
  clusters: Map<string, Map<string, string>>;
  wiring: Map<string, string>;
} {
  const clusters = new Map<string, Map<string, string>>();
  const wiring = new Map<string, string>();
  for (const [file, text] of tree) {
    const key = clusterOf(file);
    if (key !== undefined) {
      const files = clusters.get(key) ?? new Map<string, string>();
      clusters.set(key, files.set(file, text));
    } else if (file !== LOCK_FILE) wiring.set(file, text);
  }
  return { clusters, wiring };
}

function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** The cluster of a file in `clusters/<namespace>/<name>/`, else undefined. */
function clusterOf(file: string): ClusterKey | undefined {
  const [top, namespace, name, ...rest] = file.split("/");
  return top === "clusters" && namespace && name && rest.length > 0 ? clusterKey(namespace, name) : undefined;
}

function fileChanges(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): FileChange[] {
  const changes: FileChange[] = [];
  for (const file of new Set([...before.keys(), ...after.keys()])) {
    const old = before.get(file);
    const next = after.get(file);
    if (old === next) continue;
    changes.push({
      path: file,
      status: old === undefined ? "added" : next === undefined ? "removed" : "changed",
    });
  }
  return changes.sort((a, b) => compareText(a.path, b.path));
}

/**
 * The sound entries of a lock file's text. A damaged lock's findings are not repeated here: the site
 * reader already reports one in `rendered/` as `lock-invalid`, so this only affects a diff against
 * some other tree, where "every host the damaged lock loses is new" is the honest reading.
 */
function lockEntries(text: string | undefined): readonly LockEntry[] {
  if (text === undefined) return [];
  return lockFromText(LOCK_FILE, text).lock.entries;
}

function assignment(entry: LockEntry): HostAssignment {
  return compact({
    host: entry.host,
    role: entry.role,
    node: entry.node,
    standby: entry.standby || undefined,
  });
}

/** An object's content, keyed by identity. */
type Objects = Map<string, { ref: ObjectRef; value: unknown }>;

function objectChanges(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): ObjectChanges {
  const old = objectsOf(before);
  const next = objectsOf(after);
  const changes: ObjectChanges = { added: [], changed: [], removed: [] };
  for (const [key, { ref, value }] of next) {
    const previous = old.get(key);
    if (previous === undefined) changes.added.push(ref);
    else if (!isDeepStrictEqual(previous.value, value)) changes.changed.push(ref);
  }
  for (const [key, { ref }] of old) if (!next.has(key)) changes.removed.push(ref);
  for (const list of [changes.added, changes.changed, changes.removed]) list.sort(compareObjects);
  return changes;
}

/**
 * Every object in the files of `tree`. Kustomize's own `kustomization.yaml` is build configuration,
 * not an object applied to a cluster, so it is left out (its changes follow from files added or
 * removed). A file that is not valid YAML (hand-edited) counts as one opaque object named after the
 * file, and a document without apiVersion, kind and name as one named after its position, so a
 * change to either still shows up.
 */
function objectsOf(tree: ReadonlyMap<string, string>): Objects {
  const objects: Objects = new Map();
  const add = (ref: ObjectRef, value: unknown): void => {
    const identity = [ref.apiVersion, ref.kind, ref.namespace ?? "", ref.name].join("\u0000");
    let key = identity;
    // The same identity twice is a broken tree; keep both so neither change is hidden.
    for (let copy = 2; objects.has(key); copy++) key = `${identity}\u0000${copy}`;
    objects.set(key, { ref, value });
  };
  for (const [file, text] of tree) {
    const parsed = parseDocuments(file, text);
    if (parsed.issues.length > 0) {
      add({ apiVersion: "", kind: "File", name: file, file }, text);
      continue;
    }
    for (const document of parsed.documents) {
      const value = document.value;
      if (value === null || value === undefined) continue;
      if (isRecord(value) && String(value.apiVersion).startsWith("kustomize.config.k8s.io/")) continue;
      const identity = identityOf(value);
      add(
        identity
          ? { ...identity, file }
          : { apiVersion: "", kind: "Document", name: `${file}#${document.index}`, file },
        value,
      );
    }
  }
  return objects;
}

function identityOf(value: unknown): Omit<ObjectRef, "file"> | undefined {
  if (!isRecord(value) || !isRecord(value.metadata)) return undefined;
  const { apiVersion, kind } = value;
  const { name, namespace } = value.metadata;
  if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof name !== "string")
    return undefined;
  return compact({
    apiVersion,
    kind,
    namespace: typeof namespace === "string" ? namespace : undefined,
    name,
  });
}

/** Role, then node label, then host: masters before workers, each in label order. */
function compareHosts(a: HostAssignment, b: HostAssignment): number {
  return (
    compareText(a.role, b.role) || compareText(a.node ?? "", b.node ?? "") || compareText(a.host, b.host)
  );
}

function compareObjects(a: ObjectRef, b: ObjectRef): number {
  return (
    compareText(a.kind, b.kind) ||
    compareText(a.namespace ?? "", b.namespace ?? "") ||
    compareText(a.name, b.name) ||
    compareText(a.apiVersion, b.apiVersion) ||
    compareText(a.file, b.file)
  );
}
