import { describe, expect, it } from "vitest";
import { startProgress, SUMMARY_AFTER_MS, type ProgressClock } from "./progress.ts";

/** A clock that moves only when told, and a redraw timer the test fires itself. */
function testClock() {
  let now = 0;
  let tick: (() => void) | undefined;
  const clock: ProgressClock = {
    now: () => now,
    every: (_ms, callback) => {
      tick = callback;
      return () => {
        tick = undefined;
      };
    },
  };
  return {
    clock,
    advance(ms: number) {
      now += ms;
      tick?.();
    },
    running: () => tick !== undefined,
  };
}

function capture(errTerminal: boolean) {
  const written: string[] = [];
  return { io: { out: () => {}, err: (text: string) => void written.push(text), errTerminal }, written };
}

describe("startProgress", () => {
  it("on a terminal, redraws one line with the step and the time so far, and clears it at the end", () => {
    const time = testClock();
    const { io, written } = capture(true);
    const progress = startProgress(io, "synth", time.clock);
    progress.step("reading, planning and rendering");
    time.advance(1500);
    progress.step("writing rendered");
    time.advance(300);
    progress.end();
    expect(written).toEqual([
      "\r\x1b[2Kmetalsynth synth: reading, planning and rendering… 0.0 s",
      "\r\x1b[2Kmetalsynth synth: reading, planning and rendering… 1.5 s",
      "\r\x1b[2Kmetalsynth synth: writing rendered… 1.5 s",
      "\r\x1b[2Kmetalsynth synth: writing rendered… 1.8 s",
      "\r\x1b[2K",
    ]);
    expect(time.running()).toBe(false);
    progress.end();
    expect(written).toHaveLength(5);
  });

  it("elsewhere, says nothing while it runs and one line after a long run", () => {
    const time = testClock();
    const { io, written } = capture(false);
    const progress = startProgress(io, "synth", time.clock);
    progress.step("reading, planning and rendering");
    time.advance(SUMMARY_AFTER_MS + 8000);
    progress.step("writing rendered");
    time.advance(1200);
    expect(written).toEqual([]);
    progress.end();
    expect(written).toEqual([
      "metalsynth synth: 11.2 s (reading, planning and rendering 10.0 s, writing rendered 1.2 s)\n",
    ]);
  });

  it("elsewhere, says nothing at all after a short run", () => {
    const time = testClock();
    const { io, written } = capture(false);
    const progress = startProgress(io, "synth", time.clock);
    progress.step("reading, planning and rendering");
    time.advance(SUMMARY_AFTER_MS - 1);
    progress.end();
    expect(written).toEqual([]);
  });
});
