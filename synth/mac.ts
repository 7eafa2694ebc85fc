/**
 * MAC addresses compare case-insensitively and are written lowercase and colon-separated (SPEC §1.3).
 * Upstream BPA matched MACs as case-sensitive substrings of `ip a` output; we parse, normalise and
 * compare whole addresses instead.
 */

const SEPARATED =
  /^([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})$/i;
const CISCO_DOTTED = /^([0-9a-f]{4})\.([0-9a-f]{4})\.([0-9a-f]{4})$/i;

/**
 * Returns the canonical form (`aa:bb:cc:dd:ee:ff`) of a MAC written as `AA:BB:…`, `AA-BB-…` or
 * `aabb.ccdd.eeff`, or `undefined` when the text is not a MAC.
 */
export function normalizeMac(text: string): string | undefined {
  const trimmed = text.trim();
  const separated = SEPARATED.exec(trimmed);
  if (separated) {
    if (new Set(trimmed.replace(/[0-9a-f]/gi, "")).size !== 1) return undefined; // mixed ':' and '-'
    return separated.slice(1).join(":").toLowerCase();
  }
  const dotted = CISCO_DOTTED.exec(trimmed);
  if (dotted) return (dotted.slice(1).join("").match(/../g) ?? []).join(":").toLowerCase();
  return undefined;
}

/** The anchored pattern the CRDs publish, so the API server rejects obvious garbage too. */
export const MAC_PATTERN =
  "^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}$";

/**
 * Levenshtein distance, used to suggest the closest known MAC (or kind, or field) for a typo. With a
 * `limit`, it returns `limit + 1` as soon as the distance is known to exceed it, and computes only
 * the cells within `limit` of the diagonal (a path through any other cell costs more than `limit`):
 * a search for the nearest of many candidates then pays little for the far ones.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  // Cells outside the band hold a value no path can beat.
  const outside = a.length + b.length + 1;
  let previous = new Uint32Array(b.length + 2);
  let current = new Uint32Array(b.length + 2);
  for (let j = 0; j <= b.length; j++) previous[j] = j <= limit ? j : outside;
  previous[b.length + 1] = outside;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - limit);
    const to = Math.min(b.length, i + limit);
    current[from - 1] = from === 1 ? i : outside;
    let rowMinimum = current[from - 1] ?? outside;
    for (let j = from; j <= to; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1);
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      current[j] = value;
      if (value < rowMinimum) rowMinimum = value;
    }
    current[to + 1] = outside;
    // Every later row is at least this row's minimum, so the answer can only be larger.
    if (rowMinimum > limit) return limit + 1;
    [previous, current] = [current, previous];
  }
  return Math.min(previous[b.length] ?? 0, limit + 1);
}
