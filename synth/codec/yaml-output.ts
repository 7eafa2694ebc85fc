import {
  Schema,
  stringify,
  type CreateNodeOptions,
  type ScalarTag,
  type SchemaOptions,
  type ToStringOptions,
} from "yaml";

/**
 * Plain scalars a YAML 1.1 reader takes for something other than a string, beyond the YAML 1.2 core
 * schema's (which the library quotes anyway): the `yaml` package's own YAML 1.1 tags (`yes`, `on`,
 * `n`, `0b101`, `017`, `1_000`, `190:20:30`, `2001-12-14`, `<<`, …), then what go-yaml resolves on
 * top of them. kubectl, Flux, Argo CD and Helm read manifests with go-yaml (sigs.k8s.io/yaml), which
 * drops every `_` of a plain scalar that starts with a digit or a sign and then asks Go's
 * `strconv.ParseInt` with base 0 (so `0o17`, `0X1F`, `-0B1`, `+_1` are integers) and its float
 * grammar (`1_000.5`, `.5_0`); `=` is YAML 1.1's value key. Generous on purpose (decision 0053): a
 * string quoted that needed no quotes costs two characters, one left plain can cost a cluster
 * directory (`kubectl apply` refuses `labels: {a: yes}`).
 */
const YAML_1_1_TAGS = new Schema({ schema: "yaml-1.1" }).tags.filter(
  (tag): tag is ScalarTag => tag.collection === undefined && Boolean(tag.default) && tag.test !== undefined,
);
const GO_YAML_TYPED =
  /^[-+]?_*(?:0_*[xX][_0-9a-fA-F]*|0_*[oObB][_0-9]*|(?:[0-9][_0-9]*(?:\.[_0-9]*)?|\.[_0-9]*[0-9][_0-9]*)(?:[eE]_*[-+]?[_0-9]*[0-9][_0-9]*)?)$|^=$/;
/** Any of the above, as one pattern: what the direct writer and the library (as `compat`) both quote. */
const YAML_1_1_TYPED = new RegExp(
  [...YAML_1_1_TAGS.map((tag) => tag.test?.source ?? "$^"), GO_YAML_TYPED.source]
    .map((source) => `(?:${source})`)
    .join("|"),
);
/**
 * The library's side of {@link YAML_1_1_TYPED}: a tag it never writes, only consults when it decides
 * whether a string may be written plain.
 */
const YAML_1_1_STRINGS: ScalarTag = {
  tag: "tag:metalsynth.io,2025:yaml-1.1-typed",
  default: true,
  test: YAML_1_1_TYPED,
  resolve: (text) => text,
};

/**
 * Characters YAML 1.1 readers take for line breaks (NEL, LS, PS: libyaml, and so go-yaml, ends a plain
 * scalar there and folds them in quoted ones) or refuse outright (U+FFFE, U+FFFF), where YAML 1.2
 * reads them as text; the library writes them raw, even in double quotes.
 */
const YAML_1_1_BREAK = /[\u0085\u2028\u2029\uFFFE\uFFFF]/;
const YAML_1_1_BREAKS = new RegExp(YAML_1_1_BREAK.source, "g");
/** Blank lines only (`" \n"`): the library's literal block loses their spaces, in every reader. */
const BLANK_LINES = /^[\t\n ]*\n[\t\n ]*$/;

/** Whether `value` must be written as {@link escapedString} (both writers ask this first). */
function needsEscapes(value: string): boolean {
  return YAML_1_1_BREAK.test(value) || (BLANK_LINES.test(value) && /[\t ]/.test(value));
}

/**
 * `value` double-quoted with JSON's escapes, which are YAML's in 1.1 and 1.2, and `\u` escapes for the
 * YAML 1.1 breaks: one line that every reader reads as `value`.
 */
function escapedString(value: string): string {
  return JSON.stringify(value).replace(
    YAML_1_1_BREAKS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The library's string tag, with {@link escapedString} for the strings it would write unsafely. */
const STRING = escapingStringTag();

function escapingStringTag(): { readonly core: ScalarTag; readonly escaping: ScalarTag } {
  const core = new Schema({}).tags.find(
    (tag): tag is ScalarTag => tag.tag === "tag:yaml.org,2002:str" && tag.collection === undefined,
  );
  const write = core?.stringify;
  if (core === undefined || write === undefined) throw new Error("the yaml package has no string tag");
  return {
    core,
    escaping: {
      ...core,
      stringify: (item, ctx, onComment, onChompKeep) =>
        typeof item.value === "string" && needsEscapes(item.value)
          ? escapedString(item.value)
          : write(item, ctx, onComment, onChompKeep),
    },
  };
}

/** The library's options for what metalsynth writes; the direct writer below produces the same bytes. */
export const LIBRARY_OPTIONS = {
  lineWidth: 0,
  indent: 2,
  aliasDuplicateObjects: false,
  compat: [YAML_1_1_STRINGS],
  customTags: (tags) => tags.map((tag) => (tag === STRING.core ? STRING.escaping : tag)),
} satisfies CreateNodeOptions & SchemaOptions & ToStringOptions;

/**
 * Every YAML file metalsynth writes goes through here, so output is byte-stable: no line folding
 * (a long image reference must not wrap differently between versions), two-space indentation,
 * insertion-ordered keys (the code that builds an object decides the order), LF endings. A string
 * is written plain only when YAML 1.1 and 1.2 readers alike read it back as that string
 * ({@link YAML_1_1_TYPED}; docs/contract.md §4): `kubectl apply` must see the labels synth wrote.
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
  return fast ?? stringify(value, LIBRARY_OPTIONS);
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

/**
 * Written forms of short one-line strings, by the string, as keys and as values: a render writes the
 * same label keys, names and images thousands of times, and working out each one's form takes up to
 * seven regular expressions (decision 0057). Bounded: emptied when full.
 */
const WRITTEN_KEYS = new Map<string, string>();
const WRITTEN_SCALARS = new Map<string, string>();
const REMEMBERED = 20_000;
const REMEMBERED_LENGTH = 200;

function remember(written: Map<string, string>, value: string, text: string): string {
  if (value.length <= REMEMBERED_LENGTH) {
    if (written.size >= REMEMBERED) written.clear();
    written.set(value, text);
  }
  return text;
}

function implicitKey(key: string): string {
  return WRITTEN_KEYS.get(key) ?? remember(WRITTEN_KEYS, key, keyText(key));
}

function keyText(key: string): string {
  if (needsEscapes(key)) {
    const text = escapedString(key);
    if (text.length > MAX_IMPLICIT_KEY) throw UNSUPPORTED;
    return text;
  }
  if (key.includes("\n") || ESCAPED.test(key)) throw UNSUPPORTED;
  const text = plainOrQuoted(key);
  if (text.length > MAX_IMPLICIT_KEY) throw UNSUPPORTED;
  return text;
}

function stringValue(value: string, indent: string): string {
  const written = WRITTEN_SCALARS.get(value);
  if (written !== undefined) return written;
  // A one-line string is written the same at any indentation.
  const text = scalarText(value, indent);
  return value.includes("\n") ? text : remember(WRITTEN_SCALARS, value, text);
}

function scalarText(value: string, indent: string): string {
  if (needsEscapes(value)) return escapedString(value);
  if (ESCAPED.test(value)) throw UNSUPPORTED;
  return value.includes("\n") ? literalBlock(value, indent) : plainOrQuoted(value);
}

/** A one-line string: plain when it reads back as itself, else quoted the way the library does. */
function plainOrQuoted(value: string): string {
  if (!NOT_PLAIN.test(value) && !NOT_A_STRING.test(value) && !YAML_1_1_TYPED.test(value)) {
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
