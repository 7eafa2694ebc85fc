/**
 * From a request to its decision (decision 0056): wait for current knowledge, review, and commit
 * what is admitted.
 *
 * - **Current first.** While the knowledge is not current (a watch listing again after a 410, a
 *   feed failing), a request waits up to {@link CURRENT_WAIT_MS} for it, then is refused as
 *   unavailable: never reviewed against what the API server may no longer hold.
 * - **Commits in order.** An allowed CREATE or UPDATE that is no dry run is held (the state reviews
 *   later requests as if it were stored, decision 0041), and with a {@link AdmissionRecord} first
 *   recorded where every replica reads it. Commits run one at a time. A review that saw fewer holds
 *   than there are at its commit (another request was admitted meanwhile, here or, through the
 *   record, by another replica) is reviewed again against them, so two admissions never miss each
 *   other; after {@link MAX_ATTEMPTS} the request is refused as busy.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { admit, type AdmissionOutcome, type ReviewedKind } from "./admission.ts";
import type { ReviewJob, Reviewed, Reviews } from "./reviews.ts";
import type { Knowledge } from "./state.ts";

/** How long a request waits for the knowledge to be current before it is refused as unavailable. */
export const CURRENT_WAIT_MS = 1000;

/** Reviews of one request at most, the first included, before it is refused as busy. */
export const MAX_ATTEMPTS = 4;

/**
 * Admissions recorded in the API server, shared by the replicas (`admission-record.ts`). Recording
 * an object also holds it, and holds what other replicas recorded meanwhile.
 */
export interface AdmissionRecord {
  /**
   * Records `object` (admitted, no dry run) if the record has not changed since the review that
   * admitted it saw it (`holds`, the state's hold count then): `"recorded"` (and held), or
   * `"changed"` (what changed is now held; review again). Rejects when the API server can't be
   * written.
   */
  record(object: unknown, holds: number): Promise<"recorded" | "changed">;
}

/** Decides requests (see the module comment). */
export class Admissions {
  readonly #knowledge: Knowledge;
  readonly #reviews: Reviews;
  readonly #record: AdmissionRecord | undefined;
  #commits: Promise<unknown> = Promise.resolve();

  constructor(knowledge: Knowledge, reviews: Reviews, record?: AdmissionRecord) {
    this.#knowledge = knowledge;
    this.#reviews = reviews;
    this.#record = record;
  }

  /** The decision for the request of `kind` with `body`. */
  async decide(kind: ReviewedKind, body: Uint8Array): Promise<AdmissionOutcome> {
    const unavailable = await this.#whenCurrent();
    const job: ReviewJob = { kind, body, ...(unavailable !== undefined && { unavailable }) };
    const reviewed = await this.#reviews.review(job);
    const { outcome } = reviewed;
    if (outcome.status !== 200 || outcome.admitted === undefined || !this.#knowledge.holdsAdmitted)
      return outcome;
    // An UPDATE that changes nothing a review reads (a GitOps agent re-applying) holds nothing.
    if (this.#knowledge.unchanged(outcome.admitted)) return outcome;
    const committed = this.#commits.then(() => this.#commit(job, reviewed));
    this.#commits = committed.catch(() => undefined);
    return committed;
  }

  async #whenCurrent(): Promise<string | undefined> {
    let stale = this.#knowledge.staleness();
    const deadline = Date.now() + CURRENT_WAIT_MS;
    while (stale !== undefined && Date.now() < deadline) {
      await sleep(25);
      stale = this.#knowledge.staleness();
    }
    return stale;
  }

  /** Holds (and records) the admitted object, reviewing again first when holds came meanwhile. */
  async #commit(job: ReviewJob, first: Reviewed): Promise<AdmissionOutcome> {
    let reviewed = first;
    for (let attempt = 1; ; attempt++) {
      const { outcome } = reviewed;
      if (outcome.status !== 200 || outcome.admitted === undefined) return outcome;
      if (reviewed.holds === this.#knowledge.holdCount()) {
        if (this.#record === undefined) {
          this.#knowledge.hold(outcome.admitted);
          return outcome;
        }
        let recorded: "recorded" | "changed";
        try {
          recorded = await this.#record.record(outcome.admitted, reviewed.holds);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          return unavailable(job, `metalsynth could not record this admission in the API server (${reason})`);
        }
        if (recorded === "recorded") return outcome;
      }
      if (attempt >= MAX_ATTEMPTS)
        return unavailable(job, `${MAX_ATTEMPTS} other admissions were decided while this one was reviewed`);
      reviewed = await this.#reviews.review(job);
    }
  }
}

/** `job` refused as unavailable, with `reason`. */
function unavailable(job: ReviewJob, reason: string): AdmissionOutcome {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(job.body)) as unknown;
  } catch {
    return { status: 400, body: { error: "request body is not JSON" } };
  }
  return admit(job.kind, body, undefined, reason);
}
