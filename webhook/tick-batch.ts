/**
 * Work done in two phases per tick of the event loop: every job submitted while one tick's I/O was
 * handled is decided, in the order submitted, before any of them is delivered
 * (docs/decisions/0028-reviews-batched-per-turn.md, which says "turn" for what Node calls a tick; a
 * turn is a cluster's place in planning order).
 *
 * The webhook decides admission requests this way. Deciding one runs a large body of code (schemas,
 * rules, planning) over the site's indexes; between two requests handled one after the other, the
 * TLS and HTTP work of the next evicts that code and data from the CPU's caches, and each review took
 * three times as long as in a loop. Decided back to back, they run from warm caches.
 */
export class TickBatch<Job, Result> {
  #pending: Job[] = [];

  /**
   * @param decide the first phase; what it throws goes to `fail`, and the other jobs go on.
   * @param deliver the second phase, with the job's decision; what it throws goes to `fail`.
   * @param fail what becomes of a job whose phase threw.
   */
  constructor(
    private readonly decide: (job: Job) => Result,
    private readonly deliver: (job: Job, result: Result) => void,
    private readonly fail: (job: Job, error: unknown) => void,
  ) {}

  /** Queues `job` for the end of this tick (after its I/O callbacks, as `setImmediate` runs). */
  submit(job: Job): void {
    this.#pending.push(job);
    if (this.#pending.length === 1) setImmediate(() => this.#run());
  }

  #run(): void {
    const jobs = this.#pending;
    // A job submitted while this batch runs (a failure handler that answers another) waits for
    // the next tick, as it would have had it come in later.
    this.#pending = [];
    const decided: { job: Job; result: Result }[] = [];
    for (const job of jobs) {
      try {
        decided.push({ job, result: this.decide(job) });
      } catch (error) {
        this.fail(job, error);
      }
    }
    for (const { job, result } of decided) {
      try {
        this.deliver(job, result);
      } catch (error) {
        this.fail(job, error);
      }
    }
  }
}
