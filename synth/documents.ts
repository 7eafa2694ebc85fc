import { LineCounter, isMap, isNode, isScalar, parseAllDocuments, type Document } from "yaml";
import type { FieldPath } from "./field-path.ts";
import { issue, type Issue, type SourcePosition } from "./issue.ts";

/** Kubernetes refuses objects above 1.5 MiB (etcd's request limit); so do we, with a clearer message. */
export const MAX_DOCUMENT_BYTES = 1.5 * 1024 * 1024;

/**
 * Aliases may expand at most this many times per document. `yaml` counts expanded nodes, so a
 * "billion laughs" document fails fast instead of eating memory.
 */
const MAX_ALIAS_COUNT = 100;

/** One YAML (or JSON) document of a user's file, with the way back from a field path to a line. */
export interface SourceDocument {
  readonly file: string;
  /** 0-based position of the document within its file. */
  readonly index: number;
  /** The document as plain data (maps, lists, scalars). */
  readonly value: unknown;
  /** Position of the node at `path`, or of its nearest ancestor that exists. */
  position(path: FieldPath): SourcePosition;
}

/** Documents of one file, plus whatever made parts of it unreadable. */
export interface ParsedFile {
  readonly documents: readonly SourceDocument[];
  readonly issues: readonly Issue[];
}

/**
 * Parses a multi-document YAML or JSON text. Never throws: syntax errors, binary content, alias bombs
 * and oversized documents become `yaml-syntax` issues pointing at the offending line; the readable
 * documents of the same file are still returned.
 */
export function parseDocuments(file: string, text: string): ParsedFile {
  const at = (line: number, column: number): SourcePosition => ({ file, line, column });
  if (text.includes("\u0000") || text.includes("\uFFFD")) {
    return {
      documents: [],
      issues: [issue("yaml-syntax", "", "file is binary, not YAML or JSON text", { source: at(1, 1) })],
    };
  }
  const lines = new LineCounter();
  const positionOf = (offset: number): SourcePosition => {
    const { line, col } = lines.linePos(offset);
    return at(line, col);
  };
  const documents: SourceDocument[] = [];
  const issues: Issue[] = [];
  const parsed = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const all = Array.isArray(parsed) ? parsed : [];
  all.forEach((document, index) => {
    const [start = 0, , end = text.length] = document.range;
    const bytes = Buffer.byteLength(text.slice(start, end));
    if (bytes > MAX_DOCUMENT_BYTES) {
      issues.push(tooLarge(bytes, positionOf(start)));
      return;
    }
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        issues.push(issue("yaml-syntax", "", firstLine(error.message), { source: positionOf(error.pos[0]) }));
      }
      return;
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      issues.push(
        issue("yaml-syntax", "", `document can't be expanded: ${firstLine(String(error))}`, {
          source: positionOf(start),
        }),
      );
      return;
    }
    if (value === null || value === undefined) return; // empty document, e.g. a trailing `---`
    documents.push({
      file,
      index,
      value,
      position: (path) => positionOf(nodeOffset(document, path) ?? start),
    });
  });
  return { documents, issues };
}

/** Offset of the deepest existing node along `path` (keys of a map, indexes of a sequence). */
function nodeOffset(document: Document, path: FieldPath): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const prefix = path.slice(0, length);
    const node = prefix.length === 0 ? document.contents : document.getIn(prefix, true);
    if (isNode(node) && node.range) {
      // For a map entry, point at the key (where the user's eye goes), not at the value.
      const key = prefix.length > 0 ? keyOffset(document, prefix) : undefined;
      return key ?? node.range[0];
    }
  }
  return undefined;
}

function keyOffset(document: Document, path: FieldPath): number | undefined {
  const parent = path.length === 1 ? document.contents : document.getIn(path.slice(0, -1), true);
  const last = path[path.length - 1];
  if (!isMap(parent) || typeof last !== "string") return undefined;
  for (const { key } of parent.items) {
    if (isScalar(key) && key.range && key.value === last) return key.range[0];
  }
  return undefined;
}

/** The `too-large` finding for a document (or a piece a splitter cut) of `bytes` bytes at `source`. */
export function tooLarge(bytes: number, source: SourcePosition, hint = ""): Issue {
  const size = (value: number) => `${(value / 1024 / 1024).toFixed(1)} MiB`;
  return issue(
    "too-large",
    "",
    `document is ${size(bytes)}, over the Kubernetes object limit of ${size(MAX_DOCUMENT_BYTES)}${hint}`,
    { source },
  );
}

/** The first line of a parser's message (the rest is a code excerpt the position already gives). */
export function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
