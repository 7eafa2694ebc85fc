/**
 * The admission contract (docs/contract.md §5), pure: an `admission.k8s.io/v1` AdmissionReview in, the response
 * AdmissionReview (or a 400 for a body that is not one) out. No I/O and no rule logic: the rules
 * arrive as a {@link Reviewer}.
 */
import { z } from "zod";
import { compact } from "../synth/compact.ts";
import { ALLOCATION_DEFINITION, ALLOCATION_KIND } from "../synth/schema/allocation.ts";
import { KINDS, type CrKind } from "../synth/schema/kinds.ts";
import { isRecord } from "../synth/inventory/raw.ts";
import type { Finding, Reviewer } from "./site-review.ts";

/** What an endpoint reviews: one of the four CR kinds, or the Allocations that carry Git's lock. */
export type ReviewedKind = CrKind | typeof ALLOCATION_KIND;

/** The API group of `kind`. */
export function groupOf(kind: ReviewedKind): string {
  return kind === ALLOCATION_KIND ? ALLOCATION_DEFINITION.group : KINDS[kind].group;
}

/** The only AdmissionReview version the webhook speaks (`admissionReviewVersions: [v1]`). */
export const ADMISSION_API_VERSION = "admission.k8s.io/v1";

/** Kubernetes truncates longer warnings; we cut them ourselves so the cut is visible. */
export const MAX_WARNING_LENGTH = 256;

/**
 * No metalsynth CR nests deeper than about ten levels (managedFields included). The rules walk
 * objects recursively, so an absurdly deep one (possible under a package's free-form map) is denied
 * before they run rather than costing seconds and a stack overflow.
 */
export const MAX_OBJECT_DEPTH = 64;

/** How an admission request that was understood ended. */
export type AdmissionResult = "allowed" | "denied" | "internal-error" | "unavailable";

/** What the log line and the metrics say about one decision. */
export interface AdmissionSummary {
  readonly result: AdmissionResult;
  readonly uid: string;
  readonly operation: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly dryRun: boolean;
  readonly errors: number;
  readonly warnings: number;
  /**
   * The rules of the errors, each once, in the order first found (what `validate --format json`
   * reports as `rule`).
   * @default none
   */
  readonly rules?: readonly string[];
}

/** `status` of a denial: Kubernetes shows `message` to the user. */
export interface AdmissionStatus {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
}

/** The response AdmissionReview. */
export interface AdmissionReviewResponse {
  readonly apiVersion: typeof ADMISSION_API_VERSION;
  readonly kind: "AdmissionReview";
  readonly response: {
    readonly uid: string;
    readonly allowed: boolean;
    readonly status?: AdmissionStatus;
    readonly warnings?: readonly string[];
  };
}

/** The outcome of one request: a response to send with HTTP 200, or why the body was refused. */
export type AdmissionOutcome =
  | {
      readonly status: 200;
      readonly body: AdmissionReviewResponse;
      readonly summary: AdmissionSummary;
      /** What a review threw, for the log; the response already says "internal error". */
      readonly failure?: unknown;
      /**
       * An allowed CREATE or UPDATE that is no dry run: the object as reviewed, for the state to hold
       * until its informer delivers it (admissions in flight, decision 0041).
       */
      readonly admitted?: unknown;
    }
  | { readonly status: 400; readonly body: { readonly error: string } };

const AdmissionRequestSchema = z.object({
  uid: z.string().min(1),
  kind: z.object({ group: z.string(), version: z.string(), kind: z.string() }),
  operation: z.enum(["CREATE", "UPDATE", "DELETE", "CONNECT"]),
  name: z.string().optional(),
  namespace: z.string().optional(),
  object: z.unknown().optional(),
  dryRun: z.boolean().optional(),
});

const AdmissionReviewSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION, {
    error: (issue) => `expected ${ADMISSION_API_VERSION}, found ${JSON.stringify(issue.input) ?? "nothing"}`,
  }),
  kind: z.literal("AdmissionReview", {
    error: (issue) => `expected AdmissionReview, found ${JSON.stringify(issue.input) ?? "nothing"}`,
  }),
  request: AdmissionRequestSchema,
});

type AdmissionRequest = z.infer<typeof AdmissionRequestSchema>;

/** What a request is told while the webhook cannot review: nothing loaded yet. */
export const NOT_LOADED = "metalsynth has not loaded its inventory yet";

/**
 * Decides one AdmissionReview for the endpoint of `kind`. DELETE (and CONNECT) are allowed without
 * review; `dryRun` changes only whether an allowed object is returned as `admitted` (to be held as in
 * flight), since reviewing has no side effects. `reviewer` runs the rules
 * (and may throw on a bug); it is `undefined` while the inventory is not loaded, or while what the
 * webhook knows is not current (`unavailable` says why: a watch listing again, decision 0056): the
 * request is then denied as unavailable, never allowed blind.
 */
export function admit(
  kind: ReviewedKind,
  body: unknown,
  reviewer: Reviewer | undefined,
  unavailable: string = NOT_LOADED,
): AdmissionOutcome {
  const parsed = AdmissionReviewSchema.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.length === 0 ? "body" : issue.path.join(".")}: ${issue.message}`,
    );
    return invalid(`not an ${ADMISSION_API_VERSION} AdmissionReview: ${problems.join("; ")}`);
  }
  const request = parsed.data.request;
  const group = groupOf(kind);
  if (request.kind.kind !== kind || request.kind.group !== group) {
    return invalid(
      `this endpoint reviews ${kind} (${group}), not ${request.kind.kind} (${request.kind.group}): check the webhook's rules`,
    );
  }
  // Every request builds the summary, its copies in `respond` and the outcome: their new keys come
  // before a spread, which on Node 20 costs 0.09 µs a key against 0.7 µs after it (decisions 0026,
  // 0050). The summary's keys are in the order of the request's log line.
  const summary = {
    uid: request.uid,
    operation: request.operation,
    dryRun: request.dryRun === true,
    ...(request.namespace ? { namespace: request.namespace } : {}),
    ...(request.name ? { name: request.name } : {}),
  };
  if (request.operation === "DELETE" || request.operation === "CONNECT") {
    return respond(summary, "allowed", { uid: request.uid, allowed: true });
  }
  const object = request.object;
  if (!isRecord(object))
    return invalid(`request.object: ${request.operation} needs the ${kind} under review`);
  if (object.kind !== kind) {
    return invalid(`request.object.kind is ${JSON.stringify(object.kind) ?? "missing"}, not ${kind}`);
  }
  if (reviewer === undefined) {
    return respond(summary, "unavailable", {
      uid: request.uid,
      allowed: false,
      status: {
        code: 503,
        reason: "ServiceUnavailable",
        message: `${unavailable}; try again shortly`,
      },
    });
  }
  if (deeperThan(object, MAX_OBJECT_DEPTH)) {
    return respond({ ...summary, errors: 1 }, "denied", {
      uid: request.uid,
      allowed: false,
      status: {
        code: 403,
        reason: "Forbidden",
        message: `the ${kind} nests deeper than ${MAX_OBJECT_DEPTH} levels; metalsynth does not check such objects`,
      },
    });
  }
  const reviewed = withRequestIdentity(object, request);
  let findings: readonly Finding[];
  try {
    findings = reviewer.review(reviewed);
  } catch (failure) {
    return {
      ...respond(summary, "internal-error", {
        uid: request.uid,
        allowed: false,
        status: {
          code: 500,
          reason: "InternalError",
          message: `internal error: metalsynth could not check this ${kind} (request ${request.uid}; the webhook log has the details)`,
        },
      }),
      failure,
    };
  }
  const errors: string[] = [];
  const warnings: string[] = [];
  const rules = new Set<string>();
  for (const found of findings) {
    if (found.severity === "error") {
      errors.push(found.text);
      rules.add(found.rule);
    } else if (found.severity === "warning") warnings.push(truncate(found.text, MAX_WARNING_LENGTH));
  }
  const response = {
    uid: request.uid,
    allowed: errors.length === 0,
    ...(errors.length > 0 && { status: { code: 403, reason: "Forbidden", message: errors.join("; ") } }),
    ...(warnings.length > 0 && { warnings }),
  };
  const outcome = respond(
    {
      errors: errors.length,
      warnings: warnings.length,
      ...(rules.size > 0 && { rules: [...rules] }),
      ...summary,
    },
    errors.length === 0 ? "allowed" : "denied",
    response,
  );
  // A dry run stores nothing, so nothing is in flight; an Allocation is no CR a review plans.
  return response.allowed && !summary.dryRun && kind !== ALLOCATION_KIND
    ? { admitted: reviewed, ...outcome }
    : outcome;
}

function respond(
  summary: Omit<AdmissionSummary, "result" | "errors" | "warnings"> & {
    errors?: number;
    warnings?: number;
  },
  result: AdmissionResult,
  response: AdmissionReviewResponse["response"],
): AdmissionOutcome & { status: 200 } {
  return {
    status: 200,
    body: { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response },
    summary: { result, errors: 0, warnings: 0, ...summary },
  };
}

function invalid(error: string): AdmissionOutcome {
  return { status: 400, body: { error } };
}

/**
 * The object with the namespace and name the request names when the object itself leaves them out
 * (a namespaced create without `metadata.namespace`), so rules see what the API server will store.
 */
function withRequestIdentity(object: Record<string, unknown>, request: AdmissionRequest): unknown {
  const metadata = object.metadata === undefined ? {} : object.metadata;
  // A metadata that is not a map is the schema rule's to report, as it is.
  if (!isRecord(metadata)) return object;
  const namespace =
    typeof metadata.namespace !== "string" && request.namespace ? request.namespace : undefined;
  const name = typeof metadata.name !== "string" && request.name ? request.name : undefined;
  // The usual object names itself: reviewed as it came, not copied.
  if (metadata === object.metadata && namespace === undefined && name === undefined) return object;
  return { ...object, metadata: { ...metadata, ...compact({ namespace, name }) } };
}

/** Whether `value` has maps or lists nested more than `limit` deep (iterative: any depth is safe). */
function deeperThan(value: unknown, limit: number): boolean {
  // Two parallel stacks rather than one of {value, depth} pairs: this runs on every request.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const next = values.pop();
    const depth = depths.pop() ?? 0;
    if (typeof next !== "object" || next === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(next) ? next : Object.values(next)) {
      if (typeof child === "object" && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** `text` cut to `limit` characters (code points, so no half of a pair), the cut marked with `…`. */
function truncate(text: string, limit: number): string {
  // No longer in UTF-16 units than the limit means no longer in code points either.
  if (text.length <= limit) return text;
  const characters = Array.from(text);
  return characters.length <= limit ? text : `${characters.slice(0, limit - 1).join("")}…`;
}
