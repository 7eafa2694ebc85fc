import { describe, expect, it, vi } from "vitest";
import { ReviewProgress } from "./review-progress.ts";

describe("ReviewProgress", () => {
  it("tells the pool which job its worker is in, since when, and which it has started", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      const worker = new ReviewProgress();
      const pool = new ReviewProgress(worker.buffer);
      expect(pool.started(0)).toBe(false);
      expect(pool.runningSince(0)).toBeUndefined();

      worker.start(7);
      expect(pool.runningSince(7)).toBe(1_000_000);
      expect(pool.runningSince(3)).toBeUndefined();
      expect([pool.started(3), pool.started(7), pool.started(8)]).toEqual([true, true, false]);

      vi.advanceTimersByTime(40);
      worker.end(7);
      expect(pool.runningSince(7)).toBeUndefined();
      expect(pool.started(7)).toBe(true);

      worker.start(9);
      expect(pool.runningSince(9)).toBe(1_000_040);
    } finally {
      vi.useRealTimers();
    }
  });
});
