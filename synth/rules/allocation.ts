/**
 * Allocations at the door (docs/contract.md §2 `lock-invalid`, decision 0039): the Allocation objects the webhook
 * `--from-cluster` lists are Git's lock in the cluster, read back with the checks of the lock file.
 */
import { clusterKey } from "../cluster-key.ts";
import { parseDnsLabel } from "../checked.ts";
import { formatPath, type FieldPath } from "../field-path.ts";
import { issue, type Issue } from "../issue.ts";
import { isRecord } from "../inventory/raw.ts";
import { ALLOCATION_API_VERSION, ALLOCATION_KIND } from "../schema/allocation.ts";
import type { Lock } from "../model/lock.ts";
import { soundLock, type LockItem } from "./lock.ts";

/** What a damaged Allocation's findings advise: it is a copy of Git's lock. */
const RESYNC = "Allocations are rendered from Git's lock: sync the cluster's directory from Git again";

/**
 * The lock that a set of Allocation objects (as the API server lists them) records: exactly the
 * `Lock` `parseLock` gives for the lock file they were rendered from. Each is checked as the lock
 * file is (`lock-invalid`, the entry checks of `synth/rules/lock.ts`), with a path that names the
 * Allocation (`Allocation/<namespace>/<name>.spec.hosts[2].role`); what is unsound is left out, as
 * `parseLock` leaves it out, so the rest can still be judged. Metadata the server sets is ignored.
 */
export function lockFromAllocations(objects: Iterable<unknown>): { lock: Lock; issues: Issue[] } {
  const issues: Issue[] = [];
  const items: LockItem[] = [];
  const seen = new Set<string>();
  for (const value of objects) {
    const metadata = isRecord(value) ? value.metadata : undefined;
    const namespace = isRecord(metadata) ? metadata.namespace : undefined;
    const name = isRecord(metadata) ? metadata.name : undefined;
    const id = `${ALLOCATION_KIND}/${String(namespace)}/${String(name)}`;
    const invalid = (path: FieldPath, message: string) =>
      issues.push(issue("lock-invalid", formatPath([id, ...path]), message, { object: id }));
    if (!isRecord(value) || value.apiVersion !== ALLOCATION_API_VERSION || value.kind !== ALLOCATION_KIND) {
      invalid([], `not an ${ALLOCATION_API_VERSION} ${ALLOCATION_KIND}; ${RESYNC}`);
      continue;
    }
    if (
      typeof namespace !== "string" ||
      typeof name !== "string" ||
      parseDnsLabel(namespace) === undefined ||
      parseDnsLabel(name) === undefined
    ) {
      invalid(["metadata"], `namespace and name must be a cluster's (two DNS-1123 labels); ${RESYNC}`);
      continue;
    }
    if (seen.has(id)) {
      invalid(["metadata", "name"], `listed twice: a cluster has one Allocation; ${RESYNC}`);
      continue;
    }
    seen.add(id);
    const spec = value.spec;
    if (!isRecord(spec)) {
      invalid(["spec"], `${spec === undefined ? "missing" : "not a map"}; ${RESYNC}`);
      continue;
    }
    for (const field of Object.keys(spec))
      if (field !== "kind" && field !== "hosts")
        invalid(["spec", field], `unknown field (an Allocation's spec has kind and hosts); ${RESYNC}`);
    const { kind, hosts } = spec;
    if (kind !== "bpa" && kind !== "sip")
      invalid(["spec", "kind"], `${JSON.stringify(kind) ?? "missing"} is not bpa or sip; ${RESYNC}`);
    if (!Array.isArray(hosts)) {
      invalid(["spec", "hosts"], `${hosts === undefined ? "missing" : "not a list"}; ${RESYNC}`);
      continue;
    }
    if (kind !== "bpa" && kind !== "sip") continue;
    const cluster = clusterKey(namespace, name);
    hosts.forEach((item: unknown, index) => {
      const path: FieldPath = ["spec", "hosts", index];
      if (isRecord(item))
        for (const field of ["cluster", "kind"])
          if (field in item) {
            invalid([...path, field], `unknown field (the Allocation names the cluster and kind); ${RESYNC}`);
            return;
          }
      items.push({ item: isRecord(item) ? { ...item, cluster, kind } : item, path: [id, ...path] });
    });
  }
  const lock = soundLock(items, (path, message) =>
    issues.push(issue("lock-invalid", formatPath(path), message, { object: String(path[0]) })),
  );
  return { lock, issues };
}
