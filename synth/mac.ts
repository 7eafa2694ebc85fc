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

/** Levenshtein distance, used to suggest the closest known MAC for a typo. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
