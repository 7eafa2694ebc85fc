/**
 * A fast reader for the plain block-style YAML that `kubectl get -o yaml` writes: block mappings and
 * sequences (indented or at their key's column), one-line plain, single- and double-quoted scalars,
 * literal block scalars (`|`, `|-`, `|+`), the empty `[]` and `{}`, comments and an opening `---`.
 * Anything else (anchors, aliases, tags, flow collections, folded or multi-line scalars, complex,
 * numeric or duplicate keys, tabs, a second document) makes it give up, and the caller reads the
 * text with the full `yaml` parser, which also reports every error with its line and column.
 *
 * Why it exists: the full parser builds a syntax tree and a document with a source range for every
 * node, about 2 MB/s on a region's snapshot, and docs/contract.md §8 asks 20 MB/s. This reader keeps no positions;
 * a caller that reports a finding in an object parses that object again with the full parser to say
 * where. Plain scalars resolve through the `yaml` package's own core-schema tags, so `true`, `0x1F` or
 * `.inf` mean the same in both; tests compare the two on the example inventories and on generated and
 * random documents.
 */
import { Schema, isScalar, type ScalarTag } from "yaml";
import { detach } from "../detach.ts";

/** The YAML 1.2 core-schema tags a plain scalar can resolve to other than a string, in the parser's order. */
const CORE_TAGS = new Schema({}).tags.filter(
  (tag): tag is ScalarTag => tag.collection === undefined && tag.default === true && tag.test !== undefined,
);
/** Any of their patterns: most plain scalars (names, MACs, addresses) are strings, told in one test. */
const ANY_CORE_TAG = new RegExp(CORE_TAGS.map((tag) => `(?:${tag.test?.source ?? "$^"})`).join("|"));
/**
 * What a core-schema null, boolean, integer or float starts with (YAML 1.2.2 §10.3.2): `~`, `null`,
 * `true`, `false` in their three spellings, a digit, a sign or `.` (`.5`, `.inf`, `.nan`). More than half
 * of a snapshot's plain scalars start otherwise and are strings without running the patterns above.
 */
const CORE_START = characters("~nNtTfF0123456789+-.");
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/**
 * Plain keys read here: Kubernetes names, label keys, camelCase fields. Others go to the full parser,
 * and so do the keys the core schema reads as null or a boolean (a JS object would hold `"true"`).
 */
const KEY_START = characters(`${LETTERS}_`);
const KEY_PART = characters(`${LETTERS}_0123456789./-`);
const TYPED_KEYS = ["null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"];
/** Characters a plain scalar can't start with (YAML indicators), besides `-`, `?` and `:` before a space. */
const INDICATORS = characters(",[]{}#&*!|>'\"%@`");
/** Escapes that mean the same in JSON and in a YAML double-quoted scalar. */
const JSON_ESCAPES = /^(?:[^\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*$/;

/**
 * The keys read last, by length and first and last character. The same few dozen keys repeat in
 * every object of a snapshot; handing the engine the string it has already used as a property name
 * spares a copy and a hash for each of them. Only a cache: the values read never depend on it.
 */
class KeyCache {
  readonly #slots: (string | undefined)[] = new Array<string | undefined>(1024).fill(undefined);

  /** The cached key equal to `text.slice(start, end)`, if any. */
  find(text: string, start: number, end: number): string | undefined {
    const known = this.#slots[slotOf(text, start, end)];
    if (known === undefined || known.length !== end - start) return undefined;
    for (let index = 0; index < known.length; index++) {
      if (known.charCodeAt(index) !== text.charCodeAt(start + index)) return undefined;
    }
    return known;
  }

  /** Remembers `key`, which must hold no memory of a larger text (see {@link detach}). */
  add(key: string): void {
    this.#slots[slotOf(key, 0, key.length)] = key;
  }
}

function slotOf(text: string, start: number, end: number): number {
  return ((end - start) * 31 + text.charCodeAt(start) * 7 + text.charCodeAt(end - 1)) & 1023;
}

/** Thrown inside the reader when the text leaves the subset; never escapes {@link BlockYamlReader.read}. */
class OutsideSubset extends Error {}
const OUTSIDE = new OutsideSubset("outside the block-YAML subset");

/** What {@link BlockYamlReader.read} read. */
export interface BlockYaml {
  /** The document's value, as `parseDocument(text, { uniqueKeys: true }).toJS()` gives it. */
  readonly value: Record<string, unknown> | unknown[];
  /** Where the root mapping or sequence starts (1-based), as the full parser places it. */
  readonly line: number;
  readonly column: number;
}

/**
 * Reads documents of the subset described above. One reader serves one read (a file, a snapshot's
 * stream of items), so the keys it has seen are shared by that read's documents and by nothing else.
 */
export class BlockYamlReader {
  readonly #keys = new KeyCache();

  /**
   * The document in `text` when it is one block mapping or sequence in the subset, else `undefined`:
   * read it with the full parser.
   */
  read(text: string): BlockYaml | undefined {
    if (text.includes("\t") || text.includes("\r")) return undefined;
    try {
      return new BlockReader(text, this.#keys).document();
    } catch (error) {
      if (error === OUTSIDE) return undefined;
      throw error;
    }
  }
}

const SPACE = 0x20;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;

/** A block mapping or sequence being read. */
type Collection = Record<string, unknown> | unknown[];

/**
 * Reads line by line through offsets into the text, so only keys and values are ever copied.
 *
 * One loop over the lines with a stack of the open collections, not one recursive method per node
 * kind: the engine compiles the loop once, where it compiled each of the mutually recursive methods
 * with the others inlined, much the same code four times over, on every run of the CLI.
 */
class BlockReader {
  readonly #text: string;
  readonly #keys: KeyCache;
  /** Where the last line ends: a final line break ends that line, it doesn't start another. */
  readonly #last: number;
  /** Start of the current line. */
  #start = 0;
  /** End of the current line: its line break, or the end of the text. */
  #end: number;
  /** Indentation of the current line, -1 until measured. */
  #indent = -1;
  /** 1-based number of the current line. */
  #line = 1;
  /**
   * The first `#` at or after the last one looked for, or the text's length: comments are rare, so one
   * search serves many values.
   */
  #hash = -1;
  /** The collections still open, outermost first. */
  readonly #open: Collection[] = [];
  /** The column (0-based) of the entries of each collection in {@link #open}. */
  readonly #columns: number[] = [];
  /**
   * The entry of the innermost open collection whose value starts on a later line (`key:` or `-` with
   * nothing after it): its key, or its index in a sequence. Its value is null unless the next line
   * starts a node below it.
   */
  #pending: string | number | undefined;
  /** Where the text after the `:` of the key {@link #key} last read starts. */
  #afterKey = 0;

  constructor(text: string, keys: KeyCache) {
    this.#text = text;
    this.#keys = keys;
    this.#last = text.endsWith("\n") ? text.length - 1 : text.length;
    this.#end = this.#lineEnd();
  }

  document(): BlockYaml {
    this.#skipBlank();
    // `---` opening the document, as in multi-document files.
    if (/^---(?: +#.*| *)$/.test(this.#text.slice(this.#start, this.#end))) this.#next();
    const indent = this.#nextContent();
    if (indent < 0) throw OUTSIDE; // empty: the full parser decides what that means
    const line = this.#line;
    const root = this.#openAt(indent);
    for (let column = indent; column >= 0; column = this.#nextContent()) this.#entry(column);
    return { value: root, line, column: indent + 1 };
  }

  /** Opens the collection whose first entry is the current line, at `column`. */
  #openAt(column: number): Collection {
    const collection: Collection = this.#isSequenceEntry(this.#start + column) ? [] : {};
    this.#open.push(collection);
    this.#columns.push(column);
    return collection;
  }

  /**
   * Reads the current line, an entry at `column`, into the collection it belongs to: a new one when it
   * is more indented than an entry waiting for its value, else the open one at its column. A line at
   * no open collection's column is outside the subset (or an error).
   */
  #entry(column: number): void {
    const open = this.#open;
    const columns = this.#columns;
    const isItem = this.#isSequenceEntry(this.#start + column);
    const pending = this.#pending;
    if (pending !== undefined) {
      this.#pending = undefined;
      const parent = open[open.length - 1];
      const parentColumn = columns[columns.length - 1] ?? -1;
      // Below `key:`, a sequence may also start at the key's own column, as kubectl writes lists.
      if (column > parentColumn || (column === parentColumn && isItem && typeof pending === "string")) {
        const child = this.#openAt(column);
        if (parent) place(parent, pending, child);
      }
    }
    while ((columns[columns.length - 1] ?? -1) > column) {
      open.pop();
      columns.pop();
    }
    let collection = open[open.length - 1];
    if (columns[columns.length - 1] !== column) throw OUTSIDE;
    if (Array.isArray(collection) && !isItem) {
      // The end of a sequence written at its key's column: the mapping's next key.
      open.pop();
      columns.pop();
      collection = open[open.length - 1];
      if (columns[columns.length - 1] !== column) throw OUTSIDE;
    }
    if (Array.isArray(collection)) this.#item(collection, column);
    else if (collection && !isItem) this.#mapEntry(collection, this.#start + column, column);
    else throw OUTSIDE; // `- ` at a mapping's column
  }

  /** A mapping entry whose key starts at `at`; its mapping's entries are at `column`. */
  #mapEntry(map: Record<string, unknown>, at: number, column: number): void {
    const key = this.#key(at);
    if (key === undefined || key === "__proto__" || key === "<<" || Object.hasOwn(map, key)) throw OUTSIDE;
    map[key] = this.#value(this.#afterKey, column, key);
  }

  /** A sequence entry (`-` at `column`): a scalar, a mapping that starts on its line, or a later node. */
  #item(list: unknown[], column: number): void {
    const text = this.#text;
    const from = this.#start + column + 1;
    const at = from + spacesAt(text, from, this.#end);
    if (this.#isSequenceEntry(at)) throw OUTSIDE; // `- - x`
    if (at < this.#end && text.charCodeAt(at) !== HASH && this.#key(at) !== undefined) {
      // `- key: v`: a mapping at the column of `key`.
      const map: Record<string, unknown> = {};
      list.push(map);
      this.#open.push(map);
      this.#columns.push(at - this.#start);
      this.#mapEntry(map, at, at - this.#start);
      return;
    }
    const index = list.push(null) - 1;
    list[index] = this.#value(from, column, index);
  }

  /** Whether a sequence entry's `-` is at `at`. */
  #isSequenceEntry(at: number): boolean {
    return (
      this.#text.charCodeAt(at) === DASH && (at + 1 === this.#end || this.#text.charCodeAt(at + 1) === SPACE)
    );
  }

  /**
   * The key of a mapping entry that starts at `at`, with {@link #afterKey} set to the offset after its
   * `:`; `undefined` when no key starts there.
   */
  #key(at: number): string | undefined {
    const text = this.#text;
    const end = this.#end;
    let key: string;
    let colon: number;
    const first = text[at];
    if (first === '"' || first === "'") {
      const quoted = quotedScalar(text, at, end);
      if (quoted === undefined) return undefined;
      key = quoted.value;
      colon = quoted.end;
    } else {
      if (KEY_START[text.charCodeAt(at)] !== 1) return undefined;
      colon = at + 1;
      while (colon < end && KEY_PART[text.charCodeAt(colon)] === 1) colon++;
      const known = this.#keys.find(text, at, colon);
      if (known !== undefined) {
        key = known;
      } else {
        key = text.slice(at, colon);
        if (TYPED_KEYS.includes(key)) return undefined;
        this.#keys.add(detach(key));
      }
    }
    if (text.charCodeAt(colon) !== COLON || (colon + 1 < end && text.charCodeAt(colon + 1) !== SPACE))
      return undefined;
    this.#afterKey = colon + 1;
    return key;
  }

  /**
   * The value of the entry `slot` (a key, or an index in a sequence) whose text after `key:` or `-`
   * starts at `from`: a scalar on this line, or null for now, to be replaced by the node on the next
   * lines if there is one (see {@link #entry}). `column` is the column of the entry's collection.
   */
  #value(from: number, column: number, slot: string | number): unknown {
    const start = from + spacesAt(this.#text, from, this.#end);
    if (start < this.#end && this.#text.charCodeAt(start) !== HASH) return this.#inlineValue(start, column);
    this.#pending = slot;
    this.#next();
    return null;
  }

  /**
   * A scalar (or `[]`, `{}`) that starts at `start` on the current line. A more indented line after it
   * would continue it (a multi-line scalar) or be an error: {@link #entry} finds no collection there.
   */
  #inlineValue(start: number, column: number): unknown {
    const text = this.#text;
    const first = text[start];
    let value: unknown;
    if (first === "|") return this.#literal(start, column);
    if (first === '"' || first === "'") {
      const quoted = quotedScalar(text, start, this.#end);
      if (quoted === undefined || this.#commentFrom(quoted.end) !== quoted.end) throw OUTSIDE;
      value = quoted.value;
    } else {
      value = plainScalar(text.slice(start, this.#commentFrom(start)));
    }
    this.#next();
    return value;
  }

  #lineEnd(): number {
    const end = this.#text.indexOf("\n", this.#start);
    return end < 0 ? this.#text.length : end;
  }

  #next(): void {
    this.#start = this.#end + 1;
    this.#end = this.#lineEnd();
    this.#indent = -1;
    this.#line++;
  }

  /**
   * Moves to the next line with content and returns its indentation, or -1 at the end. Directives
   * and document markers give up: the full parser reads those.
   */
  #nextContent(): number {
    this.#skipBlank();
    if (this.#start > this.#last) return -1;
    if (this.#indent === 0 && /^(?:%|---|\.\.\.)/.test(this.#text.slice(this.#start, this.#start + 3)))
      throw OUTSIDE;
    return this.#indent;
  }

  /** Moves past blank lines and comment lines. */
  #skipBlank(): void {
    for (; this.#start <= this.#last; this.#next()) {
      if (this.#indent < 0) this.#indent = spacesAt(this.#text, this.#start, this.#end);
      const first = this.#start + this.#indent;
      if (first < this.#end && this.#text.charCodeAt(first) !== HASH) return;
    }
  }

  /**
   * Where the current line's text from `from` ends, without trailing spaces and comment: a `#` after a
   * space starts a comment. Only U+0020 counts as a space (`trim` would also drop a no-break space).
   */
  #commentFrom(from: number): number {
    const text = this.#text;
    let hash = this.#hash;
    if (hash < from) hash = text.indexOf("#", from);
    while (hash >= 0 && hash < this.#end && text.charCodeAt(hash - 1) !== SPACE)
      hash = text.indexOf("#", hash + 1);
    this.#hash = hash < 0 ? text.length : hash;
    let end = Math.min(this.#hash, this.#end);
    while (end > from && text.charCodeAt(end - 1) === SPACE) end--;
    return end;
  }

  /** A literal block scalar whose header (`|`, `|-`, `|+`) starts at `start` on the current line. */
  #literal(start: number, parentIndent: number): string {
    const header = this.#text.slice(start, this.#commentFrom(start));
    if (header !== "|" && header !== "|-" && header !== "|+") throw OUTSIDE;
    const text = this.#text;
    const lines: string[] = [];
    let indent = -1;
    let leadingBlank = 0;
    for (this.#next(); this.#start <= this.#last; this.#next()) {
      const spaces = spacesAt(text, this.#start, this.#end);
      if (this.#start + spaces === this.#end) {
        // An all-space line longer than the indentation carries content spaces: rare, full parser.
        if (indent >= 0 && spaces > indent) throw OUTSIDE;
        if (indent < 0) leadingBlank = Math.max(leadingBlank, spaces);
        lines.push("");
        continue;
      }
      if (indent < 0) {
        if (spaces <= parentIndent || leadingBlank > spaces) throw OUTSIDE; // empty, or an error
        indent = spaces;
      } else if (spaces < indent) {
        break;
      }
      lines.push(text.slice(this.#start + indent, this.#end));
    }
    if (indent < 0) throw OUTSIDE;
    let end = lines.length;
    while (end > 0 && lines[end - 1] === "") end--;
    const body = lines.slice(0, end).join("\n");
    // Chomping: clip keeps one final line break, strip none, keep all (the `yaml` parser adds one at
    // the end of the text too).
    if (header === "|-") return body;
    return body + "\n".repeat(header === "|+" ? lines.length - end + 1 : 1);
  }
}

/** Sets the entry `slot` of `collection`: a key of a mapping, an index of a sequence. */
function place(collection: Collection, slot: string | number, value: unknown): void {
  if (Array.isArray(collection)) collection[Number(slot)] = value;
  else collection[slot] = value;
}

/** A one-line plain scalar, resolved as the `yaml` parser's core schema does. */
function plainScalar(text: string): unknown {
  if (text === "[]") return [];
  if (text === "{}") return {};
  const first = text[0];
  const second = text[1];
  if (
    INDICATORS[text.charCodeAt(0)] === 1 ||
    ((first === "-" || first === "?" || first === ":") && (second === undefined || second === " ")) ||
    text.includes(": ") ||
    text.endsWith(":")
  )
    throw OUTSIDE;
  if ((CORE_START[text.charCodeAt(0)] !== 1 && text !== "") || !ANY_CORE_TAG.test(text)) return text;
  for (const tag of CORE_TAGS) {
    if (!tag.test?.test(text)) continue;
    const resolved = tag.resolve(text, giveUp, {});
    return isScalar(resolved) ? resolved.value : resolved;
  }
  return text;
}

function giveUp(): never {
  throw OUTSIDE;
}

/**
 * The single- or double-quoted scalar that starts at `start` and closes before `end`, and the offset
 * after its closing quote; `undefined` when it doesn't close there. Double-quoted escapes other than
 * JSON's give up.
 */
function quotedScalar(text: string, start: number, end: number): { value: string; end: number } | undefined {
  if (text[start] === "'") {
    for (let at = text.indexOf("'", start + 1); at >= 0 && at < end; at = text.indexOf("'", at + 2)) {
      if (text[at + 1] !== "'")
        return { value: text.slice(start + 1, at).replaceAll("''", "'"), end: at + 1 };
    }
    return undefined;
  }
  for (let at = start + 1; at < end; at++) {
    const char = text[at];
    if (char === "\\") at++;
    else if (char === '"') {
      const inner = text.slice(start + 1, at);
      if (!inner.includes("\\")) return { value: inner, end: at + 1 };
      if (!JSON_ESCAPES.test(inner)) throw OUTSIDE;
      let value: unknown;
      try {
        value = JSON.parse(`"${inner}"`);
      } catch {
        throw OUTSIDE; // control characters JSON refuses
      }
      if (typeof value !== "string") throw OUTSIDE;
      return { value, end: at + 1 };
    }
  }
  return undefined;
}

/** A table of the ASCII characters in `chars`: 1 for those, 0 for the others. */
function characters(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let index = 0; index < chars.length; index++) table[chars.charCodeAt(index)] = 1;
  return table;
}

/** How many spaces start the text at `start` (before `end`). */
function spacesAt(text: string, start: number, end: number): number {
  let at = start;
  while (at < end && text.charCodeAt(at) === SPACE) at++;
  return at - start;
}
