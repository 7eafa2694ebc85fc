/**
 * Splits a large JSON snapshot (`kubectl get bmh -A -o json`: one `List` whose `items` hold every
 * host) into one text chunk per item, reading the bytes as they stream in, so memory holds one item
 * at a time instead of the whole file and its parse tree.
 *
 * This is a splitter, not a parser: it tracks strings, nesting and line/column, and cuts at item
 * boundaries; each chunk is then parsed with `JSON.parse`. That is several times faster than a
 * token-level streaming parser (stream-json builds every value token by token) and, unlike one, gives
 * each item its own line and column for messages.
 */
import { MAX_DOCUMENT_TEXT_BYTES, tooLarge } from "../documents.ts";
import { issue, type Issue } from "../issue.ts";
import type { TextChunk } from "./chunks.ts";

/** What the splitter finds, in file order. */
export interface JsonSplitEvents {
  /** One element of a top-level object's `items` array. */
  item(chunk: TextChunk): void;
  /**
   * One top-level value. When it had an `items` array (a list), that array reads `null` here and the
   * items have already been delivered through {@link item}.
   */
  root(chunk: TextChunk, hadItems: boolean): void;
  /** A string field of the top-level object (`kind`, `apiVersion`), as soon as it has been read. */
  rootString(key: string, value: string): void;
  /** A `yaml-syntax` or `too-large` problem. Splitting stops after a syntax error. */
  issue(found: Issue): void;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const NEWLINE = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
const RETURN = 0x0d;
/** Lines of items replaced by `null` in a list's root chunk are kept as blank lines, up to this many. */
const MAX_PADDING_LINES = 100_000;
const MAX_KEY_BYTES = 4096;
const NULL_TEXT = new TextEncoder().encode("null");

/** Collects the bytes of one region of the input across chunks, up to a limit. */
class Recorder {
  #pieces: Uint8Array[] = [];
  #start = -1;
  size = 0;
  overflow = false;
  constructor(private readonly max: number) {}

  begin(index: number): void {
    this.#pieces = [];
    this.#start = index;
    this.size = 0;
    this.overflow = false;
  }
  get active(): boolean {
    return this.#start >= 0;
  }
  pause(bytes: Uint8Array, end: number): void {
    this.#take(bytes, this.#start, end);
    this.#start = -1;
  }
  resume(index: number): void {
    this.#start = index;
  }
  append(extra: Uint8Array): void {
    this.#take(extra, 0, extra.length);
  }
  /** Keeps the active region's bytes before `bytes` is reused or dropped. */
  chunkEnd(bytes: Uint8Array): void {
    if (this.#start < 0) return;
    this.#take(bytes, this.#start, bytes.length);
    this.#start = 0;
  }
  /** Ends the region at `end` (exclusive); the text, or `undefined` after an overflow. */
  finish(bytes: Uint8Array, end: number, decode: (bytes: Uint8Array) => string): string | undefined {
    const start = this.#start;
    this.#start = -1;
    if (this.#pieces.length === 0 && !this.overflow) {
      this.size = end - start;
      if (this.size > this.max) {
        this.overflow = true;
        return undefined;
      }
      return decode(bytes.subarray(start, end));
    }
    this.#take(bytes, start, end);
    if (this.overflow) return undefined;
    const joined = new Uint8Array(this.size);
    let offset = 0;
    for (const piece of this.#pieces) {
      joined.set(piece, offset);
      offset += piece.length;
    }
    this.#pieces = [];
    return decode(joined);
  }

  #take(bytes: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    this.size += to - from;
    if (this.overflow) return;
    if (this.size > this.max) {
      // Stop buffering but keep counting, so the message can say how big the thing was.
      this.overflow = true;
      this.#pieces = [];
      return;
    }
    // A copy: a stream may reuse its buffer, and a view would pin a whole 1 MiB chunk for a few bytes.
    this.#pieces.push(bytes.slice(from, to));
  }
}

/** Push-based splitter for one JSON file: call {@link write} with each chunk of bytes, then {@link end}. */
export class JsonSplitter {
  readonly #file: string;
  readonly #events: JsonSplitEvents;
  readonly #decoder = new TextDecoder("utf-8");
  readonly #decode = (bytes: Uint8Array): string => this.#decoder.decode(bytes);
  /** Open brackets, innermost last. */
  readonly #stack: number[] = [];
  #inString = false;
  #escaped = false;
  #line = 1;
  #column = 1;
  #failed = false;
  #atStart = true;
  /**
   * Colons outside strings so far: one per object key. `JSON.parse` keeps the last of two equal keys
   * silently, so each chunk carries its count and the parser compares (see `TextChunk.keys`).
   */
  #colons = 0;

  // The current top-level value.
  readonly #root = new Recorder(MAX_DOCUMENT_TEXT_BYTES);
  #rootLine = 0;
  #rootColumn = 0;
  #rootIsObject = false;
  #rootHadItems = false;
  #rootColonsStart = 0;
  /** Colons inside the items of the current top-level value: the root chunk has `null` there. */
  #rootItemColons = 0;
  /** Inside the top-level object: the next string is a key. */
  #keyExpected = false;
  #lastKey: string | undefined;
  readonly #stringCapture = new Recorder(MAX_KEY_BYTES);
  #capturing: "key" | "value" | undefined;

  // The `items` array of the top-level object.
  #inItems = false;
  #itemsLine = 0;
  readonly #item = new Recorder(MAX_DOCUMENT_TEXT_BYTES);
  #itemLine = 0;
  #itemColumn = 0;
  #itemIsContainer = false;
  #itemColonsStart = 0;
  #afterItem = false;

  /** @param file the file name issues carry. */
  constructor(file: string, events: JsonSplitEvents) {
    this.#file = file;
    this.#events = events;
  }

  /** Feeds the next bytes of the file. */
  write(bytes: Uint8Array): void {
    if (this.#failed) return;
    let index = 0;
    if (this.#atStart) {
      this.#atStart = false;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) index = 3; // UTF-8 byte order mark
    }
    const length = bytes.length;
    for (; index < length; index++) {
      let byte = bytes[index] ?? 0;
      // Fast paths for most of a kubectl dump: inside a string only a quote, a backslash, a newline or
      // a NUL matters, and outside one a run of indentation only moves the column.
      if (this.#inString && !this.#escaped) {
        let column = this.#column;
        while (byte !== QUOTE && byte !== BACKSLASH && byte !== NEWLINE && byte !== 0) {
          if ((byte & 0xc0) !== 0x80) column++;
          if (++index === length) break;
          byte = bytes[index] ?? 0;
        }
        this.#column = column;
        if (index === length) break;
      } else if (byte === SPACE && !this.#inString) {
        let column = this.#column;
        while (byte === SPACE) {
          column++;
          if (++index === length) break;
          byte = bytes[index] ?? 0;
        }
        this.#column = column;
        if (index === length) break;
      }
      if (byte === 0) {
        this.#fail("file is binary, not YAML or JSON text");
        return;
      }
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) {
          this.#inString = false;
          if (this.#capturing !== undefined) this.#endCapture(bytes, index);
        } else if (byte === NEWLINE) {
          // Invalid in JSON; JSON.parse will say so. Keep the line count right for later messages.
          this.#line++;
          this.#column = 0;
        }
      } else if (byte === NEWLINE) {
        this.#line++;
        this.#column = 0;
      } else if (byte !== SPACE && byte !== TAB && byte !== RETURN) {
        this.#significant(bytes, index, byte);
        if (this.#failed) return;
      }
      // Count characters, not bytes: UTF-8 continuation bytes don't start a new column.
      if ((byte & 0xc0) !== 0x80) this.#column++;
    }
    this.#root.chunkEnd(bytes);
    this.#item.chunkEnd(bytes);
    this.#stringCapture.chunkEnd(bytes);
  }

  /** Ends the input; an unclosed value is reported where the file stops. */
  end(): void {
    if (this.#failed) return;
    if (this.#inString || this.#stack.length > 0) {
      this.#fail(`unexpected end of file: ${this.#inString ? "unterminated string" : "unclosed { or ["}`);
    }
  }

  #significant(bytes: Uint8Array, index: number, byte: number): void {
    const depth = this.#stack.length;
    if (depth === 0) {
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        this.#startRoot(index, byte);
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET || byte === COMMA || byte === COLON) {
        this.#fail(`unexpected '${String.fromCharCode(byte)}'`);
        return;
      }
      // Anything else starts a scalar top-level value: not an inventory object, skipped like the
      // loader skips a document that is just `42`.
    }
    if (this.#inItems && depth === 2) {
      if (this.#afterItem) {
        if (byte === COMMA) {
          this.#afterItem = false;
          return;
        }
        if (byte !== CLOSE_BRACKET) {
          this.#fail("expected ',' or ']' after an item of items");
          return;
        }
        this.#afterItem = false;
      } else if (!this.#item.active && byte !== COMMA && byte !== CLOSE_BRACKET) {
        this.#item.begin(index);
        this.#itemLine = this.#line;
        this.#itemColumn = this.#column;
        this.#itemIsContainer = byte === OPEN_BRACE || byte === OPEN_BRACKET;
        this.#itemColonsStart = this.#colons;
      } else if (this.#item.active && !this.#itemIsContainer && (byte === COMMA || byte === CLOSE_BRACKET)) {
        this.#endItem(bytes, index); // a scalar item ends at its separator
      }
    }
    switch (byte) {
      case QUOTE:
        this.#inString = true;
        if (depth === 1 && this.#rootIsObject && (this.#keyExpected || isRootStringKey(this.#lastKey))) {
          this.#capturing = this.#keyExpected ? "key" : "value";
          this.#stringCapture.begin(index);
        }
        return;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (depth === 1 && this.#rootIsObject && byte === OPEN_BRACKET && this.#lastKey === "items") {
          // The list's items are delivered one by one; the root chunk keeps `null` in their place.
          this.#root.pause(bytes, index);
          this.#root.append(NULL_TEXT);
          this.#inItems = true;
          this.#rootHadItems = true;
          this.#itemsLine = this.#line;
        }
        this.#stack.push(byte);
        return;
      case CLOSE_BRACE:
      case CLOSE_BRACKET: {
        const open = this.#stack.pop();
        if (open === undefined || (open === OPEN_BRACE) !== (byte === CLOSE_BRACE)) {
          this.#fail(`unexpected '${String.fromCharCode(byte)}'`);
          return;
        }
        const outer = depth - 1;
        if (this.#inItems && outer === 2 && this.#item.active) {
          this.#endItem(bytes, index + 1);
          this.#afterItem = true;
        } else if (this.#inItems && outer === 1) {
          this.#inItems = false;
          this.#afterItem = false;
          const lines = Math.min(this.#line - this.#itemsLine, MAX_PADDING_LINES);
          if (lines > 0) this.#root.append(new TextEncoder().encode("\n".repeat(lines)));
          this.#root.resume(index + 1);
        } else if (outer === 0) {
          this.#endRoot(bytes, index + 1);
        }
        return;
      }
      case COMMA:
        if (depth === 1 && this.#rootIsObject) this.#keyExpected = true;
        return;
      case COLON:
        this.#colons++;
        if (depth === 1 && this.#rootIsObject) this.#keyExpected = false;
        return;
    }
  }

  #startRoot(index: number, byte: number): void {
    this.#root.begin(index);
    this.#rootLine = this.#line;
    this.#rootColumn = this.#column;
    this.#rootIsObject = byte === OPEN_BRACE;
    this.#rootHadItems = false;
    this.#rootColonsStart = this.#colons;
    this.#rootItemColons = 0;
    this.#keyExpected = this.#rootIsObject;
    this.#lastKey = undefined;
  }

  #endRoot(bytes: Uint8Array, end: number): void {
    const text = this.#root.finish(bytes, end, this.#decode);
    if (text === undefined) {
      const source = { file: this.#file, line: this.#rootLine, column: this.#rootColumn };
      this.#events.issue(tooLarge(this.#root.size, source));
    } else {
      const keys = this.#colons - this.#rootColonsStart - this.#rootItemColons;
      this.#events.root({ text, line: this.#rootLine, column: this.#rootColumn, keys }, this.#rootHadItems);
    }
  }

  #endItem(bytes: Uint8Array, end: number): void {
    const keys = this.#colons - this.#itemColonsStart;
    this.#rootItemColons += keys;
    const text = this.#item.finish(bytes, end, this.#decode);
    if (text === undefined) {
      const source = { file: this.#file, line: this.#itemLine, column: this.#itemColumn };
      this.#events.issue(tooLarge(this.#item.size, source));
    } else {
      this.#events.item({ text: text.trimEnd(), line: this.#itemLine, column: this.#itemColumn, keys });
    }
  }

  #endCapture(bytes: Uint8Array, index: number): void {
    const kind = this.#capturing;
    this.#capturing = undefined;
    const text = this.#stringCapture.finish(bytes, index + 1, this.#decode);
    let value: unknown;
    try {
      value = text === undefined ? undefined : JSON.parse(text);
    } catch {
      value = undefined; // the root chunk's own parse reports it
    }
    if (typeof value !== "string") return;
    if (kind === "key") this.#lastKey = value;
    else if (this.#lastKey !== undefined) this.#events.rootString(this.#lastKey, value);
  }

  #fail(message: string): void {
    this.#failed = true;
    this.#events.issue(
      issue("yaml-syntax", "", message, {
        source: { file: this.#file, line: this.#line, column: this.#column },
      }),
    );
  }
}

function isRootStringKey(key: string | undefined): boolean {
  return key === "kind" || key === "apiVersion";
}
