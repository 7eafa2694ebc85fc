/**
 * The cluster's hosts, joined one BareMetalHost at a time from the objects the informers hold: the
 * BMH, the HardwareData of the same namespace and name, and the networkData Secret the BMH names
 * (`spec.networkData`, in the BMH's namespace by default), each host read with synth's loader. Pure:
 * the objects come in through {@link HostObjects}, so the join is tested with plain maps and a
 * change recomputes only the hosts it touches.
 */
import { sameHost, type Host, type SetAsideHost } from "../synth/inventory/host.ts";
import { Inventory } from "../synth/inventory/inventory.ts";
import { buildInventory, type InventoryObject } from "../synth/inventory/load.ts";
import { field, isRecord, stringField } from "../synth/inventory/raw.ts";
import type { Issue, SourcePosition } from "../synth/issue.ts";

/** Where the join finds a host's objects, each with its `kind` and `apiVersion`; undefined when absent. */
export interface HostObjects {
  bareMetalHost(namespace: string, name: string): unknown;
  hardwareData(namespace: string, name: string): unknown;
  /** Undefined also for a Secret in a namespace whose Secrets are not read. */
  networkDataSecret(namespace: string, name: string): unknown;
}

/** What joining one host again gave. */
export interface Rejoined {
  /** Whether the host, or why it is set aside, differs from before (a status refresh changes neither). */
  readonly changed: boolean;
  /** The loader's findings about the host's objects. */
  readonly issues: readonly Issue[];
}

/** The hosts joined so far, by BMH id (`namespace/name`). */
export class HostJoin {
  readonly #objects: HostObjects;
  /** The source position of every object, for findings: the objects have no file. */
  readonly #source: SourcePosition;
  readonly #hosts = new Map<string, Host>();
  /** BMHs the loader set aside (decision 0031), so a CR naming one hears why. */
  readonly #setAside = new Map<string, SetAsideHost>();
  /** `namespace/name` of a networkData Secret → ids of the BMHs that name it. */
  readonly #secretUsers = new Map<string, Set<string>>();
  /** BMH id → the Secret it names, to keep {@link #secretUsers} exact when that changes. */
  readonly #secretOf = new Map<string, string>();

  constructor(objects: HostObjects, source: SourcePosition) {
    this.#objects = objects;
    this.#source = source;
  }

  /** How many hosts are known (set-aside ones not counted). */
  get size(): number {
    return this.#hosts.size;
  }

  /** The ids of the hosts known (set-aside ones not listed). */
  ids(): IterableIterator<string> {
    return this.#hosts.keys();
  }

  /** The ids of the BMHs that name networkData Secret `secret` (`namespace/name`). */
  namingSecret(secret: string): Iterable<string> {
    return this.#secretUsers.get(secret) ?? [];
  }

  /** The inventory of the hosts known, set-aside ones included. */
  inventory(): Inventory {
    return new Inventory(this.#hosts.values(), this.#setAside.values());
  }

  /** Joins the host of BMH `id` again from its BMH, HardwareData and networkData Secret. */
  rejoin(id: string): Rejoined {
    const before = this.#hosts.get(id);
    const slash = id.indexOf("/");
    const [namespace, name] = [id.slice(0, slash), id.slice(slash + 1)];
    const bmh = this.#objects.bareMetalHost(namespace, name);
    this.#forgetSecret(id);
    const asideBefore = this.#setAside.get(id);
    if (bmh === undefined) {
      this.#hosts.delete(id);
      this.#setAside.delete(id);
      return { changed: before !== undefined || asideBefore !== undefined, issues: [] };
    }
    const objects: InventoryObject[] = [this.#sourced(bmh)];
    const hardwareData = this.#objects.hardwareData(namespace, name);
    if (hardwareData !== undefined) objects.push(this.#sourced(hardwareData));
    const reference = networkDataReference(bmh, namespace);
    if (reference) {
      this.#secretOf.set(id, reference.id);
      const users = this.#secretUsers.get(reference.id) ?? new Set<string>();
      this.#secretUsers.set(reference.id, users.add(id));
      const secret = this.#objects.networkDataSecret(reference.namespace, reference.name);
      if (secret !== undefined) objects.push(this.#sourced(secret));
    }
    const { inventory, issues } = buildInventory(objects);
    const host = inventory.byId(id);
    if (host === undefined) this.#hosts.delete(id);
    else if (before === undefined || !sameHost(host, before)) this.#hosts.set(id, host);
    // One host is read at a time, so only its own bad facts set it aside here, not a MAC another has.
    const aside = inventory.setAside.find((candidate) => candidate.id === id);
    if (aside === undefined) this.#setAside.delete(id);
    else this.#setAside.set(id, aside);
    const asideChanged = JSON.stringify(aside) !== JSON.stringify(asideBefore);
    const changed =
      asideChanged || (host === undefined ? before !== undefined : this.#hosts.get(id) !== before);
    return { changed, issues };
  }

  #sourced(value: unknown): InventoryObject {
    return { value, source: this.#source };
  }

  #forgetSecret(id: string): void {
    const secret = this.#secretOf.get(id);
    if (secret === undefined) return;
    this.#secretOf.delete(id);
    const users = this.#secretUsers.get(secret);
    users?.delete(id);
    if (users?.size === 0) this.#secretUsers.delete(secret);
  }
}

/** The networkData Secret a BMH names (`spec.networkData`), in the BMH's namespace by default. */
function networkDataReference(
  bmh: unknown,
  namespace: string,
): { id: string; namespace: string; name: string } | undefined {
  const reference = field(field(bmh, "spec"), "networkData");
  const name = stringField(reference, "name");
  if (!isRecord(reference) || !name) return undefined;
  const secretNamespace = stringField(reference, "namespace") || namespace;
  return { id: `${secretNamespace}/${name}`, namespace: secretNamespace, name };
}
