import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { TickBatch } from "./tick-batch.ts";

/** A batch whose phases record what they did, in order. */
function recordingBatch(options: { decideFails?: string; deliverFails?: string } = {}) {
  const calls: string[] = [];
  const batch = new TickBatch<string, string>(
    (job) => {
      calls.push(`decide ${job}`);
      if (job === options.decideFails) throw new Error(`no decision for ${job}`);
      return job.toUpperCase();
    },
    (job, result) => {
      calls.push(`deliver ${job} ${result}`);
      if (job === options.deliverFails) throw new Error(`no delivery for ${job}`);
    },
    (job, error) => calls.push(`fail ${job}: ${(error as Error).message}`),
  );
  return { batch, calls };
}

describe("TickBatch", () => {
  it("decides every job of a tick, in order, before it delivers any", async () => {
    const { batch, calls } = recordingBatch();
    batch.submit("a");
    batch.submit("b");
    batch.submit("c");
    expect(calls).toEqual([]);
    await nextTurn();
    expect(calls).toEqual(["decide a", "decide b", "decide c", "deliver a A", "deliver b B", "deliver c C"]);
  });

  it("makes a batch of each tick", async () => {
    const { batch, calls } = recordingBatch();
    batch.submit("a");
    await nextTurn();
    batch.submit("b");
    await nextTurn();
    expect(calls).toEqual(["decide a", "deliver a A", "decide b", "deliver b B"]);
  });

  it("fails only the job whose decision throws, and delivers the others", async () => {
    const { batch, calls } = recordingBatch({ decideFails: "b" });
    batch.submit("a");
    batch.submit("b");
    batch.submit("c");
    await nextTurn();
    expect(calls).toEqual([
      "decide a",
      "decide b",
      "fail b: no decision for b",
      "decide c",
      "deliver a A",
      "deliver c C",
    ]);
  });

  it("fails a job whose delivery throws, and still delivers the rest", async () => {
    const { batch, calls } = recordingBatch({ deliverFails: "a" });
    batch.submit("a");
    batch.submit("b");
    await nextTurn();
    expect(calls).toEqual([
      "decide a",
      "decide b",
      "deliver a A",
      "fail a: no delivery for a",
      "deliver b B",
    ]);
  });

  it("runs a job submitted while a batch runs in the next tick", async () => {
    const calls: string[] = [];
    const batch: TickBatch<string, string> = new TickBatch(
      (job) => {
        calls.push(`decide ${job}`);
        return job;
      },
      (job) => {
        calls.push(`deliver ${job}`);
        if (job === "a") batch.submit("late");
      },
      () => calls.push("fail"),
    );
    batch.submit("a");
    await nextTurn();
    expect(calls).toEqual(["decide a", "deliver a"]);
    await nextTurn();
    expect(calls).toEqual(["decide a", "deliver a", "decide late", "deliver late"]);
  });
});
