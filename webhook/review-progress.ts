/**
 * What a review worker is doing, in memory the worker and the server's thread share (decision
 * 0056): which of the jobs it was sent it takes, which review it is in, and since when. The worker
 * writes as it takes, starts and ends a job; the pool reads when a job's budget or queue wait comes
 * due, and may take back a job the worker has not taken. No message and no timer per review.
 *
 * A job is offered in a slot of the worker's batch: the slot holds the job's id + 1 while offered,
 * and exactly one side turns it from there, the worker to its negative (taken) or the pool to 0
 * (taken back). A worker still skipping the slots of a batch whose jobs were taken back finds the
 * next batch's ids in them, not its own, and takes nothing it was not sent.
 */

/** The most jobs one batch holds. */
export const MAX_BATCH = 16;

/** `progress` slots: the id + 1 of the last review started; when it started; the last ended. */
const STARTED = 0;
const SINCE = 1;
const ENDED = 2;
const PROGRESS_SLOTS = 3;

export class ReviewProgress {
  readonly #progress: BigInt64Array<SharedArrayBuffer>;
  readonly #offers: BigInt64Array<SharedArrayBuffer>;

  /** Over `buffer` when given (the worker's side, from its `workerData`), else over new memory. */
  constructor(
    readonly buffer = new SharedArrayBuffer((PROGRESS_SLOTS + MAX_BATCH) * BigInt64Array.BYTES_PER_ELEMENT),
  ) {
    this.#progress = new BigInt64Array(buffer, 0, PROGRESS_SLOTS);
    this.#offers = new BigInt64Array(buffer, PROGRESS_SLOTS * BigInt64Array.BYTES_PER_ELEMENT, MAX_BATCH);
  }

  /** In the pool, before sending a batch: job `id` is offered in `slot`. */
  offer(slot: number, id: number): void {
    Atomics.store(this.#offers, slot, BigInt(id + 1));
  }

  /** In the worker: takes job `id` from `slot`, unless the pool took it back. */
  take(slot: number, id: number): boolean {
    const offered = BigInt(id + 1);
    return Atomics.compareExchange(this.#offers, slot, offered, -offered) === offered;
  }

  /** In the pool: takes job `id` back from `slot`, unless the worker took it. */
  takeBack(slot: number, id: number): boolean {
    const offered = BigInt(id + 1);
    return Atomics.compareExchange(this.#offers, slot, offered, 0n) === offered;
  }

  /** In the worker: the review of job `id` starts now. */
  start(id: number): void {
    // The time first: a reader that sees the id sees its time, or a later review's.
    Atomics.store(this.#progress, SINCE, BigInt(Date.now()));
    Atomics.store(this.#progress, STARTED, BigInt(id + 1));
  }

  /** In the worker: the review of job `id` is over. */
  end(id: number): void {
    Atomics.store(this.#progress, ENDED, BigInt(id + 1));
  }

  /** In the pool: when the review of job `id` started, while it is in progress. */
  runningSince(id: number): number | undefined {
    const current = BigInt(id + 1);
    if (Atomics.load(this.#progress, STARTED) !== current || Atomics.load(this.#progress, ENDED) === current)
      return undefined;
    return Number(Atomics.load(this.#progress, SINCE));
  }
}
