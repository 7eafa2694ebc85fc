/**
 * A review worker thread (decision 0056): a copy of the webhook's knowledge, kept by the changes the
 * server's state sends (`wire.ts`), and the reviews it is sent, in batches it takes one job at a time. What a review costs
 * here is no request's wait in the server's thread: health, readiness, metrics and the feeds stay
 * there, and so do the other workers.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { AdmissionOutcome } from "./admission.ts";
import type { AllocationTrust } from "./allocation-trust.ts";
import { ReviewProgress } from "./review-progress.ts";
import { reviewBody, reviewerFor, type ReviewJob } from "./reviews.ts";
import { WebhookState } from "./state.ts";
import { WireReceiver, type WireChange } from "./wire.ts";

/** What a worker is started with. */
export interface ReviewWorkerData {
  /** As the server's state: whether admitted objects are held (`--from-cluster`). */
  readonly holdsAdmitted: boolean;
  /** As the server's state: which Allocations are the site's. */
  readonly trust: AllocationTrust;
  /** The memory of its `ReviewProgress`, shared with the pool. */
  readonly progress: SharedArrayBuffer;
}

/** What the server sends a worker. */
export type ToWorker =
  | { readonly type: "change"; readonly change: WireChange }
  /** Jobs to review in order, each offered in its slot of the worker's `ReviewProgress`. */
  | { readonly type: "review"; readonly jobs: readonly OfferedJob[] };

/** A job of a batch: its id in the pool, and its slot. */
export interface OfferedJob {
  readonly id: number;
  readonly slot: number;
  readonly job: ReviewJob;
}

/** What a worker answers. */
export type FromWorker =
  | { readonly type: "reviewed"; readonly id: number; readonly outcome: AdmissionOutcome }
  /** Its knowledge is loaded and evaluated: reviews sent now start at once. */
  | { readonly type: "warm" };

const port = parentPort;
if (port === null) throw new Error("review-worker.ts runs as a worker thread");
const { holdsAdmitted, trust, progress: shared } = workerData as ReviewWorkerData;
const progress = new ReviewProgress(shared);
const state = new WebhookState(Date.now, holdsAdmitted, trust);
const receiver = new WireReceiver();
let warm = false;

port.on("message", (message: ToWorker) => {
  if (message.type === "change") {
    const change = receiver.decode(message.change);
    if (change.type === "hold") state.hold(change.object, change.at);
    else state.update(change.parts);
    // Evaluated now, between messages, rather than by the next review, whose time is its budget.
    if (state.reviewer() !== undefined && !warm) {
      warm = true;
      port.postMessage({ type: "warm" } satisfies FromWorker);
    }
    return;
  }
  // Back to back, as the server's thread reviews the requests of one tick (decision 0028): the
  // rules' code and the site's indexes stay in the caches from one review to the next.
  for (const { id, slot, job } of message.jobs) {
    // Taken back by the pool while a review before it ran long: another worker has it.
    if (!progress.take(slot, id)) continue;
    progress.start(id);
    const outcome = review(job);
    progress.end(id);
    port.postMessage({ type: "reviewed", id, outcome: cloneable(outcome) } satisfies FromWorker);
  }
});

function review(job: ReviewJob): AdmissionOutcome {
  try {
    return reviewBody(job.kind, job.body, reviewerFor(state, job), job.unavailable);
  } catch (error) {
    // reviewBody catches what the rules throw; what escapes is a bug of the worker itself.
    return { status: 400, body: { error: `internal error: ${String(error)}` } };
  }
}

/**
 * `outcome` as a message can carry it: what a rule threw is an Error (cloned with its stack) or
 * anything else, which becomes an Error saying what it was.
 */
function cloneable(outcome: AdmissionOutcome): AdmissionOutcome {
  if (outcome.status !== 200 || outcome.failure === undefined || outcome.failure instanceof Error)
    return outcome;
  return { ...outcome, failure: new Error(`a rule threw ${String(outcome.failure)}`) };
}
