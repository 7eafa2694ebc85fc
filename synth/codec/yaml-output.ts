import { stringify } from "yaml";

/**
 * Every YAML file metalsynth writes goes through here, so output is byte-stable: no line folding
 * (a long image reference must not wrap differently between versions), two-space indentation,
 * insertion-ordered keys (the code that builds an object decides the order), LF endings.
 *
 * The bytes are those of the `yaml` package's `stringify` with these options. Rendering a large site
 * spent most of its time there (building a node tree per document, decision 0019), so plain JSON data
 * (objects, arrays, strings, finite numbers, booleans, null) is written directly by a port of the
 * library's choices for block collections and scalars; anything else (an undefined, a control
 * character, a keys-kept block scalar, a YAML document marker in a string, a key longer than the
 * library writes implicitly, a non-collection document) goes to the library whole. A test compares
 * both writers on random documents.
 */
export function toYaml(value: unknown): string {
  const fast = blockDocument(value);
  return fast ?? stringify(value, { lineWidth: 0, indent: 2, aliasDuplicateObjects: false });
}

/** A multi-document YAML stream (`---` between documents), ending with a newline. */
export function toYamlStream(values: readonly unknown[]): string {
  return values.map((value) => toYaml(value)).join("---\n");
}

/** Thrown inside the direct writer for a value it leaves to the library; never escapes this module. */
const UNSUPPORTED = Symbol("unsupported");

/** Deeper than this the direct writer gives up (the library reports circular structures itself). */
const MAX_DEPTH = 200;

/** The document as the library would write it, or undefined when the library must write it. */
function blockDocument(value: unknown): string | undefined {
  if (!isCollection(value)) return undefined;
  try {
    return `${collection(value, "", 0)}\n`;
  } catch (error) {
    if (error === UNSUPPORTED) return undefined;
    throw error;
  }
}

function isCollection(value: unknown): value is Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return true;
  if (typeof value !== "object" || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A block collection whose lines after the first start with `indent` (the library's `ctx.indent`);
 * an empty one is written in flow style.
 */
function collection(value: Record<string, unknown> | unknown[], indent: string, depth: number): string {
  if (depth > MAX_DEPTH) throw UNSUPPORTED;
  const inner = `${indent}  `;
  let text = "";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) throw UNSUPPORTED; // a hole, written as null by the library
      text += `${index === 0 ? "" : `\n${indent}`}- ${node(value[index], inner, depth)}`;
    }
    return text;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return "{}";
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    text += `${index === 0 ? "" : `\n${indent}`}${implicitKey(key)}:${pairValue(value[key], inner, depth)}`;
  }
  return text;
}

/** What follows `key:`: a nested non-empty collection on the next line, anything else after a space. */
function pairValue(value: unknown, indent: string, depth: number): string {
  const text = node(value, indent, depth);
  const block = isCollection(value) && text !== "[]" && text !== "{}";
  return block ? `\n${indent}${text}` : ` ${text}`;
}

function node(value: unknown, indent: string, depth: number): string {
  switch (typeof value) {
    case "string":
      return stringValue(value, indent);
    case "number":
      if (!Number.isFinite(value)) throw UNSUPPORTED;
      return Object.is(value, -0) ? "-0" : JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      if (value === null) return "null";
      if (isCollection(value)) return collection(value, indent, depth + 1);
      throw UNSUPPORTED;
    default:
      throw UNSUPPORTED;
  }
}

/**
 * A character the library always writes double-quoted with YAML escapes, which the direct writer
 * leaves to it: a control character other than tab and newline, or a lone surrogate. (Written as what
 * is not one, since a regular expression may not name control characters here.)
 */
const ESCAPED = /[^\t\n\x20-\x7e\u00a0-\u{D7FF}\u{E000}-\u{10FFFF}]/u;
/** Plain scalars the library quotes: an indicator first, `: ` or ` #` inside, a space or `:` last. */
const NOT_PLAIN = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
/**
 * A plain scalar with a line the library takes for a document marker (a JavaScript line, so after a
 * U+2028 too): how it writes one depends on the depth. Multi-line strings are block scalars, where
 * markers only matter at the root.
 */
const DOCUMENT_MARKER = /^(%|---|\.\.\.)/m;
/**
 * Plain scalars that would read back as null, a boolean or a number: the tests of the YAML 1.2 core
 * schema's tags (null, bool, octal, decimal and hex int, special, exponent and plain float) as one.
 */
const NOT_A_STRING =
  /^(?:~|[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))?$/;
/** The longest key the library writes as an implicit key; longer ones get `? `. */
const MAX_IMPLICIT_KEY = 1024;

function implicitKey(key: string): string {
  if (key.includes("\n") || ESCAPED.test(key)) throw UNSUPPORTED;
  const text = plainOrQuoted(key);
  if (text.length > MAX_IMPLICIT_KEY) throw UNSUPPORTED;
  return text;
}

function stringValue(value: string, indent: string): string {
  if (ESCAPED.test(value)) throw UNSUPPORTED;
  return value.includes("\n") ? literalBlock(value, indent) : plainOrQuoted(value);
}

/** A one-line string: plain when it reads back as itself, else quoted the way the library does. */
function plainOrQuoted(value: string): string {
  if (!NOT_PLAIN.test(value) && !NOT_A_STRING.test(value)) {
    if (DOCUMENT_MARKER.test(value)) throw UNSUPPORTED;
    return value;
  }
  // Single quotes only for a string with double quotes and no single ones; JSON's escapes are
  // YAML's for what is left (no control characters reach here).
  if (value.includes('"') && !value.includes("'")) return `'${value}'`;
  return JSON.stringify(value);
}

/**
 * A multi-line string as a literal block scalar (`|`, `|-`, `|+`, with an indentation indicator when
 * it starts with a space), its lines indented by `indent`: the library's `blockString` with no line
 * width. A string whose last line is only blanks is quoted and folded by the library instead.
 */
function literalBlock(text: string, indent: string): string {
  if (/\n[\t ]+$/.test(text)) throw UNSUPPORTED;
  let value = text;
  let endStart = value.length;
  while (endStart > 0 && "\n\t ".includes(value[endStart - 1]!)) endStart--;
  let end = value.substring(endStart);
  const endNewline = end.indexOf("\n");
  const chomp = endNewline === -1 ? "-" : value === end || endNewline !== end.length - 1 ? "+" : "";
  if (end) {
    value = value.slice(0, -end.length);
    if (end.endsWith("\n")) end = end.slice(0, -1);
    end = end.replace(/(^|(?<!\n))\n+(?!\n|$)/g, `$&${indent}`);
  }
  let startsWithSpace = false;
  let startEnd = 0;
  let startNewline = -1;
  for (; startEnd < value.length; startEnd++) {
    const char = value[startEnd];
    if (char === " ") startsWithSpace = true;
    else if (char === "\n") startNewline = startEnd;
    else break;
  }
  let start = value.substring(0, startNewline < startEnd ? startNewline + 1 : startEnd);
  if (start) {
    value = value.substring(start.length);
    start = start.replace(/\n+/g, `$&${indent}`);
  }
  const header = (startsWithSpace ? "2" : "") + chomp;
  return `|${header}\n${indent}${start}${value.replace(/\n+/g, `$&${indent}`)}${end}`;
}
