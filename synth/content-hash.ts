import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every level, so two values that are equal as data hash the same
 * whatever order their keys were built in. Keys sort by UTF-16 code units (`Array.prototype.sort`),
 * never by locale, so the order is the same on every machine. Otherwise it follows `JSON.stringify`:
 * `undefined` properties are dropped, `undefined` array items become `null`, `toJSON` is honoured.
 */
export function canonicalJson(value: unknown): string {
  const prepared = toJsonValue(value);
  if (prepared === undefined) throw new TypeError(`canonicalJson: ${typeof value} has no JSON form`);
  try {
    return JSON.stringify(sortedCopy(prepared));
  } catch (error) {
    if (error !== INDEX_KEY) throw error;
    return canonicalText(prepared);
  }
}

/** Thrown by {@link sortedCopy} at a key an object would list before the others. */
const INDEX_KEY = Symbol("index key");
/**
 * Keys JavaScript lists first, in numeric order, whatever order they were added in: array indices,
 * up to 2^32 - 2 (longer numbers are taken too; canonicalText writes them as well).
 */
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;

/**
 * A prepared value with every object's keys in code-unit order and every member {@link toJsonValue}
 * prepared, for `JSON.stringify` to write in one native pass (half the time of {@link canonicalText},
 * which it writes byte for byte). An object with an array-index key can't hold its keys in that
 * order, so it is left to canonicalText.
 */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    return value.map((item: unknown) => {
      const prepared = toJsonValue(item);
      return prepared === undefined ? null : sortedCopy(prepared);
    });
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (ARRAY_INDEX.test(key)) throw INDEX_KEY;
    const member = toJsonValue(Reflect.get(value, key));
    if (member === undefined) continue;
    // Assigned, an own "__proto__" key (JSON.parse and YAML make one) would set the copy's
    // prototype and vanish from the text: two different values would hash the same.
    if (key === "__proto__")
      Object.defineProperty(copy, key, { value: sortedCopy(member), enumerable: true, writable: true });
    else copy[key] = sortedCopy(member);
  }
  return copy;
}

/**
 * The canonical JSON of a value {@link toJsonValue} has prepared, written in one pass: it names every
 * Job a render writes (`hash8`) and each cluster directory's inputs, so it was a tenth of a large
 * site's render when it built and joined a list per object (decision 0057). For values with
 * array-index keys; the others go through {@link sortedCopy}.
 */
function canonicalText(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = "[";
    for (let index = 0; index < value.length; index++) {
      const item = toJsonValue(value[index]);
      text += `${index === 0 ? "" : ","}${item === undefined ? "null" : canonicalText(item)}`;
    }
    return `${text}]`;
  }
  const keys = Object.keys(value).sort();
  let text = "{";
  for (const key of keys) {
    const member = toJsonValue(Reflect.get(value, key));
    if (member === undefined) continue;
    text += `${text.length === 1 ? "" : ","}${JSON.stringify(key)}:${canonicalText(member)}`;
  }
  return `${text}}`;
}

/**
 * The first 8 hex digits of the SHA-256 of {@link canonicalJson}: a short, stable content hash for
 * object names that must change whenever what they run with changes (Jobs are immutable).
 */
export function hash8(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 8);
}

/** The value `JSON.stringify` would serialise (after `toJSON`), or `undefined` for what it drops. */
function toJsonValue(value: unknown): unknown {
  if (typeof value === "bigint") throw new TypeError("canonicalJson: BigInt has no JSON form");
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return undefined;
  if (value !== null && typeof value === "object") {
    const toJSON: unknown = Reflect.get(value, "toJSON");
    if (typeof toJSON === "function") return toJsonValue(Reflect.apply(toJSON, value, []));
  }
  return value;
}
