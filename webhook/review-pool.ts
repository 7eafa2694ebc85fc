/**
 * Reviews in worker threads (decision 0056). Each worker holds a copy of the state's knowledge,
 * kept by the changes the state tells (`WebhookState.subscribe`, sent as `wire.ts` shapes), and
 * reviews one request at a time; the server's thread only receives, dispatches and answers. So:
 *
 * - no review delays `/healthz`, `/readyz`, `/metrics` or the informers: they are not in a worker;
 * - a costly review delays no other: the other workers take the requests that come meanwhile;
 * - a review is given {@link REVIEW_BUDGET_MS} from when its worker starts it. Past that, its
 *   request is refused (`review-budget`, naming the budget), the worker is terminated, which is the
 *   one way to stop a synchronous review, and a new one is started from the state's knowledge;
 * - a request no worker starts within {@link QUEUE_WAIT_MS} (all of them busy) is refused as
 *   unavailable, so the API server hears back before its `timeoutSeconds`.
 *
 * Requests that wait together go to a worker together, up to `MAX_BATCH`, shared among the idle
 * workers: a worker reviews them back to back with its caches warm, as the server's thread reviews
 * a tick's requests (decision 0028), and answers each as it is reviewed. A worker takes each job
 * and says which review it is in through memory shared with this thread (`ReviewProgress`), read
 * only when a deadline comes due: one watchdog timer per busy worker checks the budget, and takes
 * back the jobs waiting behind a review that runs past {@link TAKE_BACK_AFTER_MS}, or behind
 * knowledge the worker is still taking in, for the other workers. No message and no timer per
 * review beyond the request and its answer.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { admit, type AdmissionOutcome } from "./admission.ts";
import type { Logger } from "./log.ts";
import type { FromWorker, OfferedJob, ReviewWorkerData, ToWorker } from "./review-worker.ts";
import { MAX_BATCH, ReviewProgress } from "./review-progress.ts";
import type { ReviewJob, Reviewed, Reviews } from "./reviews.ts";
import type { KnowledgeChange, Readiness, WebhookState } from "./state.ts";
import { WireSender } from "./wire.ts";

/**
 * How long one review may run in its worker (milliseconds). The API server waits 5 s
 * (`timeoutSeconds`) and the server cuts a request at 4 s; a request may first wait up to 1 s for
 * current knowledge (`CURRENT_WAIT_MS`) and {@link QUEUE_WAIT_MS} for a worker, so 1.5 s is what is
 * left with a margin.
 */
export const REVIEW_BUDGET_MS = 1500;

/** How long a request waits for a worker to start its review before it is refused as unavailable. */
export const QUEUE_WAIT_MS = 1000;

/**
 * How long jobs sent to a worker wait behind a review (or knowledge) it is busy with before the pool
 * takes them back for the other workers: far above a review at the hub's scale (p99 ≤ 25 ms without
 * a lock), far below the queue wait.
 */
export const TAKE_BACK_AFTER_MS = 50;

/** Default number of review workers: one costly review leaves the other free. */
export const DEFAULT_REVIEW_WORKERS = 2;

/**
 * The young generation of a review worker's heap, in MiB (V8 gives a third of it to each of its two
 * semi-spaces). A review's objects die with it, but V8 sizes the young generation from what survives,
 * and evaluating the site keeps nearly everything: left to itself it grew a worker's semi-spaces to
 * 64 MiB, and every scavenge stopped the worker for 9–15 ms, the webhook's whole p99 at 500
 * requests/s. At 24 MiB a scavenge takes 2–3 ms, more often (decision 0056, amended 2026-11-30).
 */
export const REVIEW_YOUNG_GENERATION_MIB = 24;

/** Options of {@link ReviewPool}. */
export interface ReviewPoolOptions {
  readonly state: WebhookState;
  readonly log: Logger;
  /** @default DEFAULT_REVIEW_WORKERS */
  readonly workers?: number;
  /** @default REVIEW_BUDGET_MS */
  readonly budgetMs?: number;
  /** @default QUEUE_WAIT_MS */
  readonly queueWaitMs?: number;
}

/** A review waiting for a worker, or in one. */
interface Pending {
  readonly id: number;
  readonly job: ReviewJob;
  /** The state's hold count when the job was sent: the worker had every hold up to it. */
  holds: number;
  /** Answers the request, once: a job answered before its worker replies is not answered again. */
  readonly resolve: (reviewed: Reviewed) => void;
  readonly queued: NodeJS.Timeout;
  /** Its slot in the batch it was last sent in. */
  slot: number;
}

/** One worker thread and what the pool knows of it. */
interface PoolWorker {
  readonly thread: Worker;
  readonly sender: WireSender;
  /** Which review it is in, and since when: written by the worker, read here. */
  readonly progress: ReviewProgress;
  /** Its knowledge is evaluated: reviews sent to it start at once. */
  warm: boolean;
  /** The jobs it was sent and has not answered, in the order it takes them. */
  jobs: Pending[];
  /** When it was sent its last batch (`Date.now()`). */
  sentAt: number;
  /** Checks its jobs' budget and wait; armed while it has jobs (see `#watch`). */
  watchdog?: NodeJS.Timeout;
  gone: boolean;
}

/** The module a worker runs: `review-worker.js` beside the compiled code, `.ts` beside the sources. */
const WORKER_MODULE = new URL(
  `./review-worker${path.extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

/** Reviews in worker threads (see the module comment). */
export class ReviewPool implements Reviews {
  readonly #state: WebhookState;
  readonly #log: Logger;
  readonly #size: number;
  readonly #budgetMs: number;
  readonly #queueWaitMs: number;
  readonly #workers: PoolWorker[] = [];
  readonly #queue: Pending[] = [];
  readonly #unsubscribe: () => void;
  #next = 0;
  #closed = false;
  /** Workers terminated for running over the budget, for `/readyz` and the log. */
  #replaced = 0;

  constructor(options: ReviewPoolOptions) {
    this.#state = options.state;
    this.#log = options.log;
    this.#size = Math.max(1, options.workers ?? DEFAULT_REVIEW_WORKERS);
    this.#budgetMs = options.budgetMs ?? REVIEW_BUDGET_MS;
    this.#queueWaitMs = options.queueWaitMs ?? QUEUE_WAIT_MS;
    this.#unsubscribe = this.#state.subscribe((change) => this.#broadcast(change));
    for (let index = 0; index < this.#size; index++) this.#workers.push(this.#start());
  }

  review(received: ReviewJob): Promise<Reviewed> {
    const job = { ...received, body: ownBytes(received.body) };
    return new Promise((answer) => {
      const id = this.#next++;
      let answered = false;
      const pending: Pending = {
        id,
        job,
        holds: this.#state.holdCount(),
        resolve: (reviewed) => {
          if (answered) return;
          answered = true;
          answer(reviewed);
        },
        queued: setTimeout(() => this.#notStarted(pending), this.#queueWaitMs),
        slot: 0,
      };
      this.#queue.push(pending);
      this.#dispatch();
    });
  }

  status(): Readiness {
    const live = this.#workers.filter((worker) => worker.warm).length;
    const replaced = this.#replaced > 0 ? `, ${this.#replaced} replaced after a review over budget` : "";
    return {
      ready: live > 0,
      detail: `review workers: ${live} of ${this.#size} ready${replaced}`,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    for (const pending of this.#queue.splice(0)) clearTimeout(pending.queued);
    for (const worker of this.#workers) clearTimeout(worker.watchdog);
    await Promise.all(this.#workers.map((worker) => worker.thread.terminate()));
  }

  #start(): PoolWorker {
    const progress = new ReviewProgress();
    const workerData: ReviewWorkerData = {
      holdsAdmitted: this.#state.holdsAdmitted,
      trust: this.#state.trust,
      progress: progress.buffer,
    };
    const thread = new Worker(workerEntry(), {
      workerData,
      resourceLimits: { maxYoungGenerationSizeMb: REVIEW_YOUNG_GENERATION_MIB },
    });
    const worker: PoolWorker = {
      thread,
      sender: new WireSender(),
      progress,
      warm: false,
      jobs: [],
      sentAt: 0,
      gone: false,
    };
    thread.on("message", (message: FromWorker) => this.#heard(worker, message));
    thread.on("error", (error) => this.#lost(worker, error));
    thread.on("exit", (code) => this.#lost(worker, new Error(`a review worker exited (code ${code})`)));
    // Everything known so far, then every change as it comes: a worker never misses one.
    for (const change of this.#state.knowledge()) this.#send(worker, change);
    return worker;
  }

  #broadcast(change: KnowledgeChange): void {
    for (const worker of this.#workers) if (!worker.gone) this.#send(worker, change);
  }

  #send(worker: PoolWorker, change: KnowledgeChange): void {
    worker.thread.postMessage({ type: "change", change: worker.sender.encode(change) } satisfies ToWorker);
  }

  /**
   * Sends queued jobs to idle workers (warm ones, or any while none is warm: starting up), each a
   * batch of its share of the queue.
   */
  #dispatch(): void {
    const anyWarm = this.#workers.some((worker) => !worker.gone && worker.warm);
    const idle = this.#workers.filter(
      (worker) => !worker.gone && worker.jobs.length === 0 && (worker.warm || !anyWarm),
    );
    for (const [index, worker] of idle.entries()) {
      if (this.#queue.length === 0) return;
      const share = Math.ceil(this.#queue.length / (idle.length - index));
      this.#sendBatch(worker, this.#queue.splice(0, Math.min(MAX_BATCH, share)));
    }
  }

  #sendBatch(worker: PoolWorker, batch: Pending[]): void {
    const holds = this.#state.holdCount();
    const jobs: OfferedJob[] = batch.map((pending, slot) => {
      pending.holds = holds;
      pending.slot = slot;
      worker.progress.offer(slot, pending.id);
      return { id: pending.id, slot, job: pending.job };
    });
    worker.jobs = batch;
    worker.sentAt = Date.now();
    // Copied, not moved: a review decided again, or refused here, reads the body once more.
    worker.thread.postMessage({ type: "review", jobs } satisfies ToWorker);
    // A batch's later jobs may wait behind its first: looked at soon. One job: its budget is all.
    if (batch.length > 1) {
      clearTimeout(worker.watchdog);
      worker.watchdog = this.#watchIn(worker, TAKE_BACK_AFTER_MS);
    } else worker.watchdog ??= this.#watchIn(worker, this.#budgetMs);
  }

  #watchIn(worker: PoolWorker, delayMs: number): NodeJS.Timeout {
    return setTimeout(() => this.#watch(worker), delayMs).unref();
  }

  /**
   * The watchdog of a busy worker: the review in progress over budget is refused; jobs waiting
   * behind a review or knowledge that has taken {@link TAKE_BACK_AFTER_MS} are taken back for the
   * other workers; then it looks again when the next of these can come due. An idle worker's
   * watchdog stops.
   */
  #watch(worker: PoolWorker): void {
    worker.watchdog = undefined;
    if (worker.gone || worker.jobs.length === 0) return;
    const now = Date.now();
    const running = this.#running(worker);
    const busySince = running?.since ?? worker.sentAt;
    if (running !== undefined && now - running.since >= this.#budgetMs) {
      this.#overBudget(worker, running.pending);
      return;
    }
    if (now - busySince >= TAKE_BACK_AFTER_MS) this.#takeBack(worker);
    const budgetLeft = running === undefined ? this.#budgetMs : running.since + this.#budgetMs - now;
    const waiting = worker.jobs.length > (running === undefined ? 0 : 1);
    const takeBackLeft = waiting ? Math.max(1, busySince + TAKE_BACK_AFTER_MS - now) : Infinity;
    worker.watchdog = this.#watchIn(worker, Math.min(budgetLeft, takeBackLeft, TAKE_BACK_AFTER_MS));
  }

  /** The job `worker` is reviewing now, and since when. */
  #running(worker: PoolWorker): { pending: Pending; since: number } | undefined {
    for (const pending of worker.jobs) {
      const since = worker.progress.runningSince(pending.id);
      if (since !== undefined) return { pending, since };
    }
    return undefined;
  }

  /** Takes back the jobs `worker` has not taken, to the front of the queue, for the other workers. */
  #takeBack(worker: PoolWorker): void {
    const back = worker.jobs.filter((pending) => worker.progress.takeBack(pending.slot, pending.id));
    if (back.length === 0) return;
    worker.jobs = worker.jobs.filter((pending) => !back.includes(pending));
    this.#queue.unshift(...back);
    this.#dispatch();
  }

  #heard(worker: PoolWorker, message: FromWorker): void {
    if (message.type === "warm") {
      worker.warm = true;
      this.#dispatch();
      return;
    }
    const index = worker.jobs.findIndex((pending) => pending.id === message.id);
    if (index === -1) return;
    const [pending] = worker.jobs.splice(index, 1);
    if (pending === undefined) return;
    clearTimeout(pending.queued);
    pending.resolve({ outcome: message.outcome, holds: pending.holds });
    if (worker.jobs.length === 0) this.#dispatch();
  }

  /**
   * No worker started the job in time: refused as unavailable, waiting in the queue or sent to a
   * worker that has not taken it (taken back from there). One a worker has taken stays its job.
   */
  #notStarted(pending: Pending): void {
    const queued = this.#queue.indexOf(pending);
    if (queued !== -1) this.#queue.splice(queued, 1);
    else {
      const worker = this.#workers.find((candidate) => candidate.jobs.includes(pending));
      if (worker !== undefined) {
        if (!worker.progress.takeBack(pending.slot, pending.id)) return;
        worker.jobs = worker.jobs.filter((job) => job !== pending);
      }
    }
    const busy = this.#workers.filter((worker) => worker.jobs.length > 0).length;
    pending.resolve({
      holds: pending.holds,
      outcome: refusal(
        pending.job,
        undefined,
        `metalsynth's ${this.#size} review workers are busy (${busy} reviewing)`,
      ),
    });
    this.#dispatch();
  }

  /** The review ran past its budget: refused, and its worker replaced (see the module comment). */
  #overBudget(worker: PoolWorker, pending: Pending): void {
    const { kind } = pending.job;
    this.#log.warn("review over budget; worker replaced", { kind, budgetMs: this.#budgetMs });
    this.#replaced += 1;
    this.#retire(worker, pending);
    pending.resolve({
      holds: pending.holds,
      outcome: refusal(
        pending.job,
        `metalsynth stopped reviewing this ${kind} after ${this.#budgetMs / 1000} s, its review budget: an object this costly to place is refused (fewer nodes chosen by resources, or nodes by MAC, cost less)`,
      ),
    });
    this.#dispatch();
  }

  #lost(worker: PoolWorker, error: unknown): void {
    if (worker.gone || this.#closed) return;
    this.#log.error("review worker failed; replacing it", { error });
    const pending = this.#running(worker)?.pending;
    this.#retire(worker, pending);
    if (pending !== undefined) {
      pending.resolve({
        holds: pending.holds,
        outcome: refusal(
          pending.job,
          undefined,
          "metalsynth's review worker failed while reviewing this request",
        ),
      });
    }
    this.#dispatch();
  }

  /**
   * Terminates `worker` and starts another in its place. Its jobs but `running` go back to the
   * queue: not taken, or reviewed with an answer that may not have left it (reviews are pure, and a
   * request is answered once).
   */
  #retire(worker: PoolWorker, running: Pending | undefined): void {
    worker.gone = true;
    for (const pending of worker.jobs) worker.progress.takeBack(pending.slot, pending.id);
    this.#queue.unshift(...worker.jobs.filter((pending) => pending !== running));
    worker.jobs = [];
    clearTimeout(worker.watchdog);
    void worker.thread.terminate();
    if (this.#closed) return;
    const index = this.#workers.indexOf(worker);
    this.#workers.splice(index, 1, this.#start());
  }
}

/**
 * `body` in memory of its own size. express hands a small body over as a view into the socket's
 * 64 KiB read buffer, and a message copies a view's whole buffer: 64 KiB copied per request, and
 * allocated again in the worker, for a 1 KiB AdmissionReview.
 */
function ownBytes(body: Uint8Array): Uint8Array {
  return body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
}

/**
 * The answer to `job` without a review: a denial with `message` (rule `review-budget`), or as
 * unavailable with `unavailable`. The body is parsed here for its uid, once, in the rare case.
 */
function refusal(job: ReviewJob, message?: string, unavailable?: string): AdmissionOutcome {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(job.body)) as unknown;
  } catch {
    return { status: 400, body: { error: "request body is not JSON" } };
  }
  if (message === undefined) return admit(job.kind, body, undefined, unavailable);
  return admit(job.kind, body, {
    review: () => [{ rule: "review-budget", severity: "error", text: message }],
  });
}

/**
 * Where a worker starts. Compiled JavaScript runs as it is. From the TypeScript sources (tsx,
 * tests) a worker thread inherits no loader hooks, so it imports the module through tsx's API, as
 * gitops/render.ts's render workers do.
 */
function workerEntry(): URL {
  if (!WORKER_MODULE.pathname.endsWith(".ts")) return WORKER_MODULE;
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const code = `const { tsImport } = await import(${tsx}); await tsImport(${JSON.stringify(WORKER_MODULE.href)}, import.meta.url);`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
