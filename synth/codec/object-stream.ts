/**
 * The codec's read direction for files too large to hold whole (a region's snapshot): bytes or text
 * go in as a reader gets them, a splitter cuts them into documents and list items, and each is read
 * at once (its fast path, else the full parser) and handed on with where it is in the file. Pure (no
 * fs): the reader in gitops/ does the I/O.
 */
import type { Issue } from "../issue.ts";
import { BlockYamlReader } from "./block-yaml.ts";
import { parseJsonChunk, parseYamlChunk, type ChunkObject, type TextChunk } from "./chunks.ts";
import { JsonSplitter } from "./json-split.ts";
import { YamlSplitter } from "./yaml-split.ts";

/** What a file's stream holds, in file order. */
export interface ObjectEvents {
  /**
   * A document's object; with `aroundItems`, the part of a list document outside its `items` (its
   * `kind` and `apiVersion`), whose items come through {@link item}.
   */
  document(object: ChunkObject, aroundItems: boolean): void;
  /** One entry of a list document's `items`. */
  item(object: ChunkObject): void;
  /** A string field of a JSON list document (`kind`, `apiVersion`), as soon as it has been read. */
  listField(key: string, value: string): void;
  /** The current document is complete. */
  documentEnd(): void;
  /** A `yaml-syntax` or `too-large` problem, before the objects of the piece it is about. */
  issue(found: Issue): void;
}

/** A file's objects as its pieces stream in. */
export interface ObjectStream<Input> {
  /** Feeds the next piece of the file. */
  write(input: Input): void;
  /** Ends the file. */
  end(): void;
}

/**
 * Parses one chunk of a file into objects, its problems going to `issues`; `reader` is the file's
 * fast block-YAML reader.
 */
export type ChunkParser = (
  file: string,
  chunk: TextChunk,
  issues: Issue[],
  reader: BlockYamlReader,
) => ChunkObject[];

/** Reads chunks of `file` with `parseChunk`, reporting each chunk's problems before its objects. */
function chunkReader(
  file: string,
  events: ObjectEvents,
  parseChunk: ChunkParser,
): (chunk: TextChunk) => ChunkObject[] {
  const reader = new BlockYamlReader();
  const issues: Issue[] = [];
  return (chunk) => {
    const objects = parseChunk(file, chunk, issues, reader);
    for (const found of issues) events.issue(found);
    issues.length = 0;
    return objects;
  };
}

/**
 * A JSON file (`kubectl get -o json`), fed as raw bytes. Items of a top-level list are read one by
 * one; any other top-level value is read whole (up to the 1.5 MiB object limit).
 */
export function jsonObjectStream(file: string, events: ObjectEvents): ObjectStream<Uint8Array> {
  const read = chunkReader(file, events, parseJsonChunk);
  const splitter = new JsonSplitter(file, {
    item: (chunk) => read(chunk).forEach((object) => events.item(object)),
    rootString: (key, value) => events.listField(key, value),
    root: (chunk, hadItems) => {
      for (const object of read(chunk)) events.document(object, hadItems);
      events.documentEnd();
    },
    issue: (found) => events.issue(found),
  });
  return { write: (bytes) => splitter.write(bytes), end: () => splitter.end() };
}

/**
 * A YAML file, fed as decoded text. Documents are read one by one, and the `items` of a list
 * document entry by entry, by `parseChunk` (tests pass `parseYamlChunkFully` to compare the fast
 * reader with the full parser).
 */
export function yamlObjectStream(
  file: string,
  events: ObjectEvents,
  parseChunk: ChunkParser = parseYamlChunk,
): ObjectStream<string> {
  const read = chunkReader(file, events, parseChunk);
  const splitter = new YamlSplitter(file, {
    segment: (chunk, partOfList) => {
      for (const object of read(chunk)) events.document(object, partOfList);
    },
    item: (chunk) => read(chunk).forEach((object) => events.item(object)),
    documentEnd: () => events.documentEnd(),
    issue: (found) => events.issue(found),
  });
  return { write: (text) => splitter.write(text), end: () => splitter.end() };
}
