/** Small helpers the bench modules share to summarise and print timings. */

/** The value at `fraction` (0.5 median, 0.99 p99) of ascending `sorted`. */
export function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** The median of `values`, in any order: the mean of the middle two of an even count. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** `0.058 ms`, `473.2 ms`. */
export function milliseconds(value: number): string {
  return `${value.toFixed(value < 10 ? 3 : 1)} ms`;
}

/**
 * Times `run` `runs` times; ascending milliseconds. First it runs untimed for `warmUpMs`, and at
 * least a tenth as many times: V8 compiles the code `run` reaches on background threads that share
 * the machine's two vCPUs with this one, and until those compilations end they, not `run`, set the
 * slowest percent (decision 0027).
 */
export function timeRuns(run: () => void, runs: number, warmUpMs = 1000): number[] {
  const warmUntil = performance.now() + warmUpMs;
  for (let warm = 0; warm < runs / 10 || performance.now() < warmUntil; warm++) run();
  const times: number[] = [];
  for (let index = 0; index < runs; index++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

/** A full collection, when the process runs with `--expose-gc` (bench/index.ts starts it so). */
export function settleHeap(): void {
  const gc: unknown = Reflect.get(globalThis, "gc");
  if (typeof gc === "function") gc();
}
