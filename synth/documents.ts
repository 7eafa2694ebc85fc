/**
 * What a document of a user's file is, and the Kubernetes size limits every document is held to.
 * Reading text into documents is the codec's (`codec/read-documents.ts`, `codec/chunks.ts`).
 */
import { MAX_ANNOTATION_BYTES } from "./checked.ts";
import type { FieldPath } from "./field-path.ts";
import { issue, type Issue, type SourcePosition } from "./issue.ts";

/**
 * Kubernetes refuses objects above 1.5 MiB (etcd's request limit); so do we, with a clearer message.
 * Measured on the object as JSON, as the API server receives it, not on the YAML text: comments and
 * indentation don't count.
 */
export const MAX_DOCUMENT_BYTES = 1.5 * 1024 * 1024;

/**
 * The text of one document above this is refused without being parsed: no object fits in 1.5 MiB
 * with that much text, and parsing a 60 MB scalar only to refuse it takes seconds.
 */
export const MAX_DOCUMENT_TEXT_BYTES = 8 * 1024 * 1024;

/** One YAML (or JSON) document of a user's file, with the way back from a field path to a line. */
export interface SourceDocument {
  readonly file: string;
  /** 0-based position of the document within its file. */
  readonly index: number;
  /** The document as plain data (maps, lists, scalars). */
  readonly value: unknown;
  /** Position of the node at `path`, or of its nearest ancestor that exists. */
  position(path: FieldPath): SourcePosition;
  /**
   * The document's own text and the line of its file it starts on, when every position in it is a
   * position in that text moved down by the line: the same text at another line has every position
   * moved by the difference (a plan kept from an earlier run moves its findings so, decision 0070).
   * Absent for a document that does not start a line (`--- {a: 1}`, which only the full parser reads).
   */
  readonly piece?: { readonly line: number; readonly text: string };
}

/**
 * What Kubernetes would refuse for size: the object as JSON over {@link MAX_DOCUMENT_BYTES}, or its
 * annotations (a List's items' too) over {@link MAX_ANNOTATION_BYTES}. `textBytes` (the length of the
 * document's text) spares the JSON measure for the many documents far below the limit, unless
 * `mayHaveAliases` (the text has a `*`), since aliases can expand a small text.
 */
export function sizeIssues(
  value: unknown,
  textBytes: number,
  position: (path: FieldPath) => SourcePosition,
  mayHaveAliases = false,
): Issue[] {
  const issues: Issue[] = [];
  // JSON adds quotes and braces to YAML; a quarter of the limit leaves room for that. Aliases can
  // expand a small text, so their documents are always measured.
  if (textBytes > MAX_DOCUMENT_BYTES / 4 || (mayHaveAliases && hasAliasExpansion(value, textBytes))) {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
    if (bytes > MAX_DOCUMENT_BYTES) issues.push(tooLarge(bytes, position([])));
  }
  const annotated: { path: FieldPath; object: unknown }[] = [{ path: [], object: value }];
  const items = isObject(value) && Array.isArray(value["items"]) ? value["items"] : [];
  items.forEach((item: unknown, index) => annotated.push({ path: ["items", index], object: item }));
  for (const { path, object } of annotated) {
    const annotations =
      isObject(object) && isObject(object["metadata"]) ? object["metadata"]["annotations"] : undefined;
    if (!isObject(annotations)) continue;
    let bytes = 0;
    for (const [key, text] of Object.entries(annotations))
      bytes += Buffer.byteLength(key) + (typeof text === "string" ? Buffer.byteLength(text) : 0);
    if (bytes > MAX_ANNOTATION_BYTES) {
      const where = [...path, "metadata", "annotations"];
      issues.push(
        issue(
          "too-large",
          where.join("."),
          `annotations total ${(bytes / 1024).toFixed(0)} KiB, over the Kubernetes limit of ${MAX_ANNOTATION_BYTES / 1024} KiB`,
          { source: position(where) },
        ),
      );
    }
  }
  return issues;
}

/** Cheap guard: a value that is much bigger than its text came from aliases. Only strings are sized. */
function hasAliasExpansion(value: unknown, textBytes: number): boolean {
  let budget = textBytes;
  const visit = (node: unknown): boolean => {
    if (typeof node === "string") budget -= node.length;
    else if (Array.isArray(node)) return node.some(visit);
    else if (isObject(node))
      return Object.entries(node).some(([key, inner]) => ((budget -= key.length), visit(inner)));
    return budget < 0;
  };
  return visit(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
