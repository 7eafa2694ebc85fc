/**
 * Incremental loading of large snapshot files: bytes or text go in as a reader gets them, each item
 * is parsed and handed to the {@link InventoryBuilder} right away, and nothing but the host facts
 * stays in memory. Pure (no fs): the reader in gitops/ does the I/O.
 */
import type { Issue } from "../issue.ts";
import { parseJsonChunk, parseYamlChunk, type TextChunk } from "./chunks.ts";
import { JsonSplitter } from "./json-split.ts";
import type { InventoryBuilder, InventoryObject } from "./load.ts";
import { isRecord, listItem, type ListHeader } from "./raw.ts";
import { YamlSplitter } from "./yaml-split.ts";

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

/** Reports parse issues to the builder. */
function reportAll(builder: InventoryBuilder, issues: Issue[]): void {
  for (const found of issues) builder.report(found);
  issues.length = 0;
}

/**
 * A JSON file (`kubectl get -o json`), fed as raw bytes. Items of a top-level list are parsed one by
 * one; any other top-level value is parsed whole (up to the 1.5 MiB object limit).
 */
export function jsonInventoryStream(file: string, builder: InventoryBuilder): InventoryStream<Uint8Array> {
  const items = new ListItems(builder);
  const issues: Issue[] = [];
  const parse = (chunk: TextChunk): InventoryObject[] => {
    const objects = parseJsonChunk(file, chunk, issues);
    reportAll(builder, issues);
    return objects;
  };
  const splitter = new JsonSplitter(file, {
    item: (chunk) => parse(chunk).forEach((object) => items.add(object)),
    rootString: (key, value) => items.headerField(key, value),
    root: (chunk, hadItems) => {
      for (const object of parse(chunk)) {
        if (hadItems) items.headerFrom(object.value);
        else builder.add(object);
      }
      items.end();
    },
    issue: (found) => builder.report(found),
  });
  return {
    write: (bytes) => splitter.write(bytes),
    end: () => {
      splitter.end();
      items.end();
    },
  };
}

/** Parses one chunk of a file into objects, its problems going to `issues`. */
export type ChunkParser = (file: string, chunk: TextChunk, issues: Issue[]) => InventoryObject[];

/**
 * A YAML file, fed as decoded text. Documents are parsed one by one, and the `items` of a list
 * document entry by entry, by `parseChunk` (tests pass `parseYamlChunkFully` to compare the fast
 * reader with the full parser).
 */
export function yamlInventoryStream(
  file: string,
  builder: InventoryBuilder,
  parseChunk: ChunkParser = parseYamlChunk,
): InventoryStream<string> {
  const items = new ListItems(builder);
  const issues: Issue[] = [];
  const parse = (chunk: TextChunk): InventoryObject[] => {
    const objects = parseChunk(file, chunk, issues);
    reportAll(builder, issues);
    return objects;
  };
  const splitter = new YamlSplitter(file, {
    segment: (chunk, partOfList) => {
      for (const object of parse(chunk)) {
        if (partOfList) items.headerFrom(object.value);
        else builder.add(object);
      }
    },
    item: (chunk) => parse(chunk).forEach((object) => items.add(object)),
    documentEnd: () => items.end(),
    issue: (found) => builder.report(found),
  });
  return {
    write: (text) => splitter.write(text),
    end: () => {
      splitter.end();
      items.end();
    },
  };
}
