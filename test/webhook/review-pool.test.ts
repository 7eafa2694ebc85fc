/**
 * The review workers (decision 0056): they answer as a review in the server's thread does, follow
 * the state's changes and holds, and a review over its budget is refused while the other worker
 * answers the requests that came meanwhile; the worker is replaced and reviews go on.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildInventory } from "../../synth/inventory/load.ts";
import { jsonLogger } from "../../webhook/log.ts";
import { ReviewPool } from "../../webhook/review-pool.ts";
import { InlineReviews, type ReviewJob } from "../../webhook/reviews.ts";
import { WebhookState } from "../../webhook/state.ts";
import { generateBmhs } from "../builders/inventory.ts";
import { admissionReview, provisioning, type Cr } from "../builders/reviews.ts";

/**
 * Enough hosts that the costly review below (1,000 walks of the inventory, one per worker) takes
 * many times {@link BUDGET_MS} on a fast, quiet machine: 8–10 s here.
 */
const HOSTS = 4000;
/** Far above a cheap review, even on a loaded machine; far below the costly one. */
const BUDGET_MS = 500;

function job(cr: Cr, options: { dryRun?: boolean } = {}): ReviewJob {
  return {
    kind: cr.kind,
    body: new TextEncoder().encode(JSON.stringify(admissionReview(cr, options))),
  };
}

/**
 * A Provisioning of `workers` workers that no host can take, each asking a disk of a different size
 * that no host has. Costly: each is explained host by host, and a host is refused only by the disk
 * filter, after its CPUs and memory passed (workers that ask alike would be judged once).
 */
function unplaceable(workers: number): Cr {
  return provisioning({
    name: "too-big",
    masters: [["master-1", { cpu: 8 }]],
    workers: Array.from(
      { length: workers },
      (_, index) =>
        [
          `worker-${index}`,
          { cpu: 1, memory: "1Gi", hardware: { disk: { minSizeGibibytes: 100_000 + index } } },
        ] as const,
    ),
  });
}

describe("the review pool", () => {
  const logs: Record<string, unknown>[] = [];
  const state = new WebhookState(Date.now, true);
  const inventory = buildInventory(
    [...generateBmhs(HOSTS, { seed: 36 })].map((value, index) => ({
      value,
      source: { file: "generated", line: index + 1, column: 1 },
    })),
  ).inventory;
  const free = inventory.hosts.find(
    (host) => host.osInstalled && host.sipOwner === undefined && host.nics[0]?.ipv4 !== undefined,
  );
  const mac = free?.nics[0]?.mac ?? "";
  const byMac = (name: string) => provisioning({ name, masters: [["master-1", { "mac-address": mac }]] });
  let pool: ReviewPool;

  beforeAll(async () => {
    state.update({ inventory });
    pool = new ReviewPool({
      state,
      log: jsonLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
      workers: 2,
      budgetMs: BUDGET_MS,
      queueWaitMs: 60_000,
    });
    await vi.waitFor(() => expect(pool.status().ready).toBe(true), { timeout: 60_000, interval: 50 });
  }, 90_000);
  afterAll(async () => pool?.close());

  it("answers what a review in the server's thread answers", async () => {
    const inline = new InlineReviews(state);
    for (const cr of [byMac("c1"), unplaceable(2), provisioning({ name: "c2", masters: [] })]) {
      const [inWorker, here] = await Promise.all([pool.review(job(cr)), inline.review(job(cr))]);
      expect(inWorker.outcome.body).toEqual(here.outcome.body);
    }
  });

  it("sees the state's holds and changes", async () => {
    state.hold((admissionReview(byMac("first")) as { request: { object: unknown } }).request.object);
    const second = await pool.review(job(byMac("second")));
    expect(JSON.stringify(second.outcome.body)).toMatch(/already requested by mac-address for cluster/);
    expect(second.holds).toBe(state.holdCount());

    // The host leaves the inventory: a CR naming it hears so from the workers.
    state.update({
      inventory: buildInventory(
        [...generateBmhs(HOSTS, { seed: 36 })]
          .filter((value) => !JSON.stringify(value).includes(mac))
          .map((value, index) => ({ value, source: { file: "generated", line: index + 1, column: 1 } })),
      ).inventory,
    });
    const gone = await pool.review(job(byMac("third"), { dryRun: true }));
    expect(JSON.stringify(gone.outcome.body)).toContain("matches no BareMetalHost");
  });

  it("refuses a review over its budget, answers the others meanwhile, and replaces the worker", async () => {
    // Both workers idle and warm first: each has reviewed with the state as it is now.
    await Promise.all([1, 2].map((n) => pool.review(job(byMac(`warm-${n}`), { dryRun: true }))));
    const answered: string[] = [];
    const costly = pool.review(job(unplaceable(1000))).then((reviewed) => {
      answered.push("costly");
      return reviewed;
    });
    // Sent after the costly one: the other worker answers it first.
    const cheap = pool.review(job(provisioning({ name: "cheap", masters: [] }))).then((reviewed) => {
      answered.push("cheap");
      return reviewed;
    });
    const [slow, fast] = await Promise.all([costly, cheap]);
    expect(answered).toEqual(["cheap", "costly"]);
    expect(fast.outcome.status).toBe(200);
    expect(slow.outcome.body).toMatchObject({
      response: {
        allowed: false,
        status: {
          code: 403,
          message: expect.stringMatching(
            /^metalsynth stopped reviewing this Provisioning after 0.5 s, its review budget/,
          ),
        },
      },
    });
    expect(logs).toContainEqual(expect.objectContaining({ msg: "review over budget; worker replaced" }));
    expect(pool.status().detail).toMatch(/1 replaced after a review over budget/);
    // The replacement starts from the state's knowledge, holds included.
    await expect
      .poll(() => pool.status().detail, { timeout: 60_000 })
      .toMatch(/^review workers: 2 of 2 ready/);
    const after = await Promise.all(
      [1, 2, 3].map((n) => pool.review(job(byMac(`after-${n}`), { dryRun: true }))),
    );
    for (const reviewed of after)
      expect(JSON.stringify(reviewed.outcome.body)).toContain("matches no BareMetalHost");
  }, 120_000);

  it("takes back the jobs batched behind a long review for the other worker", async () => {
    await expect
      .poll(() => pool.status().detail, { timeout: 60_000 })
      .toMatch(/^review workers: 2 of 2 ready/);
    const answered: string[] = [];
    const send = (name: string, cr: Cr) =>
      pool.review(job(cr, { dryRun: true })).then((reviewed) => {
        answered.push(name);
        return reviewed;
      });
    // One turn: each worker takes a cheap one; the three after wait, and the first worker back
    // takes them as one batch, the costly one first.
    const cheap = (name: string) => provisioning({ name, masters: [] });
    const reviews = [
      send("first", cheap("first")),
      send("second", cheap("second")),
      send("costly", unplaceable(1000)),
      send("third", cheap("third")),
      send("fourth", cheap("fourth")),
    ];
    const [, , costly, third, fourth] = await Promise.all(reviews);
    expect(answered.at(-1)).toBe("costly");
    expect(JSON.stringify(costly?.outcome.body)).toContain("its review budget");
    for (const reviewed of [third, fourth]) expect(reviewed?.outcome.status).toBe(200);
  }, 120_000);
});
