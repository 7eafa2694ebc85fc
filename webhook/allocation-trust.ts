/**
 * Which Allocations the webhook takes for Git's truth (decision 0056): those in the namespaces the
 * site declares (`--allocation-namespace`; none declared: every namespace), whose `spec` was written
 * only by the field managers the site declares (`--allocation-manager`; by default the GitOps
 * agents'). The namespaces are a boundary RBAC enforces; the managers are not (a client names its
 * own field manager): they keep out the hand edit and the other tool, not someone who means harm
 * and may write Allocations there.
 */
import { field, isRecord, stringField } from "../synth/inventory/raw.ts";
import { DEFAULT_ALLOCATION_MANAGERS } from "../synth/schema/allocation.ts";

export { DEFAULT_ALLOCATION_MANAGERS };

/** What the site declares trustworthy. */
export interface AllocationTrust {
  /** Namespaces whose Allocations count; empty: every namespace. */
  readonly namespaces: readonly string[];
  /** Field managers that may write an Allocation's spec. */
  readonly managers: readonly string[];
}

/** The default: every namespace, the GitOps agents' managers. */
export const DEFAULT_ALLOCATION_TRUST: AllocationTrust = {
  namespaces: [],
  managers: DEFAULT_ALLOCATION_MANAGERS,
};

/**
 * Why `object` (an Allocation as the API server holds it) is not to be trusted, or `undefined`. An
 * object without managed fields (they were cleared) is judged by its namespace alone.
 */
export function distrust(object: unknown, trust: AllocationTrust): string | undefined {
  const namespace = stringField(field(object, "metadata"), "namespace") ?? "";
  if (trust.namespaces.length > 0 && !trust.namespaces.includes(namespace))
    return `it is in namespace ${JSON.stringify(namespace)}, and the site's Allocations are in ${trust.namespaces.join(", ")} only`;
  const strangers = specManagers(object).filter((manager) => !trust.managers.includes(manager));
  if (strangers.length > 0)
    return `its spec was written by ${strangers.map((manager) => JSON.stringify(manager)).join(", ")}, not by the managers that apply Git (${trust.managers.join(", ")})`;
  return undefined;
}

/** The field managers that own any field of `spec`, as `metadata.managedFields` records them. */
export function specManagers(object: unknown): string[] {
  const managed = field(field(object, "metadata"), "managedFields");
  if (!Array.isArray(managed)) return [];
  const managers = new Set<string>();
  for (const entry of managed) {
    const manager = stringField(entry, "manager");
    const fields = field(entry, "fieldsV1");
    if (manager !== undefined && isRecord(fields) && "f:spec" in fields) managers.add(manager);
  }
  return [...managers].sort();
}
