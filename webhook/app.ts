/**
 * The webhook's HTTP surface (docs/contract.md §5) as an express app that never listens: `main.ts` serves it over
 * TLS, tests and the benchmark serve it on their own servers. Rule logic stays in synth/, admission
 * logic in admission.ts; this module routes, parses bodies within limits, and measures and logs
 * every admission request.
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from "express";
import { ALLOCATION_DEFINITION } from "../synth/schema/allocation.ts";
import { KINDS } from "../synth/schema/kinds.ts";
import type { AdmissionOutcome, ReviewedKind } from "./admission.ts";
import { Admissions, type AdmissionRecord } from "./admissions.ts";
import type { Logger } from "./log.ts";
import type { RequestResult, WebhookMetrics } from "./metrics.ts";
import { InlineReviews, type Reviews } from "./reviews.ts";
import type { Knowledge } from "./state.ts";

/** Largest request body accepted; the API server's own limit for an object is 1.5 MiB (docs/contract.md §5). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * `POST /validate/<singular>` → the kind reviewed there (`/validate/provisioning`, …, and
 * `/validate/allocation`, decision 0056). The deployment chart derives the webhook configuration's
 * paths from the same definitions.
 */
const VALIDATE_PATHS: ReadonlyMap<string, ReviewedKind> = new Map(
  [...Object.values(KINDS), ALLOCATION_DEFINITION].map((definition) => [
    definition.singular,
    definition.kind,
  ]),
);

/** What {@link createApp} needs. */
export interface WebhookDeps {
  /** The current knowledge and readiness. */
  readonly knowledge: Knowledge;
  /**
   * Where bodies are reviewed: the review workers (decision 0056).
   * @default reviews in this thread, against `knowledge`
   */
  readonly reviews?: Reviews;
  /** Where admissions are recorded for the other replicas; none: held in this one only. */
  readonly record?: AdmissionRecord;
  readonly metrics: WebhookMetrics;
  /** Receives one line per admission request, and every failure. */
  readonly log: Logger;
  /**
   * A monotonic clock in milliseconds, for latencies.
   * @default performance.now
   */
  readonly clock?: () => number;
}

/** What is known about an admission request while it is handled, for its metrics and log line. */
interface Tracked {
  readonly kind: ReviewedKind | "unknown";
  readonly started: number;
  outcome?: AdmissionOutcome;
  /** Why the body was refused before it reached admission (size, syntax), or a bug. */
  problem?: { readonly message: string; readonly error?: unknown };
}

/** The webhook's express app. */
export function createApp(deps: WebhookDeps): express.Express {
  const { knowledge, metrics, log } = deps;
  const clock = deps.clock ?? (() => performance.now());
  const reviews = deps.reviews ?? new InlineReviews(knowledge);
  const admissions = new Admissions(knowledge, reviews, deps.record);
  const tracked = new WeakMap<Request, Tracked>();
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");

  app.get("/healthz", (_request, response) => {
    response.type("text/plain").send("ok\n");
  });
  app.get("/readyz", (_request, response) => {
    const readiness = knowledge.readiness();
    const reviewing = reviews.status();
    const ready = readiness.ready && reviewing.ready;
    const detail = deps.reviews === undefined ? readiness.detail : `${readiness.detail}\n${reviewing.detail}`;
    response
      .status(ready ? 200 : 503)
      .type("text/plain")
      .send(`${detail}\n`);
  });
  app.get("/metrics", async (_request, response) => {
    response.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const track: RequestHandler = (request, response, next) => {
    const kind = VALIDATE_PATHS.get(String(request.params.kind)) ?? "unknown";
    const entry: Tracked = { kind, started: clock() };
    tracked.set(request, entry);
    // `close` fires after the response is sent, and also when the client goes away first.
    response.on("close", () => record(entry, response.statusCode, response.writableFinished));
    if (kind === "unknown") {
      entry.problem = { message: `no webhook at ${request.path}` };
      response.status(404).json({ error: entry.problem.message });
      return;
    }
    next();
  };

  // The body's bytes, parsed where it is reviewed (a review worker): this thread never spends a
  // large body's parse.
  const readBody = express.raw({
    limit: MAX_BODY_BYTES,
    // The API server sends application/json; anything else is read too and judged by its content.
    type: () => true,
    // Nothing legitimate compresses an AdmissionReview, and inflating is work an attacker chooses.
    inflate: false,
  });

  const review: RequestHandler = (request, response, next) => {
    const entry = tracked.get(request);
    if (entry === undefined || entry.kind === "unknown") throw new Error("admission route without tracking");
    const body: unknown = request.body;
    const bytes = body instanceof Uint8Array ? body : new Uint8Array();
    admissions.decide(entry.kind, bytes).then(
      (outcome) => {
        entry.outcome = outcome;
        answerJson(response, outcome.status, outcome.body);
      },
      (error: unknown) => next(error),
    );
  };

  app.post("/validate/:kind", track, readBody, review);

  app.use((request, response) => {
    response.status(404).json({ error: `no route for ${request.method} ${request.path}` });
  });

  const failed: ErrorRequestHandler = (error: unknown, request, response, _next) => {
    const { status, message } = bodyProblem(error);
    const entry = tracked.get(request);
    if (entry) entry.problem = { message, ...(status >= 500 ? { error } : {}) };
    else log.error("request failed", { method: request.method, path: request.path, error });
    if (!response.headersSent) response.status(status).json({ error: message });
  };
  app.use(failed);

  function record(entry: Tracked, status: number, finished: boolean): void {
    const result = resultOf(entry, status);
    const seconds = (clock() - entry.started) / 1000;
    metrics.requests.inc({ kind: entry.kind, result });
    metrics.latency.observe({ kind: entry.kind }, seconds);
    const outcome = entry.outcome;
    const fields = {
      kind: entry.kind,
      status,
      result,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      ...(finished ? {} : { aborted: true }),
      ...(outcome?.status === 200 ? outcome.summary : {}),
      ...(outcome?.status === 400 ? { problem: outcome.body.error } : {}),
      ...(entry.problem ? { problem: entry.problem.message } : {}),
    };
    if (outcome?.status === 200 && outcome.failure !== undefined) {
      log.error("admission", { ...fields, error: outcome.failure });
    } else if (entry.problem?.error !== undefined) {
      log.error("admission", { ...fields, error: entry.problem.error });
    } else {
      log.info("admission", fields);
    }
  }

  return app;
}

/**
 * Answers `body` as JSON through Node's own response API, with the headers express's `json` would
 * set. Express's `json` also parses and formats the content type and checks freshness for every
 * answer, which an admission answer has no use for; without them the webhook served 6–8 % more
 * requests a second at its peak on the development machine.
 */
function answerJson(response: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

function resultOf(entry: Tracked, status: number): RequestResult {
  if (entry.outcome?.status === 200) return entry.outcome.summary.result;
  if (status === 404) return "not-found";
  if (status === 413) return "too-large";
  if (status >= 400 && status < 500) return "malformed";
  return "internal-error";
}

/** The HTTP status and message for an error raised before admission (body-parser's, or a bug). */
function bodyProblem(error: unknown): { status: number; message: string } {
  const type = typeof error === "object" && error !== null ? Reflect.get(error, "type") : undefined;
  const detail = error instanceof Error ? error.message : String(error);
  switch (type) {
    case "entity.too.large":
      return { status: 413, message: `request body is larger than ${MAX_BODY_BYTES} bytes (3 MiB)` };
    case "entity.parse.failed":
      return { status: 400, message: `request body is not JSON: ${detail}` };
    case "encoding.unsupported":
    case "charset.unsupported":
      return { status: 415, message: `request body can't be read: ${detail}` };
    case "request.aborted":
    case "request.size.invalid":
    case "stream.encoding.set":
      return { status: 400, message: `request body was not received whole: ${detail}` };
    default:
      return { status: 500, message: "internal error" };
  }
}
