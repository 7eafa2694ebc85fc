/**
 * Kubernetes resource quantities for memory (SPEC §1.3): `4Gi`, `4096Mi`, `8G`, `8589934592`.
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
const QUANTITY = /^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

/** Parsed memory, or the reason it was refused. */
export type MemoryParse = { readonly bytes: number } | { readonly problem: string };

/** Parses a memory quantity into bytes. */
export function parseMemory(value: string | number): MemoryParse {
  const text = String(value).trim();
  const match = QUANTITY.exec(text);
  if (!match) {
    return {
      problem: `"${text}" is not a Kubernetes quantity (expected e.g. 4Gi, 4096Mi, 8G or a byte count)`,
    };
  }
  const amount = Number(match[1]);
  const suffix = match[2];
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
