/**
 * From a request to its decision (decision 0056): requests wait for current knowledge, commits run
 * in order and review again what another admission overtook, and the shared record's word counts.
 */
import { describe, expect, it } from "vitest";
import { makeInventory } from "../test/builders/inventory.ts";
import { admissionReview, provisioning, type Cr } from "../test/builders/reviews.ts";
import { readResources } from "../synth/site/resources.ts";
import { Admissions, type AdmissionRecord } from "./admissions.ts";
import { InlineReviews } from "./reviews.ts";
import { objectDocument } from "./site-review.ts";
import { WebhookState, type Feed, type Readiness } from "./state.ts";

const inventory = makeInventory(
  ["01", "02"].map((suffix) => ({
    name: `node-${suffix}`,
    nics: [{ name: "eno1", mac: `00:00:00:00:00:${suffix}`, ipv4: `10.0.0.${Number(suffix)}` }],
  })),
);

const byMac = (name: string, mac = "00:00:00:00:00:01") =>
  provisioning({ name, masters: [["master-1", { "mac-address": mac }]] });

const body = (cr: Cr, dryRun = false) =>
  new TextEncoder().encode(JSON.stringify(admissionReview(cr, { dryRun })));

/** A state fed with the two hosts, holding admissions (as `--from-cluster` does). */
function fed(): WebhookState {
  const state = new WebhookState(Date.now, true);
  state.update({ inventory, clusterResources: [] });
  return state;
}

/** The response of an outcome. */
function answer(outcome: Awaited<ReturnType<Admissions["decide"]>>) {
  if (outcome.status !== 200) throw new Error(`HTTP ${outcome.status}`);
  return outcome.body.response;
}

describe("Admissions", () => {
  it("lets a request wait for current knowledge, and reviews it once current", async () => {
    const state = fed();
    let status: Readiness = { ready: false, detail: "cluster: baremetalhosts: listing again" };
    const feed: Feed = { status: () => status, close: async () => {} };
    state.addFeed(feed);
    const admissions = new Admissions(state, new InlineReviews(state));
    const decided = admissions.decide("Provisioning", body(byMac("east"), true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = { ready: true, detail: "cluster: watching" };
    expect(answer(await decided)).toMatchObject({ allowed: true });
  });

  it("refuses as unavailable, saying why, what is still not current after the wait", async () => {
    const state = fed();
    state.addFeed({
      status: () => ({ ready: false, detail: "cluster: baremetalhosts: listing again" }),
      close: async () => {},
    });
    const admissions = new Admissions(state, new InlineReviews(state));
    expect(answer(await admissions.decide("Provisioning", body(byMac("east"))))).toEqual({
      uid: "uid-east",
      allowed: false,
      status: {
        code: 503,
        reason: "ServiceUnavailable",
        message:
          "metalsynth is not current with what it watches (cluster: baremetalhosts: listing again); try again shortly",
      },
    });
  });

  it("admits one of two conflicting requests decided together, whatever their order", async () => {
    const state = fed();
    const admissions = new Admissions(state, new InlineReviews(state));
    const answers = await Promise.all(
      ["east", "west"].map((name) => admissions.decide("Provisioning", body(byMac(name)))),
    );
    expect(answers.map((outcome) => answer(outcome).allowed).sort()).toEqual([false, true]);
    expect(state.holdCount()).toBe(1);
  });

  it("reviews again against what another replica recorded meanwhile, and refuses what conflicts", async () => {
    const state = fed();
    const recorded: unknown[] = [];
    let first = true;
    const record: AdmissionRecord = {
      async record(object, holds) {
        if (holds !== state.holdCount()) return "changed";
        if (first) {
          // Another replica admitted a CR naming the same host, and wrote first.
          first = false;
          state.hold((admissionReview(byMac("north")) as { request: { object: unknown } }).request.object);
          return "changed";
        }
        recorded.push(object);
        state.hold(object);
        return "recorded";
      },
    };
    const admissions = new Admissions(state, new InlineReviews(state), record);
    const refused = answer(await admissions.decide("Provisioning", body(byMac("east"))));
    expect(refused).toMatchObject({
      allowed: false,
      status: { message: expect.stringContaining("edge-a/north") },
    });
    expect(recorded).toEqual([]);
    // Another host: recorded, once.
    expect(
      answer(await admissions.decide("Provisioning", body(byMac("west", "00:00:00:00:00:02")))),
    ).toMatchObject({
      allowed: true,
    });
    expect(recorded).toHaveLength(1);
  });

  it("records nothing for a dry run, nor for an UPDATE that changes nothing a review reads", async () => {
    const state = fed();
    const recorded: unknown[] = [];
    const record: AdmissionRecord = {
      async record(object) {
        recorded.push(object);
        state.hold(object);
        return "recorded";
      },
    };
    const admissions = new Admissions(state, new InlineReviews(state), record);
    expect(answer(await admissions.decide("Provisioning", body(byMac("east"), true))).allowed).toBe(true);
    expect(recorded).toHaveLength(0);
    // The informer delivered it: re-applied unchanged (a GitOps agent's reconcile), nothing to hold.
    const { resources } = readResources([objectDocument(byMac("east"), "cluster")]);
    state.update({ clusterResources: resources });
    expect(answer(await admissions.decide("Provisioning", body(byMac("east")))).allowed).toBe(true);
    expect(recorded).toHaveLength(0);
    expect(
      answer(await admissions.decide("Provisioning", body(byMac("west", "00:00:00:00:00:02")))).allowed,
    ).toBe(true);
    expect(recorded).toHaveLength(1);
  });

  it("refuses as unavailable what it cannot record in the API server", async () => {
    const state = fed();
    const record: AdmissionRecord = {
      record: () => Promise.reject(new Error("403 configmaps is forbidden")),
    };
    const admissions = new Admissions(state, new InlineReviews(state), record);
    expect(answer(await admissions.decide("Provisioning", body(byMac("east"))))).toMatchObject({
      allowed: false,
      status: {
        code: 503,
        message:
          "metalsynth could not record this admission in the API server (403 configmaps is forbidden); try again shortly",
      },
    });
    expect(state.holdCount()).toBe(0);
  });
});
