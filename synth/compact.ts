/**
 * Objects with optional fields, written as one literal. Without `exactOptionalPropertyTypes` a field
 * may hold `undefined`, and such a key is not absent everywhere: `toYaml` leaves an object with one to
 * the `yaml` library, `Object.keys` and `in` count it. The spread `...(x !== undefined && { x })` kept
 * those keys out, one condition per field; {@link compact} does it for every field of a literal,
 * keeping the order the literal writes them in (decision 0050).
 */

/** `T` with every field that may be `undefined` made optional, and never `undefined` when present. */
export type Compact<T> = {
  [K in keyof T as undefined extends T[K] ? never : K]: T[K];
} & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/**
 * A copy of `fields` without the keys whose value is `undefined` (`null`, `false`, `0` and `""` are
 * kept), in the literal's order. Not for a constructor on a review's hot path: a literal is cheaper.
 */
export function compact<T extends object>(fields: T): Compact<T> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) kept[key] = value;
  return kept as Compact<T>;
}
