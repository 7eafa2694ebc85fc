/**
 * Splits a large YAML snapshot into chunks a YAML parser can read one at a time: documents at `---`,
 * and a list document (`kubectl get bmh -A -o yaml`) further into its `items` entries, so memory holds
 * one host's text and parse tree at a time instead of the whole file's.
 *
 * The cut is line-based and relies on how block YAML is indented: `items:` at column 0 of a document
 * whose root is a block mapping, then a block sequence (`- ` at some indentation; kubectl prints it at
 * column 0). Each entry becomes a chunk by turning its `-` into a space, which keeps every column where
 * it was. Any other shape (flow style, a root that isn't a mapping, `items:` holding a mapping) is read
 * as one whole document, the way small files are.
 */
import { MAX_DOCUMENT_TEXT_BYTES, tooLarge } from "../documents.ts";
import { issue, type Issue } from "../issue.ts";
import type { TextChunk } from "./chunks.ts";

/** What the splitter finds, in file order. */
export interface YamlSplitEvents {
  /**
   * A piece of the current document outside any list items: the whole document when it is not split,
   * else the parts before and after `items` (`partOfList` true), which carry the list's kind.
   */
  segment(chunk: TextChunk, partOfList: boolean): void;
  /** One entry of a list document's `items`, as a mapping at the entry's own columns. */
  item(chunk: TextChunk): void;
  /** The current document is complete. */
  documentEnd(): void;
  /** A `yaml-syntax` or `too-large` problem. Splitting stops after a syntax error. */
  issue(found: Issue): void;
}

/** A run of consecutive lines, buffered up to the object size limit. */
interface LineRun {
  readonly line: number;
  lines: string[];
  chars: number;
}

const ITEMS_KEY = /^items:[ \t]*(#.*)?$/;
/** A plain mapping key at column 0: the document's root is a block mapping. */
const PLAIN_KEY = /^[A-Za-z0-9_][^:#]*:([ \t]|$)/;
const SEQUENCE_ENTRY = /^( *)-( |$)/;
const BLANK_OR_COMMENT = /^[ \t]*(#.*)?$/;
const LIST_HINT =
  "; a list is read item by item only when its items are a block sequence under `items:` at column 0, " +
  "as `kubectl get -o yaml` prints them";

/** Push-based splitter for one YAML file: call {@link write} with each piece of text, then {@link end}. */
export class YamlSplitter {
  readonly #file: string;
  readonly #events: YamlSplitEvents;
  #partial = "";
  #lineNumber = 0;
  #failed = false;

  // The current document.
  #mode: "header" | "items-key" | "items" = "header";
  #hasContent = false;
  #blockRoot = false;
  #partOfList = false;
  #hint = "";
  #header: LineRun | undefined;
  /** The `items:` line and the blank lines after it, until the next line shows what follows. */
  #itemsKey: LineRun | undefined;
  #itemIndent = 0;
  /** Finds the next line that may end the current item: one indented no deeper than its `-`. */
  #itemEnd = /\n(?=[^ \n])/g;
  #item: LineRun | undefined;

  /** @param file the file name issues carry. */
  constructor(file: string, events: YamlSplitEvents) {
    this.#file = file;
    this.#events = events;
  }

  /** Feeds the next piece of the file's text. */
  write(text: string): void {
    if (this.#failed) return;
    const buffer = this.#partial + text;
    // Inside an item, runs of lines are taken whole: they are most of a region's List, and looking
    // at each of them costs nearly as much as parsing them. Text that needs a look at each line
    // (binary content, CR line ends) goes line by line.
    const runs = !buffer.includes("\u0000") && !buffer.includes("\uFFFD") && !buffer.includes("\r");
    const lastBreak = buffer.lastIndexOf("\n");
    let start = 0;
    for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n", start)) {
      this.#onLine(buffer.slice(start, end));
      start = end + 1;
      if (this.#failed) return;
      if (runs && this.#mode === "items") start = this.#takeItemLines(buffer, start, lastBreak);
    }
    this.#partial = buffer.slice(start);
  }

  /**
   * Appends to the current item the complete lines (up to `lastBreak`) from `start` that can't end
   * it (more indented than its `-`, or blank) and returns where the first other line starts.
   */
  #takeItemLines(buffer: string, start: number, lastBreak: number): number {
    const itemEnd = this.#itemEnd;
    itemEnd.lastIndex = start - 1;
    const next = itemEnd.exec(buffer);
    const end = next === null || next.index > lastBreak ? lastBreak : next.index;
    if (end < start) return start;
    const run = buffer.slice(start, end);
    this.#appendTo(this.#item, run);
    for (let at = run.indexOf("\n"); at >= 0; at = run.indexOf("\n", at + 1)) this.#lineNumber++;
    this.#lineNumber++;
    return end + 1;
  }

  /** Ends the input. */
  end(): void {
    if (this.#failed) return;
    if (this.#partial !== "") this.#onLine(this.#partial);
    this.#partial = "";
    if (!this.#failed) this.#endDocument();
  }

  #onLine(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    this.#lineNumber++;
    if (line.includes("\u0000") || line.includes("\uFFFD")) {
      this.#failed = true;
      const source = { file: this.#file, line: this.#lineNumber, column: 1 };
      this.#events.issue(issue("yaml-syntax", "", "file is binary, not YAML or JSON text", { source }));
      return;
    }
    if (isMarker(line, "---")) {
      // Directives (`%YAML`) and comments before the first `---` belong to the document it opens.
      if (this.#hasContent) this.#endDocument();
      const rest = line.slice(3).trim();
      if (rest !== "" && !rest.startsWith("#")) {
        this.#hasContent = true; // `--- !tag` or `--- {…}`: not a block mapping root, read whole
        this.#blockRoot = false;
        this.#hint = LIST_HINT;
      }
      this.#appendHeader(line);
      return;
    }
    if (isMarker(line, "...")) {
      this.#endDocument();
      return;
    }
    if (this.#mode === "items") this.#onItemLine(line);
    else if (this.#mode === "items-key") this.#onItemsKeyLine(line);
    else this.#onHeaderLine(line);
  }

  #onHeaderLine(line: string): void {
    const significant = !BLANK_OR_COMMENT.test(line) && !(line.startsWith("%") && !this.#hasContent);
    if (significant && !this.#hasContent) {
      this.#hasContent = true;
      this.#blockRoot = PLAIN_KEY.test(line);
      if (!this.#blockRoot) this.#hint = LIST_HINT;
    }
    if (significant && this.#blockRoot && ITEMS_KEY.test(line)) {
      this.#mode = "items-key";
      this.#itemsKey = { line: this.#lineNumber, lines: [line], chars: line.length + 1 };
      return;
    }
    this.#appendHeader(line);
  }

  #onItemsKeyLine(line: string): void {
    const itemsKey = this.#itemsKey;
    if (BLANK_OR_COMMENT.test(line) && itemsKey) {
      itemsKey.lines.push(line);
      return;
    }
    const entry = SEQUENCE_ENTRY.exec(line);
    if (entry) {
      this.#partOfList = true;
      this.#closeHeader();
      this.#itemsKey = undefined;
      this.#mode = "items";
      this.#itemIndent = entry[1]?.length ?? 0;
      this.#itemEnd = new RegExp(`\\n(?= {0,${this.#itemIndent}}[^ \\n])`, "g");
      this.#startItem(line);
      return;
    }
    // `items:` holding null, a mapping or anything else: the lines stay in the document, read whole.
    this.#restoreItemsKey();
    this.#hint = LIST_HINT;
    this.#onHeaderLine(line);
  }

  #onItemLine(line: string): void {
    const indent = leadingSpaces(line);
    if (indent > this.#itemIndent || BLANK_OR_COMMENT.test(line)) {
      this.#appendTo(this.#item, line);
    } else if (indent === this.#itemIndent && SEQUENCE_ENTRY.test(line.slice(indent))) {
      this.#flushItem();
      this.#startItem(line);
    } else {
      // Back at the list's own level (`kind: List`, `metadata:`): the rest of the header.
      this.#flushItem();
      this.#mode = "header";
      this.#onHeaderLine(line);
    }
  }

  #startItem(line: string): void {
    const indent = this.#itemIndent;
    // `- key: v` → `  key: v`: a mapping at the entry's columns, so positions need no mapping.
    const mapping = `${line.slice(0, indent)} ${line.slice(indent + 1)}`;
    this.#item = { line: this.#lineNumber, lines: [mapping], chars: mapping.length + 1 };
  }

  #flushItem(): void {
    const item = this.#item;
    this.#item = undefined;
    if (!item) return;
    if (item.chars > MAX_DOCUMENT_TEXT_BYTES) {
      this.#events.issue(tooLarge(item.chars, { file: this.#file, line: item.line, column: 1 }));
    } else {
      this.#events.item({ text: item.lines.join("\n"), line: item.line, column: 1 });
    }
  }

  #appendHeader(line: string): void {
    this.#header ??= { line: this.#lineNumber, lines: [], chars: 0 };
    this.#appendTo(this.#header, line);
  }

  #appendTo(run: LineRun | undefined, line: string): void {
    if (!run) return;
    run.chars += line.length + 1;
    // Past the limit only the count is kept, for the message; the text would be refused anyway. The
    // limit is on text; the object's own size is measured once it is parsed (comments don't count).
    if (run.chars > MAX_DOCUMENT_TEXT_BYTES) run.lines = [];
    else run.lines.push(line);
  }

  #restoreItemsKey(): void {
    const itemsKey = this.#itemsKey;
    this.#itemsKey = undefined;
    this.#mode = "header";
    if (!itemsKey) return;
    if (!this.#header) {
      this.#header = { line: itemsKey.line, lines: [], chars: 0 };
    }
    for (const line of itemsKey.lines) this.#appendTo(this.#header, line);
  }

  #closeHeader(): void {
    const header = this.#header;
    this.#header = undefined;
    if (!header || !this.#hasContent) return;
    if (header.chars > MAX_DOCUMENT_TEXT_BYTES) {
      this.#events.issue(
        tooLarge(header.chars, { file: this.#file, line: header.line, column: 1 }, this.#hint),
      );
    } else {
      this.#events.segment({ text: header.lines.join("\n"), line: header.line, column: 1 }, this.#partOfList);
    }
  }

  #endDocument(): void {
    if (this.#mode === "items-key") this.#restoreItemsKey();
    this.#flushItem();
    this.#closeHeader();
    if (this.#hasContent) this.#events.documentEnd();
    this.#mode = "header";
    this.#hasContent = false;
    this.#blockRoot = false;
    this.#partOfList = false;
    this.#hint = "";
  }
}

function isMarker(line: string, marker: "---" | "..."): boolean {
  return line.startsWith(marker) && (line.length === 3 || line[3] === " " || line[3] === "\t");
}

function leadingSpaces(line: string): number {
  let count = 0;
  while (line.charCodeAt(count) === 0x20) count++;
  return count;
}
