/**
 * Parsing one piece ("chunk") of a large snapshot file: a list item or a single document that a
 * splitter cut out, with the line and column it starts at, so positions still point into the file.
 */
import { MAX_DOCUMENT_BYTES, sizeIssues, type SourceDocument } from "../documents.ts";
import type { FieldPath } from "../field-path.ts";
import type { Issue, SourcePosition } from "../issue.ts";
import type { BlockYamlReader } from "./block-yaml.ts";
import { documentPosition, keyCount, parseDocumentsFully } from "./read-documents.ts";

/** Text of one object (or document) of a file and where it starts (1-based). */
export interface TextChunk {
  readonly text: string;
  readonly line: number;
  readonly column: number;
  /**
   * How many object keys the JSON splitter counted in the text (a colon outside a string is one).
   * `JSON.parse` keeps the last of two equal keys without a word, where YAML and the spec reader
   * refuse them; fewer keys parsed than counted means a duplicate.
   */
  readonly keys?: number;
}

/** One object read from a chunk: its value, where it starts and where each of its fields is. */
export interface ChunkObject {
  readonly value: unknown;
  readonly source: SourcePosition;
  readonly position: (path: FieldPath) => SourcePosition;
}

/** Maps a position inside the chunk's text to the file: lines shift; columns only on the first line. */
function shift(chunk: TextChunk, position: SourcePosition): SourcePosition {
  return {
    file: position.file,
    line: chunk.line + position.line - 1,
    column: position.line === 1 ? chunk.column + position.column - 1 : position.column,
  };
}

function shiftIssue(chunk: TextChunk, found: Issue): Issue {
  return found.source ? { ...found, source: shift(chunk, found.source) } : found;
}

function fromDocument(chunk: TextChunk, document: SourceDocument): ChunkObject {
  return {
    value: document.value,
    source: shift(chunk, document.position([])),
    position: (path: FieldPath) => shift(chunk, document.position(path)),
  };
}

/**
 * Parses a YAML (or JSON) chunk with the same checks as whole files (binary content, alias bombs,
 * the 1.5 MiB object limit); issues go to `issues` with file positions.
 *
 * Block-style text as `kubectl get -o yaml` writes it goes through `reader`, the fast reader of
 * block-yaml.ts (an order of magnitude faster, which a region's snapshot needs), and field positions
 * come from the full parser only when the loader reports a problem; anything else is parsed fully
 * right away.
 */
export function parseYamlChunk(
  file: string,
  chunk: TextChunk,
  issues: Issue[],
  reader: BlockYamlReader,
): ChunkObject[] {
  const { text } = chunk;
  const fast =
    text.length <= MAX_DOCUMENT_BYTES && !text.includes("\u0000") && !text.includes("\uFFFD")
      ? reader.read(text)
      : undefined;
  if (fast === undefined) return parseYamlChunkFully(file, chunk, issues);
  const start = shift(chunk, { file, line: fast.line, column: fast.column });
  return withLazyPositions(file, chunk, fast.value, start, text.length, issues);
}

/** {@link parseYamlChunk} with the full parser only, for text the fast reader leaves to it. */
export function parseYamlChunkFully(file: string, chunk: TextChunk, issues: Issue[]): ChunkObject[] {
  const parsed = parseDocumentsFully(file, chunk.text);
  for (const found of parsed.issues) issues.push(shiftIssue(chunk, found));
  return parsed.documents.map((document) => fromDocument(chunk, document));
}

/**
 * Parses a JSON chunk with `JSON.parse` (an order of magnitude faster than a YAML parser on a region's
 * snapshot). Field positions are computed lazily, only when the loader reports a problem. Text that is
 * not strict JSON goes through the YAML parser, which either reads it (YAML is a superset) or
 * reports the error with its line and column.
 */
export function parseJsonChunk(file: string, chunk: TextChunk, issues: Issue[]): ChunkObject[] {
  let value: unknown;
  try {
    value = JSON.parse(chunk.text);
  } catch {
    return parseYamlChunkFully(file, chunk, issues);
  }
  // A duplicate key: the YAML parser reports it (yaml-syntax, at the key) as it does in a YAML file.
  if (chunk.keys !== undefined && keyCount(value) !== chunk.keys)
    return parseYamlChunkFully(file, chunk, issues);
  const source: SourcePosition = { file, line: chunk.line, column: chunk.column };
  // JSON text is never shorter than the compact JSON the API server measures, so only long text is.
  const textBytes = chunk.text.length > MAX_DOCUMENT_BYTES ? chunk.text.length : 0;
  return withLazyPositions(file, chunk, value, source, textBytes, issues);
}

/**
 * An object read without field positions, checked for size. Positions come from the full parser,
 * which runs on the chunk only if the size check or the loader asks for one.
 */
function withLazyPositions(
  file: string,
  chunk: TextChunk,
  value: unknown,
  source: SourcePosition,
  textBytes: number,
  issues: Issue[],
): ChunkObject[] {
  let positionInChunk: ((path: FieldPath) => SourcePosition) | null | undefined;
  const position = (path: FieldPath): SourcePosition => {
    positionInChunk ??= documentPosition(file, chunk.text) ?? null;
    return positionInChunk ? shift(chunk, positionInChunk(path)) : source;
  };
  const size = sizeIssues(value, textBytes, position);
  if (size.length > 0) {
    issues.push(...size);
    return [];
  }
  return [{ value, source, position }];
}
