/**
 * Field positions in a document of the block-YAML subset (`block-yaml.ts`), found by one pass over
 * its lines instead of the full parser: a site whose specs draw thousands of findings (a region's
 * `host-not-ready` warnings) parsed each of those documents fully just to say where (issue #23).
 * Positions are the full parser's (`read-documents.ts`): a map entry's key, else the node's start.
 * Anything this pass does not know for sure (quoted keys, nested sequences, a value whose form it
 * does not recognise) gives `undefined`, and the caller asks the full parser.
 */
import type { FieldPath } from "../field-path.ts";

/** A line and a 1-based column within the document's text. */
export interface LineColumn {
  readonly line: number;
  readonly column: number;
}

interface MapNode {
  readonly kind: "map";
  readonly at: LineColumn;
  readonly entries: Map<string, { readonly key: LineColumn; readonly value: Node | undefined }>;
}
interface SeqNode {
  readonly kind: "seq";
  readonly at: LineColumn;
  readonly items: (Node | undefined)[];
}
/** A scalar or an empty flow collection: nothing inside it has a position of its own. */
interface LeafNode {
  readonly kind: "leaf";
  readonly at: LineColumn;
}
type Node = MapNode | SeqNode | LeafNode;

/** Thrown inside the pass when the text is not what it knows; never escapes {@link blockPositions}. */
const UNSURE = new Error("not sure of this document's positions");

/** One line with content: its 1-based number, its indentation and its text. */
interface Line {
  readonly number: number;
  readonly indent: number;
  readonly text: string;
}

/** A plain key, then `:` before a space or the line's end. */
const PLAIN_KEY = /^([A-Za-z_][A-Za-z0-9_./-]*)[ ]*:(?=[ ]|$)/;
const QUOTED_KEY = /^(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')[ ]*:(?=[ ]|$)/;

/**
 * Where each field of the document in `text` is, as the full parser would say, or `undefined` when
 * this pass is not sure of the document's shape.
 */
export function blockPositions(text: string): ((path: FieldPath) => LineColumn) | undefined {
  const lines: Line[] = [];
  const raws = text.split("\n");
  for (const [index, raw] of raws.entries()) {
    const body = raw.trimStart();
    if (body === "" || body.startsWith("#")) continue;
    if (index === 0 && /^---(?=[ ]|$)/.test(raw)) {
      // Content on the marker's line is no block document's.
      if (!/^---[ ]*(?:#.*)?$/.test(raw)) return undefined;
      continue;
    }
    lines.push({ number: index + 1, indent: raw.length - body.length, text: raw });
  }
  let root: Node;
  try {
    const reader = new Reader(lines);
    root = reader.node(0);
    if (reader.next < lines.length) throw UNSURE;
  } catch (error) {
    if (error === UNSURE) return undefined;
    throw error;
  }
  return (path) => {
    for (let length = path.length; length >= 0; length--) {
      const found = find(root, path.slice(0, length));
      if (found !== undefined) return found;
    }
    return root.at;
  };
}

/** The position of `path`: its key when it ends in a map entry, else its node's start. */
function find(root: Node, path: FieldPath): LineColumn | undefined {
  let node: Node | undefined = root;
  let at: LineColumn = root.at;
  for (const step of path) {
    if (node?.kind === "map" && typeof step === "string") {
      const entry = node.entries.get(step);
      if (entry === undefined) return undefined;
      node = entry.value;
      at = entry.key;
    } else if (node?.kind === "seq" && typeof step === "number") {
      const item = node.items[step];
      if (item === undefined) return undefined;
      node = item;
      at = item.at;
    } else return undefined;
  }
  return at;
}

class Reader {
  next = 0;
  constructor(private readonly lines: readonly Line[]) {}

  /** The block node whose first line is the next one, at `indent`. */
  node(indent: number): Node {
    const line = this.lines[this.next];
    if (line === undefined || line.indent !== indent) throw UNSURE;
    const content = line.text.slice(indent);
    if (/^-(?: |$)/.test(content)) return this.#seq(indent);
    if (PLAIN_KEY.test(content)) return this.#map(indent);
    throw UNSURE;
  }

  #seq(indent: number): SeqNode {
    const first = this.lines[this.next]!;
    const items: (Node | undefined)[] = [];
    while (this.next < this.lines.length) {
      const line = this.lines[this.next]!;
      if (line.indent !== indent || !/^-(?: |$)/.test(line.text.slice(indent))) break;
      const after = line.text.slice(indent + 1);
      const content = after.trimStart();
      const column = indent + 1 + (after.length - content.length);
      if (content === "" || content.startsWith("#")) throw UNSURE;
      if (content.startsWith("-") || QUOTED_KEY.test(content)) throw UNSURE;
      if (PLAIN_KEY.test(content)) {
        // A map in the item: its first entry on the item's line, the others at that column.
        items.push(this.#map(column));
      } else {
        items.push(this.#leaf(line, column, indent));
      }
    }
    return { kind: "seq", at: { line: first.number, column: indent + 1 }, items };
  }

  /** A block map with entries at `indent`, the first maybe on a sequence item's line, after `- `. */
  #map(indent: number): MapNode {
    const first = this.lines[this.next]!;
    const entries: MapNode["entries"] = new Map();
    while (this.next < this.lines.length) {
      const line = this.lines[this.next]!;
      if (line !== first && line.indent !== indent) break;
      const content = line.text.slice(indent);
      if (QUOTED_KEY.test(content)) throw UNSURE;
      const key = PLAIN_KEY.exec(content);
      if (key === null) break;
      const name = key[1]!;
      if (entries.has(name)) throw UNSURE;
      const keyAt = { line: line.number, column: indent + 1 };
      const after = content.slice(key[0].length);
      const value = after.trimStart();
      this.next++;
      if (value === "" || value.startsWith("#")) {
        const below = this.lines[this.next];
        if (below !== undefined && below.indent > indent)
          entries.set(name, { key: keyAt, value: this.node(below.indent) });
        else if (below !== undefined && below.indent === indent && /^-(?: |$)/.test(below.text.slice(indent)))
          entries.set(name, { key: keyAt, value: this.#seq(indent) });
        else entries.set(name, { key: keyAt, value: undefined });
        continue;
      }
      const valueColumn = indent + key[0].length + (after.length - value.length);
      if (value.startsWith("|")) {
        if (!/^\|[-+]?[ ]*(?:#.*)?$/.test(value)) throw UNSURE;
        // The literal's lines are all more indented than its key (blank ones were never kept).
        while (this.next < this.lines.length && this.lines[this.next]!.indent > indent) this.next++;
        entries.set(name, {
          key: keyAt,
          value: { kind: "leaf", at: { line: line.number, column: valueColumn + 1 } },
        });
        continue;
      }
      entries.set(name, { key: keyAt, value: this.#scalar(value, line, valueColumn, indent) });
    }
    return { kind: "map", at: { line: first.number, column: indent + 1 }, entries };
  }

  /** A one-line scalar or empty flow collection starting at `column` of the current item's line. */
  #leaf(line: Line, column: number, indent: number): LeafNode {
    this.next++;
    return this.#scalar(line.text.slice(column), line, column, indent);
  }

  #scalar(value: string, line: Line, column: number, indent: number): LeafNode {
    if (/^[[{]/.test(value) && !/^(?:\[\]|\{\})[ ]*(?:#.*)?$/.test(value)) throw UNSURE;
    if (/^[&*!|>%@`]/.test(value)) throw UNSURE;
    // A multi-line scalar continues on more indented lines.
    const below = this.lines[this.next];
    if (below !== undefined && below.indent > indent) throw UNSURE;
    return { kind: "leaf", at: { line: line.number, column: column + 1 } };
  }
}
