/**
 * The lock at the door (docs/contract.md §2 `lock-invalid`, §3.4): `rendered/metalsynth.lock.yaml` is an input
 * like any other. A hand edit, a bad merge or a truncated write must stop the run with a finding,
 * never be re-planned from scratch (that reshuffles every cluster) or silently rewritten.
 */
import { checkedClusterKeyParts, clusterKeyParts, parseClusterKey } from "../cluster-key.ts";
import { parseDnsLabel, parseDnsSubdomain, parseLabelValue } from "../checked.ts";
import { parseDocumentsFully, readBlockDocuments, type ReadOptions } from "../codec/read-documents.ts";
import { MAX_DOCUMENT_TEXT_BYTES } from "../documents.ts";
import { formatPath, type FieldPath } from "../field-path.ts";
import { compareText, issue, type Issue, type SourcePosition } from "../issue.ts";
import { isRecord } from "../inventory/raw.ts";
import type { Lock, LockEntry } from "../model/lock.ts";
import type { Role } from "../model/bpa.ts";

/** What a damaged lock's findings advise: re-planning from nothing would reshuffle every cluster. */
const RESTORE =
  "restore the lock from Git rather than deleting or editing it, or every cluster may be re-planned";

/** An empty lock: the first run of a site. */
export const EMPTY_LOCK: Lock = { entries: [] };

/** Stable order of lock entries, so the lock file is byte-identical for identical plans. */
export function compareLockEntries(a: LockEntry, b: LockEntry): number {
  return (
    compareText(a.host, b.host) ||
    compareText(a.cluster, b.cluster) ||
    compareText(a.kind, b.kind) ||
    compareText(a.role, b.role) ||
    compareText(a.node ?? "", b.node ?? "")
  );
}

/** The lock file's apiVersion/kind, so a stray YAML file is never mistaken for a lock. */
export const LOCK_API_VERSION = "metalsynth.io/v1alpha1";
export const LOCK_KIND = "Lock";

const BPA_ROLES: readonly Role[] = ["master", "worker"];
const ENTRY_FIELDS: ReadonlySet<string> = new Set([
  "host",
  "cluster",
  "kind",
  "role",
  "node",
  "standby",
  "released",
  "snapshot",
]);
const SNAPSHOT = /^[0-9a-f]{8}$/;

/**
 * Reads a lock file's first document (`undefined`: the file holds none) at the door (docs/contract.md §2
 * `lock-invalid`). A lock that is empty, is not a lock, or whose entries are malformed or contradict
 * each other (one host in two clusters, one SIP host in two roles, an unknown role) gives findings
 * with the field path, placed by `position`. A damaged lock is a reason to stop, not to re-plan from
 * scratch, so every finding is an error; the lock returned holds only the entries that are sound
 * (none of a host recorded twice), so the rest of the site can still be judged.
 */
export function parseLock(
  value: unknown,
  position: (path: FieldPath) => SourcePosition | undefined = () => undefined,
): { lock: Lock; issues: Issue[] } {
  const issues: Issue[] = [];
  const invalid = (path: FieldPath, message: string) => {
    const source = position(path);
    issues.push(issue("lock-invalid", formatPath(path), message, source ? { source } : {}));
  };
  if (value === undefined || value === null) {
    invalid([], `empty lock file (no hosts list); ${RESTORE}`);
    return { lock: EMPTY_LOCK, issues };
  }
  if (!isRecord(value) || value.apiVersion !== LOCK_API_VERSION || value.kind !== LOCK_KIND) {
    invalid([], `damaged lock file: expected apiVersion ${LOCK_API_VERSION}, kind ${LOCK_KIND}; ${RESTORE}`);
    return { lock: EMPTY_LOCK, issues };
  }
  const hosts = value.hosts;
  if (!Array.isArray(hosts)) {
    invalid(
      ["hosts"],
      `${hosts === undefined ? "missing" : "not a list"}: a lock lists its hosts; ${RESTORE}`,
    );
    return { lock: EMPTY_LOCK, issues };
  }
  const items = hosts.map((item: unknown, index) => ({ item, path: ["hosts", index] }));
  return { lock: soundLock(items, invalid), issues };
}

/** One lock entry as read from outside, and the path of its findings. */
export interface LockItem {
  readonly item: unknown;
  readonly path: FieldPath;
}

/**
 * The lock made of `items` (each read as a lock entry at its path): the entries that are sound, in
 * lock order, after reporting through `invalid` every malformed entry and every host recorded for two
 * clusters or twice for one SIPCluster (none of whose entries is kept). Shared by the lock file and
 * the Allocation objects it is rendered into, so both give the same lock for the same entries.
 */
export function soundLock(
  items: Iterable<LockItem>,
  invalid: (path: FieldPath, message: string) => void,
): Lock {
  const entries: LockEntry[] = [];
  const firstOf = new Map<string, { entry: LockEntry; path: FieldPath }>();
  const contested = new Set<string>();
  for (const { item, path } of items) {
    const entry = lockEntry(item, path, invalid);
    if (entry === undefined) continue;
    entries.push(entry);
    const first = firstOf.get(entry.host);
    if (first === undefined) {
      firstOf.set(entry.host, { entry, path });
      continue;
    }
    const other = first.entry;
    const at = formatPath(first.path);
    if (other.cluster !== entry.cluster) {
      invalid(
        [...path, "cluster"],
        `${entry.host} is recorded for ${entry.cluster} and, at ${at}, for ${other.cluster}: a host belongs to one cluster; ${RESTORE}`,
      );
      contested.add(entry.host);
    } else if (other.kind === "sip" && entry.kind === "sip") {
      invalid(
        [...path, "role"],
        `${entry.host} is recorded twice for SIPCluster ${entry.cluster} (${other.role} at ${at}, ${entry.role}): a host serves one role; ${RESTORE}`,
      );
      contested.add(entry.host);
    }
  }
  const sound = entries.filter((entry) => !contested.has(entry.host));
  return { entries: sound.sort(compareLockEntries) };
}

/** The lock is read without Kubernetes' object limits (decision 0044). */
const UNLIMITED: ReadOptions = { objectLimits: false };

/**
 * A lock file's text (`shown` names it in findings): the lock, and `lock-invalid` findings for a
 * lock that is empty, damaged or contradictory (then the lock holds only its sound entries). It is how
 * every reader takes a lock: the site reader, the lock a map compares with, the locks `diff` compares.
 *
 * The lock is no Kubernetes object, so no object limit applies (decision 0044): the lock metalsynth
 * writes is in the fast reader's block style and is read whatever its size, in time linear in it. A
 * lock outside that style was edited or reformatted; the full parser reads it (aliases bounded) up to
 * {@link MAX_DOCUMENT_TEXT_BYTES}, and a larger one is refused rather than parsed into a tree many
 * times its size.
 */
export function lockFromText(shown: string, text: string): { lock: Lock; issues: Issue[] } {
  const start = { file: shown, line: 1, column: 1 };
  const parsed =
    readBlockDocuments(shown, text, UNLIMITED) ??
    (Buffer.byteLength(text) > MAX_DOCUMENT_TEXT_BYTES
      ? undefined
      : parseDocumentsFully(shown, text, UNLIMITED));
  if (parsed === undefined) {
    const size = (Buffer.byteLength(text) / 2 ** 20).toFixed(1);
    const problem = issue(
      "lock-invalid",
      "",
      `the lock is ${size} MiB and not in the block style metalsynth writes, too large for the full YAML parser (${MAX_DOCUMENT_TEXT_BYTES / 2 ** 20} MiB); ${RESTORE}`,
      { source: start },
    );
    return { lock: EMPTY_LOCK, issues: [problem] };
  }
  const [document, ...more] = parsed.documents;
  const read = parseLock(document?.value, (at) => document?.position(at) ?? start);
  const extra = more.map((other) =>
    issue("lock-invalid", "", "a second document: a lock file holds one Lock", {
      source: other.position([]),
    }),
  );
  return { lock: read.lock, issues: [...parsed.issues, ...read.issues, ...extra] };
}

/** One `hosts[]` item, or `undefined` after reporting what is wrong with it. */
function lockEntry(
  item: unknown,
  path: FieldPath,
  invalid: (path: FieldPath, message: string) => void,
): LockEntry | undefined {
  if (!isRecord(item)) {
    invalid(path, `not a map: each entry records host, cluster, kind and role; ${RESTORE}`);
    return undefined;
  }
  let sound = true;
  const wrong = (field: string, message: string) => {
    invalid([...path, field], `${message}; ${RESTORE}`);
    sound = false;
  };
  for (const field of Object.keys(item))
    if (!ENTRY_FIELDS.has(field))
      wrong(field, `unknown field (a lock entry has ${[...ENTRY_FIELDS].join(", ")})`);
  const { host, cluster, kind, role, node, standby, released, snapshot } = item;
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const hostId = text(host);
  if (hostId === undefined || !isObjectId(hostId))
    wrong("host", `${shown(host)} is not a BareMetalHost's namespace/name`);
  const clusterText = text(cluster);
  const key = clusterText === undefined ? undefined : parseClusterKey(clusterText);
  if (key === undefined || checkedClusterKeyParts(key) === undefined)
    wrong("cluster", `${shown(cluster)} is not a cluster's namespace/name (two DNS-1123 labels)`);
  for (const [field, flag] of [
    ["standby", standby],
    ["released", released],
  ] as const)
    if (flag !== undefined && typeof flag !== "boolean") wrong(field, `${shown(flag)} is not true or false`);
  if (kind === "bpa") {
    const bpaRole = BPA_ROLES.find((known) => known === role);
    if (bpaRole === undefined) wrong("role", `${shown(role)} is not a BPA role (master or worker)`);
    const label = text(node);
    if (label === undefined || parseDnsLabel(label) === undefined)
      wrong("node", `${shown(node)} is not a node label (a DNS-1123 label)`);
    for (const [field, present] of [
      ["standby", standby],
      ["released", released],
      ["snapshot", snapshot],
    ] as const)
      if (present !== undefined) wrong(field, "only SIP entries have it");
    if (!sound || hostId === undefined || key === undefined || bpaRole === undefined || label === undefined)
      return undefined;
    return { host: hostId, cluster: key, kind, role: bpaRole, node: label };
  }
  if (kind === "sip") {
    const sipRole = text(role);
    if (sipRole === undefined || sipRole === "" || parseLabelValue(sipRole) === undefined)
      wrong("role", `${shown(role)} is not a SIP role (it would be the node-type label's value)`);
    if (node !== undefined) wrong("node", "only BPA entries have it");
    const stamp = text(snapshot);
    if (snapshot !== undefined && (stamp === undefined || !SNAPSHOT.test(stamp)))
      wrong("snapshot", `${shown(snapshot)} is not 8 hex digits`);
    if (!sound || hostId === undefined || key === undefined || sipRole === undefined) return undefined;
    return {
      host: hostId,
      cluster: key,
      kind,
      role: sipRole,
      ...(standby === true ? { standby: true } : {}),
      ...(released === true ? { released: true } : {}),
      ...(stamp === undefined ? {} : { snapshot: stamp }),
    };
  }
  wrong("kind", `${shown(kind)} is not bpa or sip`);
  return undefined;
}

/** Whether `text` is `namespace/name` with a valid namespace and object name. */
function isObjectId(text: string): boolean {
  const key = parseClusterKey(text);
  if (key === undefined) return false;
  const { namespace, name } = clusterKeyParts(key);
  return parseDnsLabel(namespace) !== undefined && parseDnsSubdomain(name) !== undefined;
}

/** A value as a finding quotes it. */
function shown(value: unknown): string {
  if (value === undefined) return "missing";
  return JSON.stringify(value) ?? String(value);
}
