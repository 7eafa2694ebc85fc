/**
 * Kubernetes resource quantities for memory (docs/contract.md §1.3): `4Gi`, `4096Mi`, `8G`, `8589934592`.
 * A bare number below 1024 is refused as ambiguous: `memory: 64` almost certainly means 64 GiB, and
 * silently reading it as 64 bytes would make every host "fit". So is a bare number below 1 MiB:
 * `memory: 4096` is 4096 bytes to Kubernetes but almost certainly meant 4096 MiB
 * (docs/decisions/0014-bare-memory-numbers.md).
 */

const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Readonly<Record<string, number>> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
/** The smallest bare number read as bytes: below it, no host is that small and a unit was forgotten. */
const MIN_BARE_BYTES = 2 ** 20;
/**
 * Kubernetes' quantity grammar (apimachinery `resource.ParseQuantity`) without the sub-unit suffixes
 * m, u and n, which no memory size uses: `.5Gi` and `5.` are quantities, an exponent (`1e9`) is a
 * bare number, and no whitespace is allowed around it. A sign is matched to be refused by name.
 */
const QUANTITY =
  /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)|([eE][+-]?[0-9]+))?$/;

/** Parsed memory, or the reason it was refused. */
export type MemoryParse = { readonly bytes: number } | { readonly problem: string };

/** Parses a memory quantity into bytes. */
export function parseMemory(value: string | number): MemoryParse {
  const text = String(value);
  const trimmed = text.trim();
  if (trimmed !== text && QUANTITY.test(trimmed)) {
    // Kubernetes refuses it, so the API server or another reader would; metalsynth used to trim.
    return {
      problem: `"${text}" has spaces around it, which a Kubernetes quantity can't; write "${trimmed}"`,
    };
  }
  const match = QUANTITY.exec(text);
  if (!match) {
    return {
      problem: `"${text}" is not a Kubernetes quantity (expected e.g. 4Gi, 4096Mi, 8G or a byte count)`,
    };
  }
  if (match[1] === "-") return { problem: `"${text}" is negative; memory is a size, such as 64Gi` };
  const amount = Number(`${match[2]}${match[4] ?? ""}`);
  const suffix = match[3];
  if (suffix === undefined) {
    if (amount < 1024) {
      return { problem: `bare number ${text} is ambiguous (bytes? GiB?); write a unit such as ${text}Gi` };
    }
    if (!Number.isInteger(amount)) return { problem: `${text} bytes is not a whole number of bytes` };
    if (amount < MIN_BARE_BYTES) {
      return {
        problem: `bare number ${text} means ${text} bytes (${formatBytes(amount)}), less than any host has; write a unit: did you mean ${text}Mi?`,
      };
    }
    return { bytes: amount };
  }
  const multiplier = BINARY[suffix] ?? DECIMAL[suffix] ?? 1;
  return { bytes: Math.ceil(amount * multiplier) };
}

/** Human-readable bytes for messages: the largest binary unit that keeps the value readable. */
export function formatBytes(bytes: number): string {
  for (const unit of ["Ti", "Gi", "Mi", "Ki"] as const) {
    const size = BINARY[unit] ?? 1;
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)}${unit}`;
    }
  }
  return `${bytes}B`;
}
