/**
 * The edges of the command line users bring from kubectl (issue #41): `-o=json`, `--output yaml` and
 * `--output=yaml` mean `--format`, and a mistyped command or option gets the closest real one.
 */

/** `argv` with kubectl's spellings of `--format` written as this CLI parses them. */
export function normalizeArgs(argv: readonly string[]): string[] {
  return argv.flatMap((word) => {
    if (word === "--output") return ["--format"];
    if (word.startsWith("--output=")) return [`--format=${word.slice("--output=".length)}`];
    if (word.startsWith("-o=")) return ["-o", word.slice("-o=".length)];
    return [word];
  });
}

/**
 * The one of `known` closest to `typed` by edit distance, when it is close enough to be what was
 * meant (at most a third of its letters off, and at most 3): `synht` → `synth`, `--formt` → `--format`.
 */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const word of known) {
    const distance = editDistance(typed, word);
    if (best === undefined || distance < best.distance) best = { word, distance };
  }
  if (best === undefined) return undefined;
  const allowed = Math.min(3, Math.max(1, Math.floor(best.word.length / 3)));
  return best.distance <= allowed ? best.word : undefined;
}

/** " (did you mean X?)" for a near miss, else "". */
export function didYouMean(typed: string, known: Iterable<string>): string {
  const suggestion = closest(typed, known);
  return suggestion === undefined ? "" : ` (did you mean ${suggestion}?)`;
}

/** Levenshtein distance, with a transposition counted as one edit (`sytnh` is one from `synth`). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}
