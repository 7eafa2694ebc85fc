/**
 * Where an admission request's body is reviewed: in this thread ({@link InlineReviews}, what tests
 * use to substitute their own knowledge) or in review workers (`review-pool.ts`, what the webhook
 * runs). Either way the review is {@link reviewBody}: the body parsed, then `admit` (admission.ts).
 */
import { admit, type AdmissionOutcome, type ReviewedKind } from "./admission.ts";
import type { Reviewer } from "./site-review.ts";
import type { Knowledge, Readiness } from "./state.ts";
import { TickBatch } from "./tick-batch.ts";

/** One review to make: the endpoint's kind, the request's body as received, and why not, if so. */
export interface ReviewJob {
  readonly kind: ReviewedKind;
  readonly body: Uint8Array;
  /**
   * Why the webhook can't review now (not current, decision 0056): the request is denied as
   * unavailable, with this reason.
   */
  readonly unavailable?: string;
}

/** A review's outcome, and how many admissions the knowledge it used held (`Knowledge.holdCount`). */
export interface Reviewed {
  readonly outcome: AdmissionOutcome;
  readonly holds: number;
}

/** Reviews jobs. */
export interface Reviews {
  review(job: ReviewJob): Promise<Reviewed>;
  /** Whether it can review, for `/readyz` (workers starting or restarting). */
  status(): Readiness;
  close(): Promise<void>;
}

/**
 * Parses `body` as body-parser's strict JSON would (an object or a list at the top) and decides it
 * with `reviewer` (see `admit`).
 */
export function reviewBody(
  kind: ReviewedKind,
  body: Uint8Array,
  reviewer: Reviewer | undefined,
  unavailable?: string,
): AdmissionOutcome {
  const parsed = parseJson(body);
  if ("error" in parsed) return { status: 400, body: { error: `request body is not JSON: ${parsed.error}` } };
  return admit(kind, parsed.value, reviewer, unavailable);
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function parseJson(body: Uint8Array): { value: unknown } | { error: string } {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    return { error: "not UTF-8" };
  }
  const first = /\S/.exec(text)?.[0];
  if (first !== "{" && first !== "[")
    return {
      error: first === undefined ? "empty" : `expected an object or a list, found ${JSON.stringify(first)}`,
    };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** The reviewer `knowledge` has for `job`: none when the job is not to be reviewed. */
export function reviewerFor(
  knowledge: Pick<Knowledge, "reviewer" | "allocationReviewer">,
  job: ReviewJob,
): Reviewer | undefined {
  if (job.unavailable !== undefined) return undefined;
  return job.kind === "Allocation" ? knowledge.allocationReviewer() : knowledge.reviewer();
}

/**
 * Reviews in this thread against `knowledge`: the jobs of one tick of the event loop back to back
 * (decision 0028).
 */
export class InlineReviews implements Reviews {
  readonly #batch: TickBatch<
    { job: ReviewJob; resolve: (reviewed: Reviewed) => void; reject: (error: unknown) => void },
    Reviewed
  >;

  constructor(knowledge: Knowledge) {
    this.#batch = new TickBatch(
      ({ job }) => ({
        holds: knowledge.holdCount(),
        outcome: reviewBody(job.kind, job.body, reviewerFor(knowledge, job), job.unavailable),
      }),
      ({ resolve }, reviewed) => resolve(reviewed),
      ({ reject }, error) => reject(error),
    );
  }

  review(job: ReviewJob): Promise<Reviewed> {
    return new Promise((resolve, reject) => this.#batch.submit({ job, resolve, reject }));
  }

  status(): Readiness {
    return { ready: true, detail: "reviews in the server's thread" };
  }

  async close(): Promise<void> {}
}
