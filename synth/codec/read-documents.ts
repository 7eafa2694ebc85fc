/**
 * The codec's read direction: a file's text in, its documents out ({@link parseDocuments}). The fast
 * paths (block YAML, decision 0029; JSON documents and block positions, decision 0043) read what they
 * know and step aside for anything else; the full `yaml` parser, {@link parseDocumentsFully}, reads
 * the rest and reports every syntax error. Values, findings and positions are the full parser's
 * either way, which `read-documents.test.ts` checks. Large snapshots are read item by item through
 * the splitters and `chunks.ts`, with the same fast path and fallback per item.
 */
import {
  LineCounter,
  Parser,
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  parseAllDocuments,
  parseDocument,
  type Document,
} from "yaml";
import {
  MAX_DOCUMENT_BYTES,
  MAX_DOCUMENT_TEXT_BYTES,
  sizeIssues,
  tooLarge,
  type SourceDocument,
} from "../documents.ts";
import type { FieldPath } from "../field-path.ts";
import { issue, type Issue, type SourcePosition } from "../issue.ts";
import { blockPositions } from "./block-positions.ts";
import { BlockYamlReader, type BlockYaml } from "./block-yaml.ts";

/**
 * Aliases may expand at most this many times per document. `yaml` counts expanded nodes, so a
 * "billion laughs" document fails fast instead of eating memory.
 */
const MAX_ALIAS_COUNT = 100;

/**
 * How the full parser reads: YAML 1.2, with YAML 1.1's merge keys (`<<: *base`, `<<: [*a, *b]`) as
 * kubectl, Argo CD and Flux read them (go-yaml): a key of the map itself wins over a merged one, an
 * earlier map of a list over a later one (decision 0053). Merged content is expanded aliases, so the
 * alias limit counts it. A quoted `"<<"` is a key like any other, as in go-yaml and in JSON.
 */
const PARSE_OPTIONS = { prettyErrors: false, merge: true } as const;

/** How {@link parseDocuments} reads a file. */
export interface ReadOptions {
  /**
   * Whether the file holds Kubernetes objects, so Kubernetes' size limits apply (`too-large`). The
   * lock never reaches the API server and grows with the site (decision 0044): it is read with
   * `false`, and then no document is too large, for the fast reader either. Aliases stay bounded.
   * @default true
   */
  readonly objectLimits?: boolean;
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
export function parseDocuments(file: string, text: string, options: ReadOptions = {}): ParsedFile {
  return readBlockDocuments(file, text, options) ?? parseDocumentsFully(file, text, options);
}

/**
 * {@link parseDocuments} with the full parser only, for text the fast reader has left to it. Without
 * `objectLimits` no document is refused for its size: the caller bounds the text.
 */
export function parseDocumentsFully(file: string, text: string, options: ReadOptions = {}): ParsedFile {
  const objectLimits = options.objectLimits ?? true;
  const at = (line: number, column: number): SourcePosition => ({ file, line, column });
  if (isBinary(text)) {
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
  // The line counter fills while parsing: documents refused before that count their own lines.
  const readable = objectLimits
    ? withoutHugeDocuments(text, (bytes, line) => issues.push(tooLarge(bytes, at(line, 1))))
    : text;
  const parsed = parseAllDocuments(readable, { ...PARSE_OPTIONS, lineCounter: lines, uniqueKeys: true });
  const all = Array.isArray(parsed) ? parsed : [];
  let star = readable.indexOf("*");
  let previousEnd = 0;
  all.forEach((document, index) => {
    const [start = 0, , end = readable.length] = document.range;
    // The document's text with what comes before it since the last one (its marker, directives).
    const header = previousEnd;
    previousEnd = end;
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        // The parser notices an unclosed quote only where the file ends: point at where it opens.
        const opened = error.code === "MISSING_CHAR" ? unclosedQuoteOffset(readable, start, end) : undefined;
        issues.push(
          opened === undefined
            ? issue("yaml-syntax", "", firstLine(error.message), { source: positionOf(error.pos[0]) })
            : issue("yaml-syntax", "", "this quoted string is never closed", { source: positionOf(opened) }),
        );
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
    const position = remembered((path: FieldPath) => positionOf(nodeOffset(document, path) ?? start));
    // Documents come in order, so the search for the next `*` only ever moves forward.
    while (star >= 0 && star < start) star = readable.indexOf("*", star + 1);
    const size = objectLimits ? sizeIssues(value, end - start, position, star >= 0 && star < end) : [];
    if (size.length > 0) {
      issues.push(...size);
      return;
    }
    if (value === null || value === undefined) return; // empty document, e.g. a trailing `---`
    // Its positions are offsets in the file: they move with its first line only if it starts one.
    const startsLine = start === 0 || readable[start - 1] === "\n";
    documents.push({
      file,
      index,
      value,
      position,
      ...(startsLine && { piece: { line: positionOf(start).line, text: readable.slice(header, end) } }),
    });
  });
  return { documents, issues };
}

/**
 * One value written as text inside an object (a networkData Secret's), with no positions: JSON first,
 * since SIP writes JSON and `JSON.parse` is an order of magnitude faster than the YAML parser on a
 * region's thousands of Secrets; block-style YAML through the fast reader for the same reason; the
 * full parser (a superset of both, keeping the last of two equal keys as JSON does) reads the rest.
 * A problem completes a sentence about the text: "is not JSON or YAML: …", "can't be expanded: …".
 */
export function readEmbeddedValue(text: string): { readonly value: unknown } | { readonly problem: string } {
  // Only text that opens an object or a list is tried as JSON: a failed JSON.parse costs more than the
  // YAML reader, and YAML reads any other JSON value the same way.
  if (/^\s*[{[]/.test(text)) {
    try {
      return { value: JSON.parse(text) };
    } catch {
      // not JSON: try YAML below
    }
  }
  const block = new BlockYamlReader().read(text);
  if (block !== undefined) return { value: block.value };
  const document = parseDocument(text, { ...PARSE_OPTIONS, logLevel: "silent", uniqueKeys: false });
  const firstError = document.errors[0];
  if (firstError !== undefined) return { problem: `is not JSON or YAML: ${firstLine(firstError.message)}` };
  try {
    return { value: document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (error) {
    return { problem: `can't be expanded: ${firstLine(String(error))}` };
  }
}

/** Document markers: at column 0, `---` and `...` always are. */
const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm;
const DOCUMENT_END = /^\.\.\.(?=[ \t\r\n]|$)/m;
/** Text with nothing but blank lines and comments. */
const NOTHING = /^(?:[ \t]*(?:#[^\n]*)?(?:\n|$))*$/;

/**
 * The documents of `text` read by the fast reader of `block-yaml.ts`, when every one of them
 * is in its subset (block style, as metalsynth, kubectl and most people write specs): the full parser
 * takes about 0.17 ms a CR, which is 1.7 s of a 10,000-cluster site's synth. Field positions come
 * from the full parser, on the one document a finding is about, when it is reported. `undefined`
 * when any document is outside the subset, empty or (with `objectLimits`) large, or the file has a
 * `...` marker: the full parser then reads the whole file, and reports whatever is wrong with it.
 * Documents written as JSON (`kubectl get -o json`, generated specs) are read by `JSON.parse` the same
 * way (issue #23), up to the size the full path reads.
 */
export function readBlockDocuments(
  file: string,
  text: string,
  options: ReadOptions = {},
): ParsedFile | undefined {
  const objectLimits = options.objectLimits ?? true;
  if (isBinary(text) || DOCUMENT_END.test(text)) return undefined;
  const cuts = Array.from(text.matchAll(DOCUMENT_START), (marker) => marker.index);
  // Anything but comments before the first `---` is a document of its own.
  if (cuts.length === 0 || !NOTHING.test(text.slice(0, cuts[0]))) cuts.unshift(0);
  const documents: SourceDocument[] = [];
  const issues: Issue[] = [];
  const reader = new BlockYamlReader();
  let line = 1;
  let counted = 0;
  for (const [index, start] of cuts.entries()) {
    const piece = text.slice(start, cuts[index + 1] ?? text.length);
    // Large block documents are measured as JSON by the full path; JSON ones here, up to the size the
    // full path refuses unread (without object limits, the size it reads at all).
    const block =
      (!objectLimits || piece.length <= MAX_DOCUMENT_BYTES / 4 ? reader.read(piece) : undefined) ??
      (piece.length <= (objectLimits ? MAX_DOCUMENT_TEXT_BYTES / 4 : MAX_DOCUMENT_TEXT_BYTES)
        ? readJsonDocument(piece)
        : undefined);
    if (block === undefined) return undefined;
    line += countLines(text, counted, start);
    counted = start;
    const startLine = line;
    let inPiece: ((path: FieldPath) => SourcePosition) | null | undefined;
    const position = remembered((path: FieldPath): SourcePosition => {
      inPiece ??= blockPositionsIn(file, piece) ?? documentPosition(file, piece) ?? null;
      // Pieces start at a line's start: only lines shift.
      const found = inPiece ? inPiece(path) : { file, line: block.line, column: block.column };
      return { file, line: startLine + found.line - 1, column: found.column };
    });
    const size = objectLimits ? sizeIssues(block.value, piece.length, position) : [];
    if (size.length > 0) issues.push(...size);
    else
      documents.push({ file, index, value: block.value, position, piece: { line: startLine, text: piece } });
  }
  return { documents, issues };
}

/** {@link blockPositions} of `piece`, in `file`. */
function blockPositionsIn(file: string, piece: string): ((path: FieldPath) => SourcePosition) | undefined {
  const positions = blockPositions(piece);
  return positions && ((path) => ({ file, ...positions(path) }));
}

/** A marker line's `---`, and the blank space JSON allows before a document's value. */
const JSON_LEAD = /^(?:---)?[ \t\r\n]*/;

/**
 * The document in `piece` (its `---` marker included) when it is one JSON object or array, as
 * `JSON.parse` reads it, with where it starts; `undefined` for anything else, the full parser's to
 * read: YAML around the JSON (a comment), duplicate keys (JSON keeps the last where the spec reader
 * refuses the document), a `__proto__` key. JSON is YAML, and its values read the same either way.
 */
function readJsonDocument(piece: string): BlockYaml | undefined {
  const lead = JSON_LEAD.exec(piece)?.[0] ?? "";
  const body = piece.slice(lead.length);
  if (body[0] !== "{" && body[0] !== "[") return undefined;
  if (/[\t\r]/.test(piece) || body.includes('"__proto__"')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || keyCount(value) !== jsonKeys(body)) return undefined;
  const lines = lead.split("\n");
  return {
    value: value as BlockYaml["value"],
    line: lines.length,
    column: (lines[lines.length - 1]?.length ?? 0) + 1,
  };
}

/** Longest key YAML reads as an implicit key (YAML 1.2, 7.4.2). */
const MAX_IMPLICIT_KEY = 1024;

/**
 * Colons outside strings in JSON text: one per key of every object. -1 when a key is one YAML reads
 * otherwise: longer than an implicit key may be, or apart from its colon by a line break.
 */
function jsonKeys(text: string): number {
  let keys = 0;
  let stringStart = -1;
  let stringEnd = -1;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (stringStart > stringEnd) {
      if (char === 0x5c) at++;
      else if (char === 0x22) stringEnd = at;
    } else if (char === 0x22) stringStart = at;
    else if (char === 0x3a) {
      if (at - stringStart > MAX_IMPLICIT_KEY || text.slice(stringEnd, at).includes("\n")) return -1;
      keys++;
    }
  }
  return keys;
}

/** Keys of every object in a parsed JSON value, walked without recursion (nesting may be deep). */
export function keyCount(value: unknown): number {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    if (Array.isArray(next)) {
      for (const element of next) if (typeof element === "object" && element !== null) pending.push(element);
      continue;
    }
    for (const key in next) {
      count++;
      const child = (next as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) pending.push(child);
    }
  }
  return count;
}

/**
 * `position`, each path's answer kept: the webhook plans again, review after review, clusters it
 * then reports nothing about, and their findings' positions cost a walk of the YAML each time.
 */
function remembered(position: (path: FieldPath) => SourcePosition): (path: FieldPath) => SourcePosition {
  const known = new Map<string, SourcePosition>();
  // A review's findings name the paths of the CRs' entries, the same arrays review after review.
  const sameArray = new WeakMap<FieldPath, SourcePosition>();
  return (path) => {
    let found = sameArray.get(path);
    if (found !== undefined) return found;
    const key = JSON.stringify(path);
    found = known.get(key);
    if (found === undefined) known.set(key, (found = position(path)));
    sameArray.set(path, found);
    return found;
  };
}

function isBinary(text: string): boolean {
  return text.includes("\u0000") || text.includes("\uFFFD");
}

/** Line breaks in `text` from `from` to `to`. */
function countLines(text: string, from: number, to: number): number {
  let breaks = 0;
  for (let at = text.indexOf("\n", from); at !== -1 && at < to; at = text.indexOf("\n", at + 1)) breaks++;
  return breaks;
}

/**
 * Where the fields of the first document of `text` are, from the full parser whatever the document's
 * size: for a reader that got the document's value another, faster way and now has to say where a
 * finding is. `undefined` when the text holds no document.
 */
export function documentPosition(
  file: string,
  text: string,
): ((path: FieldPath) => SourcePosition) | undefined {
  const lines = new LineCounter();
  const parsed = parseAllDocuments(text, { ...PARSE_OPTIONS, lineCounter: lines, uniqueKeys: true });
  const document = Array.isArray(parsed) ? parsed[0] : undefined;
  if (document === undefined) return undefined;
  const start = document.range[0];
  return (path) => {
    const { line, col } = lines.linePos(nodeOffset(document, path) ?? start);
    return { file, line, column: col };
  };
}

/**
 * `text` with every document whose text is over {@link MAX_DOCUMENT_TEXT_BYTES} blanked (its lines
 * kept as empty lines, so positions after it stay right), each reported to `refuse` with its size
 * and first line. Documents are cut at `---` and `...` lines: at column 0 they are always markers.
 */
function withoutHugeDocuments(text: string, refuse: (bytes: number, line: number) => void): string {
  if (text.length <= MAX_DOCUMENT_TEXT_BYTES / 4 && Buffer.byteLength(text) <= MAX_DOCUMENT_TEXT_BYTES)
    return text;
  const pieces: string[] = [];
  let start = 0;
  let line = 1;
  const marker = /^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm;
  const cut = (end: number) => {
    const piece = text.slice(start, end);
    const bytes = Buffer.byteLength(piece);
    const newlines = piece.split("\n").length - 1;
    if (bytes <= MAX_DOCUMENT_TEXT_BYTES) pieces.push(piece);
    else {
      refuse(bytes, line);
      const isMarker = /^(---|\.\.\.)/.test(piece);
      pieces.push(`${isMarker ? piece.slice(0, 3) : ""}${"\n".repeat(newlines)}`);
    }
    line += newlines;
    start = end;
  };
  for (let match = marker.exec(text); match !== null; match = marker.exec(text)) {
    if (match.index > start) cut(match.index);
    marker.lastIndex = match.index + 3;
  }
  cut(text.length);
  return pieces.join("");
}

/**
 * Where the first quoted scalar between `start` and `end` that has no closing quote opens, found in
 * the parser's concrete syntax tree; undefined if there is none.
 */
function unclosedQuoteOffset(text: string, start: number, end: number): number | undefined {
  let found: number | undefined;
  const visit = (node: unknown): void => {
    if (found !== undefined || typeof node !== "object" || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const token = node as Record<string, unknown>;
    const { type, offset, source } = token;
    if (
      (type === "double-quoted-scalar" || type === "single-quoted-scalar") &&
      typeof offset === "number" &&
      typeof source === "string" &&
      offset >= start &&
      offset < end &&
      !isClosed(source)
    ) {
      found = offset;
      return;
    }
    for (const value of Object.values(token)) visit(value);
  };
  for (const token of new Parser().parse(text)) visit(token);
  return found;
}

/** Whether a quoted scalar's source ends with its closing quote (not an escaped one). */
function isClosed(source: string): boolean {
  const quote = source[0];
  if (source.length < 2) return false;
  let trailing = 0;
  if (quote === "'") {
    // Inside single quotes '' is a quote: an odd run of quotes at the end closes the scalar.
    while (source[source.length - 1 - trailing] === "'" && trailing < source.length - 1) trailing++;
    return trailing % 2 === 1;
  }
  if (!source.endsWith('"')) return false;
  while (source[source.length - 2 - trailing] === "\\") trailing++;
  return trailing % 2 === 0;
}

/**
 * Offset of the deepest existing node along `path` (keys of a map, indexes of a sequence), through
 * aliases and merge keys to where a value is written: a merged key is found in the map it is merged
 * from, as {@link PARSE_OPTIONS} reads it (the map's own keys first, then its merges in order). For a
 * map entry the offset is the key's (where the user's eye goes), not the value's.
 */
function nodeOffset(document: Document, path: FieldPath): number | undefined {
  let node: unknown = document.contents;
  let offset = isNode(node) && node.range ? node.range[0] : undefined;
  for (const segment of path) {
    const entry = childOf(document, node, segment, 0);
    if (entry === undefined) break;
    node = entry.value;
    const start = entry.keyOffset ?? (isNode(node) && node.range ? node.range[0] : undefined);
    if (start !== undefined) offset = start;
  }
  return offset;
}

/** How deep merges may nest before the search gives up: far beyond what expansion allows. */
const MAX_MERGE_DEPTH = MAX_ALIAS_COUNT;

/** The entry `segment` of `node` (an alias resolved first), and where its key starts in a map. */
function childOf(
  document: Document,
  node: unknown,
  segment: string | number,
  depth: number,
): { value: unknown; keyOffset?: number } | undefined {
  const target = isAlias(node) ? node.resolve(document) : node;
  if (isSeq(target)) return typeof segment === "number" ? { value: target.items[segment] } : undefined;
  if (!isMap(target) || typeof segment !== "string" || depth > MAX_MERGE_DEPTH) return undefined;
  const merges: unknown[] = [];
  for (const { key, value } of target.items) {
    if (!isScalar(key)) continue;
    if (key.value === segment) {
      return key.range ? { value, keyOffset: key.range[0] } : { value };
    }
    if (typeof key.value === "symbol" && key.value.description === "<<") merges.push(value);
  }
  for (const merge of merges) {
    const sources = isAlias(merge) ? merge.resolve(document) : merge;
    for (const source of isSeq(sources) ? sources.items : [sources]) {
      const found = childOf(document, source, segment, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The first line of a parser's message (the rest is a code excerpt the position already gives). */
function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
