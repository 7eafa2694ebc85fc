/**
 * What crosses to a review worker and back (decision 0056): the state's changes and the reviews'
 * outcomes as structured-clone values. Most of what the state holds is plain data already; two
 * parts are not, and travel in another shape:
 *
 * - an `Inventory` is a class with indexes: the hosts travel, only those that changed since the
 *   last message (a host event changes one), and the worker builds its own `Inventory`;
 * - a CR (`AnyResource`) carries its source document, whose `position` is a function: the worker
 *   gets the position of the object itself, which is all the webhook's messages cite (they name
 *   field paths), and not the document's value, which no review reads again. CRs travel only when
 *   they changed since the last message, by key.
 */
import type { SourceDocument } from "../synth/documents.ts";
import type { FieldPath } from "../synth/field-path.ts";
import type { Host, SetAsideHost } from "../synth/inventory/host.ts";
import { Inventory } from "../synth/inventory/inventory.ts";
import type { SourcePosition } from "../synth/issue.ts";
import type { AnyResource } from "../synth/model/resource.ts";
import type { KnowledgeChange, KnowledgeUpdate } from "./state.ts";

/** A CR without its document's value and position function. */
export type WireResource = Omit<AnyResource, "document" | "basePath"> & {
  readonly document: { readonly file: string; readonly index: number; readonly at: SourcePosition };
};

/** The hosts that changed since the last message, and the hosts set aside (few, sent whole). */
export interface WireInventory {
  readonly changed: readonly Host[];
  readonly removed: readonly string[];
  readonly setAside: readonly SetAsideHost[];
}

/** CRs that changed since the last message of their list, and the keys that left it. */
export interface WireResources {
  readonly changed: readonly WireResource[];
  readonly removed: readonly string[];
}

/** A {@link KnowledgeUpdate} as a worker receives it. */
export type WireUpdate = Omit<KnowledgeUpdate, "inventory" | "siteResources" | "clusterResources"> & {
  readonly inventory?: WireInventory;
  readonly siteResources?: WireResources;
  readonly clusterResources?: WireResources;
};

/** A {@link KnowledgeChange} as a worker receives it. */
export type WireChange =
  | { readonly type: "update"; readonly parts: WireUpdate }
  | { readonly type: "hold"; readonly object: unknown; readonly at: number };

/**
 * The sending side: remembers what it sent, so that each message carries only what changed. One
 * per worker; a new worker starts from a new one fed the state's whole knowledge.
 */
export class WireSender {
  #hosts = new Map<string, Host>();
  readonly #resources = {
    site: new Map<string, AnyResource>(),
    cluster: new Map<string, AnyResource>(),
  };

  /** `change` as a message. */
  encode(change: KnowledgeChange): WireChange {
    if (change.type === "hold") return change;
    const { inventory, siteResources, clusterResources, ...rest } = change.parts;
    return {
      type: "update",
      parts: {
        ...rest,
        ...(inventory && { inventory: this.#inventory(inventory) }),
        ...(siteResources && { siteResources: this.#changedResources(this.#resources.site, siteResources) }),
        ...(clusterResources && {
          clusterResources: this.#changedResources(this.#resources.cluster, clusterResources),
        }),
      },
    };
  }

  #inventory(inventory: Inventory): WireInventory {
    const changed: Host[] = [];
    const next = new Map<string, Host>();
    for (const host of inventory.hosts) {
      next.set(host.id, host);
      // The feeds keep a host's object while it does not change: a new object is a changed host.
      if (this.#hosts.get(host.id) !== host) changed.push(host);
    }
    const removed = [...this.#hosts.keys()].filter((id) => !next.has(id));
    this.#hosts = next;
    return { changed, removed, setAside: inventory.setAside };
  }

  #changedResources(sent: Map<string, AnyResource>, resources: readonly AnyResource[]): WireResources {
    const changed: WireResource[] = [];
    const keys = new Set<string>();
    for (const resource of resources) {
      keys.add(resource.key);
      if (sent.get(resource.key) === resource) continue;
      sent.set(resource.key, resource);
      changed.push(wireResource(resource));
    }
    const removed = [...sent.keys()].filter((key) => !keys.has(key));
    for (const key of removed) sent.delete(key);
    return { changed, removed };
  }
}

/** The receiving side: keeps what arrived, and makes the state's parts of it. */
export class WireReceiver {
  readonly #hosts = new Map<string, Host>();
  readonly #resources = {
    site: new Map<string, AnyResource>(),
    cluster: new Map<string, AnyResource>(),
  };

  /** `change` as the state applies it. */
  decode(change: WireChange): KnowledgeChange {
    if (change.type === "hold") return change;
    const { inventory, siteResources, clusterResources, ...rest } = change.parts;
    return {
      type: "update",
      parts: {
        ...rest,
        ...(inventory && { inventory: this.#inventory(inventory) }),
        ...(siteResources && { siteResources: apply(this.#resources.site, siteResources) }),
        ...(clusterResources && { clusterResources: apply(this.#resources.cluster, clusterResources) }),
      },
    };
  }

  #inventory(wire: WireInventory): Inventory {
    for (const id of wire.removed) this.#hosts.delete(id);
    for (const host of wire.changed) this.#hosts.set(host.id, host);
    return new Inventory(this.#hosts.values(), wire.setAside);
  }
}

function apply(kept: Map<string, AnyResource>, wire: WireResources): AnyResource[] {
  for (const key of wire.removed) kept.delete(key);
  for (const resource of wire.changed) kept.set(resource.key, fromWire(resource));
  return [...kept.values()];
}

function wireResource(resource: AnyResource): WireResource {
  const { document, basePath, ...rest } = resource;
  return {
    ...rest,
    document: { file: document.file, index: document.index, at: document.position(basePath) },
  };
}

function fromWire(resource: WireResource): AnyResource {
  const { at, file, index } = resource.document;
  const document: SourceDocument = { file, index, value: undefined, position: () => at };
  const basePath: FieldPath = [];
  return { ...resource, document, basePath } as AnyResource;
}
