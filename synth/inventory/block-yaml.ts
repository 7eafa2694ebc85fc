/**
 * A fast reader for the plain block-style YAML that `kubectl get -o yaml` writes: block mappings and
 * sequences (indented or at their key's column), one-line plain, single- and double-quoted scalars,
 * literal block scalars (`|`, `|-`, `|+`), the empty `[]` and `{}`, comments and an opening `---`.
 * Anything else (anchors, aliases, tags, flow collections, folded or multi-line scalars, complex,
 * numeric or duplicate keys, tabs, a second document) makes it give up, and the caller reads the
 * text with the full `yaml` parser, which also reports every error with its line and column.
 *
 * Why it exists: the full parser builds a syntax tree and a document with a source range for every
 * node, about 2 MB/s on a region's snapshot, and SPEC §8 asks 20 MB/s. This reader keeps no positions;
 * a caller that reports a finding in an object parses that object again with the full parser to say
 * where. Plain scalars resolve through the `yaml` package's own core-schema tags, so `true`, `0x1F` or
 * `.inf` mean the same in both; tests compare the two on the example inventories and on generated and
 * random documents.
 */
import { Schema, isScalar, type ScalarTag } from "yaml";
import { detach } from "./raw.ts";

/** The YAML 1.2 core-schema tags a plain scalar can resolve to other than a string, in the parser's order. */
const CORE_TAGS = new Schema({}).tags.filter(
  (tag): tag is ScalarTag => tag.collection === undefined && tag.default === true && tag.test !== undefined,
);
/** Any of their patterns: most plain scalars (names, MACs, addresses) are strings, told in one test. */
const ANY_CORE_TAG = new RegExp(CORE_TAGS.map((tag) => `(?:${tag.test?.source ?? "$^"})`).join("|"));
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
 * spares a copy and a hash for each of them. Module state, but only a cache: the values read never
 * depend on it.
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

const KEYS = new KeyCache();

/** Thrown inside the reader when the text leaves the subset; never escapes {@link readBlockYaml}. */
class OutsideSubset extends Error {}
const OUTSIDE = new OutsideSubset("outside the block-YAML subset");

/** What {@link readBlockYaml} read. */
export interface BlockYaml {
  /** The document's value, as `parseDocument(text, { uniqueKeys: true }).toJS()` gives it. */
  readonly value: Record<string, unknown> | unknown[];
  /** Where the root mapping or sequence starts (1-based), as the full parser places it. */
  readonly line: number;
  readonly column: number;
}

/**
 * The document in `text` when it is one block mapping or sequence in the subset described above,
 * else `undefined`: read it with the full parser.
 */
export function readBlockYaml(text: string): BlockYaml | undefined {
  if (text.includes("\t") || text.includes("\r")) return undefined;
  try {
    return new BlockReader(text).document();
  } catch (error) {
    if (error === OUTSIDE) return undefined;
    throw error;
  }
}

const SPACE = 0x20;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;

/** Reads line by line through offsets into the text, so only keys and values are ever copied. */
class BlockReader {
  readonly #text: string;
  /** Where the last line ends: a final line break ends that line, it doesn't start another. */
  readonly #last: number;
  /** Start of the current line. */
  #start = 0;
  /** End of the current line: its line break, or the end of the text. */
  #end: number;
  /**
   * Indentation of the current line, -1 until measured. An entry `- key: v` sets it to the column of
   * `key`, so the mapping that starts there reads like any other.
   */
  #indent = -1;
  /** 1-based number of the current line. */
  #line = 1;
  /**
   * The first `#` at or after the last one looked for, or the text's length: comments are rare, so one
   * search serves many values.
   */
  #hash = -1;

  constructor(text: string) {
    this.#text = text;
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
    const value = this.#node(indent);
    if (this.#nextContent() >= 0) throw OUTSIDE; // less indented than the root: not ours to judge
    return { value, line, column: indent + 1 };
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

  /** The mapping or sequence whose first line (the current one) is indented by `indent`. */
  #node(indent: number): Record<string, unknown> | unknown[] {
    const at = this.#start + indent;
    if (this.#isSequenceEntry(at)) return this.#sequence(indent);
    if (this.#key(at) !== undefined) return this.#mapping(indent);
    throw OUTSIDE; // a scalar on a line of its own
  }

  #mapping(indent: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    while (this.#nextContent() === indent) {
      const entry = this.#key(this.#start + indent);
      if (entry === undefined) break; // `- ` at the mapping's column: a sequence's parent decides
      const { key, after } = entry;
      if (key === "__proto__" || key === "<<" || Object.hasOwn(map, key)) throw OUTSIDE;
      map[key] = this.#value(after, indent, true);
    }
    return map;
  }

  #sequence(indent: number): unknown[] {
    const list: unknown[] = [];
    while (this.#nextContent() === indent) {
      const dash = this.#start + indent;
      if (!this.#isSequenceEntry(dash)) break;
      const at = spacesAt(this.#text, dash + 1, this.#end) + dash + 1;
      if (this.#isSequenceEntry(at)) throw OUTSIDE; // `- - x`
      if (at < this.#end && this.#text.charCodeAt(at) !== HASH && this.#key(at) !== undefined) {
        // `- key: v`: a mapping at the column of `key`.
        this.#indent = at - this.#start;
        list.push(this.#mapping(this.#indent));
      } else {
        list.push(this.#value(dash + 1, indent, false));
      }
    }
    return list;
  }

  /** Whether a sequence entry's `-` is at `at`. */
  #isSequenceEntry(at: number): boolean {
    return (
      this.#text.charCodeAt(at) === DASH && (at + 1 === this.#end || this.#text.charCodeAt(at + 1) === SPACE)
    );
  }

  /** The key of a mapping entry that starts at `at`, and the offset after its `:`. */
  #key(at: number): { key: string; after: number } | undefined {
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
      const known = KEYS.find(text, at, colon);
      if (known !== undefined) {
        key = known;
      } else {
        key = text.slice(at, colon);
        if (TYPED_KEYS.includes(key)) return undefined;
        KEYS.add(detach(key));
      }
    }
    if (text.charCodeAt(colon) !== COLON || (colon + 1 < end && text.charCodeAt(colon + 1) !== SPACE))
      return undefined;
    return { key, after: colon + 1 };
  }

  /**
   * The value after `key:` or `-`, whose text starts at `from` on the current line: a scalar there,
   * else a more indented node below, or a sequence at the key's own column (`sameColumnSequence`, as
   * kubectl writes lists), or null.
   */
  #value(from: number, indent: number, sameColumnSequence: boolean): unknown {
    const text = this.#text;
    const start = from + spacesAt(text, from, this.#end);
    if (start < this.#end && text.charCodeAt(start) !== HASH) return this.#inlineValue(start, indent);
    this.#next();
    const below = this.#nextContent();
    if (below > indent) return this.#node(below);
    if (below === indent && sameColumnSequence && this.#isSequenceEntry(this.#start + below))
      return this.#sequence(below);
    return null;
  }

  /** A scalar (or `[]`, `{}`) that starts at `start` on the current line. */
  #inlineValue(start: number, indent: number): unknown {
    const text = this.#text;
    const first = text[start];
    let value: unknown;
    if (first === "|") return this.#literal(start, indent);
    if (first === '"' || first === "'") {
      const quoted = quotedScalar(text, start, this.#end);
      if (quoted === undefined || this.#commentFrom(quoted.end) !== quoted.end) throw OUTSIDE;
      value = quoted.value;
    } else {
      value = plainScalar(text.slice(start, this.#commentFrom(start)));
    }
    this.#next();
    // A more indented line after a scalar continues it (a multi-line scalar) or is an error.
    if (this.#nextContent() > indent) throw OUTSIDE;
    return value;
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
  if (!ANY_CORE_TAG.test(text)) return text;
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
