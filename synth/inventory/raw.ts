/**
 * Narrowing helpers for raw inventory objects. Snapshots are untrusted input (hand-edited YAML, dumps
 * from other tools), so every field is checked before use instead of being cast.
 */
import { detach } from "../detach.ts";

/** The namespace of an object written without one, as `kubectl apply` would place it. */
export const DEFAULT_NAMESPACE = "default";

/** A plain object from parsed YAML/JSON. */
export type RawObject = Readonly<Record<string, unknown>>;

/** True for a plain (non-array, non-null) object. */
export function isRecord(value: unknown): value is RawObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value[key]` when `value` is an object, else `undefined`. */
export function field(value: unknown, key: string): unknown {
  return isRecord(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

/** `value[key]` when it is a string, else `undefined`. */
export function stringField(value: unknown, key: string): string | undefined {
  const found = field(value, key);
  return typeof found === "string" ? found : undefined;
}

/** A short, safe rendering of a raw value for messages: `"abc"`, `42`, `null`, `a list`, `a map`. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  // YAML's `!!binary` and `!!timestamp` tags parse to these objects, which are no map to the writer.
  if (ArrayBuffer.isView(value)) return "binary data (!!binary)";
  if (value instanceof Date) return "a timestamp (!!timestamp)";
  if (typeof value === "object") return "a map";
  if (typeof value === "string")
    return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  return String(value);
}

/** Kubernetes list wrappers: `kind: List` and typed lists such as `BareMetalHostList`. */
export function isListKind(kind: unknown): kind is string {
  return typeof kind === "string" && (kind === "List" || (kind.length > 4 && kind.endsWith("List")));
}

/** The `kind`/`apiVersion` of a list wrapper, which typed lists lend to items that omit their own. */
export interface ListHeader {
  readonly kind?: string;
  readonly apiVersion?: string;
}

/**
 * An item of a list as a standalone object. The API server omits `kind`/`apiVersion` on the items of
 * typed lists of built-in kinds (a raw `SecretList`), so a typed list lends them; a generic `List`
 * can't, and such items stay kind-less (and are ignored).
 */
export function listItem(header: ListHeader, item: unknown): unknown {
  if (!isRecord(item) || item["kind"] !== undefined) return item;
  const kind = header.kind;
  if (kind === undefined || kind === "List" || !isListKind(kind)) return item;
  return {
    ...item,
    kind: kind.slice(0, -"List".length),
    apiVersion: item["apiVersion"] ?? header.apiVersion,
  };
}

/**
 * Interns what repeats across hosts: strings (label keys and values, namespaces, states, NIC names),
 * so 100k hosts share one copy of `vino.airshipit.org/rack` instead of holding 100k, and lists of
 * facts (disks, CPU flags), which a rack of identical machines reports alike: one disk list held by
 * each of 100k hosts was 22 MiB of the inventory's heap (bench journal, 2026-11-29).
 */
export class InternPool {
  readonly #known = new Map<string, string>();
  readonly #lists = new Map<string, readonly unknown[]>();

  /** The pooled, detached copy of `text`. */
  intern(text: string): string {
    let kept = this.#known.get(text);
    if (kept === undefined) {
      kept = detach(text);
      this.#known.set(kept, kept);
    }
    return kept;
  }

  /**
   * The pooled, frozen list of `fact` equal to `list`, item by item as `keyOf` tells items apart;
   * `list` itself the first time. Its items must be immutable facts: every host with the same list
   * shares them. `fact` keeps lists of different facts apart whatever their items' keys.
   */
  internList<T>(fact: string, list: readonly T[], keyOf: (item: T) => string): readonly T[] {
    const key = JSON.stringify([fact, ...list.map(keyOf)]);
    const kept = this.#lists.get(key) as readonly T[] | undefined;
    if (kept !== undefined) return kept;
    Object.freeze(list);
    this.#lists.set(key, list);
    return list;
  }
}
