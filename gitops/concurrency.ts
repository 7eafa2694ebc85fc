/**
 * How many file operations run at once: enough to keep libuv's thread pool busy (a rendered tree has
 * thousands of small files; one at a time costs seconds), few enough to stay far below open-file limits.
 */
const CONCURRENCY = 32;

/**
 * Runs `action` over `items` with bounded concurrency. On failure, or once `signal` is aborted, it
 * stops starting new work but waits for what is already running before rejecting with the first
 * error (the signal's reason for an abort), so the caller's cleanup never races a write into the
 * directory it is removing.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  action: (item: T) => Promise<unknown>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      if (signal?.aborted) {
        failure = { error: signal.reason };
        break;
      }
      const item = items[next] as T;
      next += 1;
      try {
        await action(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  if (failure) throw failure.error;
}
