/**
 * Incremental loading of large snapshot files: the codec's object streams read each document and
 * list item as the file streams in, and each goes to the {@link InventoryBuilder} right away, so
 * nothing but the host facts stays in memory. Pure (no fs): the reader in gitops/ does the I/O.
 */
import {
  jsonObjectStream,
  yamlObjectStream,
  type ChunkParser,
  type ObjectEvents,
} from "../codec/object-stream.ts";
import type { InventoryBuilder, InventoryObject } from "./load.ts";
import { isRecord, listItem, type ListHeader } from "./raw.ts";

/** A file's objects as they stream in. */
export interface InventoryStream<Input> {
  /** Feeds the next piece of the file. */
  write(input: Input): void;
  /** Ends the file; objects still waiting for their list's kind are added now. */
  end(): void;
}

/**
 * Hands list items to the builder. Typed lists of built-in kinds (a raw `SecretList`) omit the items'
 * `kind`, and a streamed list may name its own kind only after the items (kubectl sorts keys:
 * `apiVersion`, `items`, `kind`), so such items wait until the list's kind is known.
 */
class ListItems {
  #header: { kind?: string; apiVersion?: string } = {};
  #waiting: InventoryObject[] = [];

  constructor(private readonly builder: InventoryBuilder) {}

  headerField(key: string, value: unknown): void {
    if ((key === "kind" || key === "apiVersion") && typeof value === "string") this.#header[key] = value;
  }

  /** Takes `kind`/`apiVersion` from the part of a list document outside its items. */
  headerFrom(value: unknown): void {
    if (!isRecord(value)) return;
    this.headerField("kind", value["kind"]);
    this.headerField("apiVersion", value["apiVersion"]);
  }

  add(object: InventoryObject): void {
    const kindless = isRecord(object.value) && object.value["kind"] === undefined;
    if (!kindless) this.builder.add(object);
    else if (this.#header.kind !== undefined) this.builder.add(withHeader(this.#header, object));
    else this.#waiting.push(object);
  }

  /** The list is complete: its kind is known if it has one. */
  end(): void {
    for (const object of this.#waiting) this.builder.add(withHeader(this.#header, object));
    this.#waiting = [];
    this.#header = {};
  }
}

function withHeader(header: ListHeader, object: InventoryObject): InventoryObject {
  return { ...object, value: listItem(header, object.value) };
}

/** The events of a file's object stream, as the builder takes them. */
function inventoryEvents(builder: InventoryBuilder, items: ListItems): ObjectEvents {
  return {
    document: (object, aroundItems) => (aroundItems ? items.headerFrom(object.value) : builder.add(object)),
    item: (object) => items.add(object),
    listField: (key, value) => items.headerField(key, value),
    documentEnd: () => items.end(),
    issue: (found) => builder.report(found),
  };
}

/** A JSON file (`kubectl get -o json`), fed as raw bytes, into `builder`. */
export function jsonInventoryStream(file: string, builder: InventoryBuilder): InventoryStream<Uint8Array> {
  const items = new ListItems(builder);
  const stream = jsonObjectStream(file, inventoryEvents(builder, items));
  return {
    write: (bytes) => stream.write(bytes),
    end: () => {
      stream.end();
      items.end();
    },
  };
}

/**
 * A YAML file, fed as decoded text, into `builder`; each chunk read by `parseChunk` (tests pass
 * `parseYamlChunkFully` to compare the fast reader with the full parser).
 */
export function yamlInventoryStream(
  file: string,
  builder: InventoryBuilder,
  parseChunk?: ChunkParser,
): InventoryStream<string> {
  const items = new ListItems(builder);
  const stream = yamlObjectStream(file, inventoryEvents(builder, items), parseChunk);
  return {
    write: (text) => stream.write(text),
    end: () => {
      stream.end();
      items.end();
    },
  };
}
