/**
 * Structural equality of plain data (what the loaders build: strings, numbers, booleans, arrays
 * and plain objects), for telling a re-read that found the same facts from a change.
 */

/** Whether `a` and `b` hold the same data. A key whose value is `undefined` counts as absent. */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, index) => sameData(item, b[index]))
    );
  }
  const record = a as Record<string, unknown>;
  const other = b as Record<string, unknown>;
  const keys = definedKeys(record);
  return keys.length === definedKeys(other).length && keys.every((key) => sameData(record[key], other[key]));
}

function definedKeys(value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((key) => value[key] !== undefined);
}
