/** Small helpers the bench modules share to summarise and print timings. */

/** The value at `fraction` (0.5 median, 0.99 p99) of ascending `sorted`. */
export function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** `0.058 ms`, `473.2 ms`. */
export function milliseconds(value: number): string {
  return `${value.toFixed(value < 10 ? 3 : 1)} ms`;
}

/** Times `run` `runs` times after a tenth as many warm-up runs (JIT); ascending milliseconds. */
export function timeRuns(run: () => void, runs: number): number[] {
  for (let warm = 0; warm < runs / 10; warm++) run();
  const times: number[] = [];
  for (let index = 0; index < runs; index++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}
