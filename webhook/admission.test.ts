import { describe, expect, it } from "vitest";
import { admissionReview, provisioning } from "../test/builders/reviews.ts";
import { MAX_OBJECT_DEPTH, MAX_WARNING_LENGTH, admit } from "./admission.ts";
import type { Finding, Reviewer } from "./site-review.ts";

const cr = provisioning({ name: "c1", masters: [["master-1", { "mac-address": "00:c6:14:04:61:b3" }]] });
const error = (text: string): Finding => ({ rule: "mac-unknown", severity: "error", text });
const warning = (text: string): Finding => ({ rule: "host-not-ready", severity: "warning", text });
const returning = (findings: Finding[]): Reviewer => ({ review: () => findings });
const never: Reviewer = {
  review: () => {
    throw new Error("must not be reviewed");
  },
};

function response(outcome: ReturnType<typeof admit>) {
  if (outcome.status !== 200) throw new Error(`expected a response, got ${JSON.stringify(outcome.body)}`);
  return outcome.body.response;
}

describe("admit", () => {
  it("joins every error, each with its path, into one 403 Forbidden message, and keeps warnings", () => {
    const outcome = admit(
      "Provisioning",
      admissionReview(cr),
      returning([error("spec.a: one"), warning("spec.b: careful"), error("spec.c: two")]),
    );
    expect(response(outcome)).toEqual({
      uid: "uid-c1",
      allowed: false,
      status: { code: 403, reason: "Forbidden", message: "spec.a: one; spec.c: two" },
      warnings: ["spec.b: careful"],
    });
    expect(outcome.status === 200 && outcome.summary).toMatchObject({
      result: "denied",
      errors: 2,
      warnings: 1,
      rules: ["mac-unknown"],
    });
  });

  it("cuts warnings to 256 characters, marking the cut", () => {
    const long = `spec.masters[0].master-1: ${"ü".repeat(400)}`;
    const [cut] =
      response(admit("Provisioning", admissionReview(cr), returning([warning(long)]))).warnings ?? [];
    expect(Array.from(cut ?? "")).toHaveLength(MAX_WARNING_LENGTH);
    expect(cut).toMatch(/^spec\.masters\[0\]\.master-1: ü+…$/);
  });

  it.each(["DELETE", "CONNECT"])("allows %s without reviewing", (operation) => {
    const body = admissionReview(cr, { operation: "DELETE" });
    (body.request as { operation: string }).operation = operation;
    expect(response(admit("Provisioning", body, never))).toEqual({ uid: "uid-c1", allowed: true });
  });

  it.each([
    { case: "an allowed CREATE", options: {}, findings: [], held: true },
    { case: "an allowed UPDATE", options: { operation: "UPDATE" as const }, findings: [], held: true },
    {
      case: "an allowed CREATE with warnings",
      options: {},
      findings: [warning("spec.b: careful")],
      held: true,
    },
    { case: "an allowed dry run", options: { dryRun: true }, findings: [], held: false },
    { case: "a denied CREATE", options: {}, findings: [error("spec.a: one")], held: false },
  ])("returns the object to hold in flight for $case: $held", ({ options, findings, held }) => {
    const outcome = admit("Provisioning", admissionReview(cr, options), returning(findings));
    const admitted = outcome.status === 200 ? outcome.admitted : undefined;
    if (held) expect(admitted).toMatchObject({ kind: "Provisioning", metadata: { name: "c1" } });
    else expect(admitted).toBeUndefined();
  });

  it("holds nothing for a DELETE", () => {
    const outcome = admit("Provisioning", admissionReview(cr, { operation: "DELETE" }), never);
    expect(outcome.status === 200 && outcome.admitted).toBeUndefined();
  });

  it("denies as unavailable, never allows, while no inventory is loaded", () => {
    expect(response(admit("Provisioning", admissionReview(cr), undefined))).toMatchObject({
      allowed: false,
      status: { code: 503, reason: "ServiceUnavailable" },
    });
  });

  it("denies with an internal error when the review throws, handing the failure to the caller", () => {
    const failure = new RangeError("boom");
    const outcome = admit("Provisioning", admissionReview(cr, { uid: "u-1" }), {
      review: () => {
        throw failure;
      },
    });
    expect(outcome).toMatchObject({
      status: 200,
      failure,
      summary: { result: "internal-error" },
      body: { response: { allowed: false, status: { code: 500, reason: "InternalError" } } },
    });
    expect(response(outcome).status?.message).toMatch(/^internal error: .*request u-1/);
  });

  it("gives the rules the namespace and name of the request when the object leaves them out", () => {
    const seen: unknown[] = [];
    const body = admissionReview({ ...cr, metadata: { name: "", labels: { cluster: "c1" } } });
    Object.assign(body.request as object, { namespace: "edge-z", name: "from-request" });
    delete (
      (body.request as { object: { metadata: Record<string, unknown> } }).object.metadata as { name?: string }
    ).name;
    admit("Provisioning", body, {
      review: (object) => {
        seen.push(object);
        return [];
      },
    });
    expect(seen).toMatchObject([{ metadata: { namespace: "edge-z", name: "from-request" } }]);
  });

  it("denies an object nested deeper than any CR, without running the rules", () => {
    let deep: unknown = "bottom";
    for (let level = 0; level < MAX_OBJECT_DEPTH; level++) deep = [deep];
    const body = admissionReview({ ...cr, spec: { masters: [], KUDPlugins: [], nested: deep } });
    expect(response(admit("Provisioning", body, never)).status?.message).toBe(
      `the Provisioning nests deeper than ${MAX_OBJECT_DEPTH} levels; metalsynth does not check such objects`,
    );
  });

  it.each<[string, (body: Record<string, unknown>) => unknown, RegExp]>([
    ["a body that is no object", () => "text", /^not an admission\.k8s\.io\/v1 AdmissionReview: body: /],
    [
      "another version",
      (body) => ({ ...body, apiVersion: "admission.k8s.io/v1beta1" }),
      /apiVersion: expected admission\.k8s\.io\/v1, found "admission\.k8s\.io\/v1beta1"/,
    ],
    ["another kind", (body) => ({ ...body, kind: "Pod" }), /kind: expected AdmissionReview, found "Pod"/],
    ["no request", (body) => ({ ...body, request: undefined }), /request: /],
    ["no uid", (body) => ({ ...body, request: { ...(body.request as object), uid: "" } }), /request\.uid: /],
    [
      "a request for another kind than the endpoint's",
      (body) => ({
        ...body,
        request: {
          ...(body.request as object),
          kind: { group: "airship.airshipit.org", version: "v1", kind: "SIPCluster" },
        },
      }),
      /^this endpoint reviews Provisioning \(bpa\.akraino\.org\), not SIPCluster \(airship\.airshipit\.org\)/,
    ],
    [
      "a CREATE without the object",
      (body) => ({ ...body, request: { ...(body.request as object), object: null } }),
      /^request\.object: CREATE needs the Provisioning under review$/,
    ],
    [
      "an object of another kind than the request says",
      (body) => ({ ...body, request: { ...(body.request as object), object: { ...cr, kind: "List" } } }),
      /^request\.object\.kind is "List", not Provisioning$/,
    ],
  ])("refuses %s as a bad request", (_name, change, message) => {
    const outcome = admit("Provisioning", change(admissionReview(cr)), never);
    expect(outcome.status).toBe(400);
    expect(outcome.body).toEqual({ error: expect.stringMatching(message) });
  });
});
