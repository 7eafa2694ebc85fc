/**
 * MAC addresses compare case-insensitively and are written lowercase and colon-separated (docs/contract.md §1.3).
 * Upstream BPA matched MACs as case-sensitive substrings of `ip a` output; we parse, normalise and
 * compare whole addresses instead.
 */

/**
 * The anchored pattern the CRDs publish, and the one definition of a MAC in a CR: six hex octets
 * separated by ':' alone or by '-' alone, or Cisco's `aabb.ccdd.eeff`. Nothing around it, not even
 * whitespace: the API server runs this pattern on the value as written, and `validate` must refuse
 * exactly what it refuses. Written in the subset of regular expressions that ECMAScript and the API
 * server's RE2 share (no backreference to say "the same separator"), hence one branch per separator.
 */
export const MAC_PATTERN = [
  "^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$",
  "^[0-9A-Fa-f]{2}(-[0-9A-Fa-f]{2}){5}$",
  "^[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}$",
].join("|");

const MAC = new RegExp(MAC_PATTERN);
const CANONICAL_MAC = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/;

/**
 * Returns the canonical form (`aa:bb:cc:dd:ee:ff`) of a MAC written as `AA:BB:…`, `AA-BB-…` or
 * `aabb.ccdd.eeff` ({@link MAC_PATTERN}), or `undefined` when the text is not a MAC. A MAC already in
 * canonical form, as inventories write most of them, comes back as `text` itself.
 */
export function normalizeMac(text: string): string | undefined {
  if (CANONICAL_MAC.test(text)) return text;
  if (!MAC.test(text)) return undefined;
  return (text.replace(/[^0-9A-Fa-f]/g, "").match(/../g) ?? []).join(":").toLowerCase();
}

/** Why `text` is not a MAC beyond "it is not one", when a small slip explains it. */
export function macSlip(text: string): string | undefined {
  if (text !== text.trim() && normalizeMac(text.trim()) !== undefined)
    return "remove the whitespace around it";
  if (/^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$/.test(text))
    return "use one separator, ':' or '-', throughout";
  return undefined;
}

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
