/**
 * Which review a worker is in, and since when, in memory the worker and the server's thread share
 * (decision 0056). The worker writes it as it starts and ends a review; the pool reads it when a
 * job's budget or queue wait comes due. It stands for a "started" message per review: one message,
 * one wake-up of the server's thread and one timer less per request.
 */

/**
 * Slot 0: the id + 1 of the last review started; slot 1: when it started (`Date.now()`); slot 2: the
 * id + 1 of the last review ended. A worker takes its jobs in the order of their ids.
 */
const SLOTS = 3;

export class ReviewProgress {
  readonly #slots: BigInt64Array<SharedArrayBuffer>;

  /** Over `buffer` when given (the worker's side, from its `workerData`), else over new memory. */
  constructor(readonly buffer = new SharedArrayBuffer(SLOTS * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.#slots = new BigInt64Array(buffer);
  }

  /** In the worker: the review of job `id` starts now. */
  start(id: number): void {
    // The time first: a reader that sees the id sees its time, or a later review's.
    Atomics.store(this.#slots, 1, BigInt(Date.now()));
    Atomics.store(this.#slots, 0, BigInt(id + 1));
  }

  /** In the worker: the review of job `id` is over. */
  end(id: number): void {
    Atomics.store(this.#slots, 2, BigInt(id + 1));
  }

  /** In the pool: whether the worker has started job `id` (it may have ended it too). */
  started(id: number): boolean {
    return Atomics.load(this.#slots, 0) >= BigInt(id + 1);
  }

  /** In the pool: when the review of job `id` started, while it is in progress. */
  runningSince(id: number): number | undefined {
    const current = BigInt(id + 1);
    if (Atomics.load(this.#slots, 0) !== current || Atomics.load(this.#slots, 2) === current)
      return undefined;
    return Number(Atomics.load(this.#slots, 1));
  }
}
