import { describe, expect, it, vi } from "vitest";
import { ReviewProgress } from "./review-progress.ts";

/** The pool's side and the worker's, over the same memory. */
function sides(): { pool: ReviewProgress; worker: ReviewProgress } {
  const pool = new ReviewProgress();
  return { pool, worker: new ReviewProgress(pool.buffer) };
}

describe("ReviewProgress", () => {
  it("hands each offered job to exactly one side: the worker takes it or the pool takes it back", () => {
    const { pool, worker } = sides();
    pool.offer(0, 10);
    pool.offer(1, 11);
    expect(worker.take(0, 10)).toBe(true);
    expect(pool.takeBack(0, 10)).toBe(false);
    expect(pool.takeBack(1, 11)).toBe(true);
    expect(worker.take(1, 11)).toBe(false);
  });

  it("takes nothing it was not sent: a slot offered again holds the next batch's job", () => {
    const { pool, worker } = sides();
    pool.offer(0, 20);
    expect(pool.takeBack(0, 20)).toBe(true);
    pool.offer(0, 30);
    // The worker, still going through the first batch, finds job 30 where job 20 was.
    expect(worker.take(0, 20)).toBe(false);
    expect(worker.take(0, 30)).toBe(true);
  });

  it("tells the pool which review is in progress, and since when", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      const { pool, worker } = sides();
      expect(pool.runningSince(7)).toBeUndefined();
      worker.start(7);
      expect(pool.runningSince(7)).toBe(1_000_000);
      expect(pool.runningSince(3)).toBeUndefined();
      vi.advanceTimersByTime(40);
      worker.end(7);
      expect(pool.runningSince(7)).toBeUndefined();
      worker.start(9);
      expect(pool.runningSince(9)).toBe(1_000_040);
    } finally {
      vi.useRealTimers();
    }
  });
});
