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
  return canonicalText(prepared);
}

/**
 * The canonical JSON of a value {@link toJsonValue} has prepared, written in one pass: it names every
 * Job a render writes (`hash8`) and each cluster directory's inputs, so it was a tenth of a large
 * site's render when it built and joined a list per object (decision 0057).
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
