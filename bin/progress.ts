/**
 * What a long run says on stderr while it works (issue #41, decision 0062). On a terminal, one line
 * redrawn in place: the step and the seconds so far, cleared when the run ends so that the results
 * stand alone. Anywhere else (a CI log, a pipe, a file), nothing while it runs, which would only
 * pile up lines, and after a run that took long, one line saying where the time went.
 */
import type { Console } from "./common.ts";

/** The clock and timer a progress line reads; injected so tests can run it without waiting. */
export interface ProgressClock {
  /** Milliseconds, from any fixed start. */
  now(): number;
  /** Calls `tick` every `ms` until the returned function is called; never keeps the process alive. */
  every(ms: number, tick: () => void): () => void;
}

const SYSTEM_CLOCK: ProgressClock = {
  now: () => performance.now(),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

/** A run shorter than this ends without a summary line: it was not long enough to wonder about. */
export const SUMMARY_AFTER_MS = 2000;

/** How often the terminal's line is redrawn, when the event loop is free to. */
const REDRAW_MS = 250;

/** Clears the terminal's current line and returns to its start. */
const CLEAR_LINE = "\r\x1b[2K";

/** One run's progress: its steps in order, then its end. */
export interface Progress {
  /** The run has moved on to `step` ("writing rendered"). */
  step(step: string): void;
  /** The run is over: the line is cleared, or the summary written. Before the run's own output. */
  end(): void;
}

/** Starts the progress of `metalsynth <command>` on `io.err`. */
export function startProgress(io: Console, command: string, clock: ProgressClock = SYSTEM_CLOCK): Progress {
  const start = clock.now();
  const steps: { step: string; start: number }[] = [];
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const draw = () => {
    const current = steps.at(-1);
    if (current !== undefined)
      io.err(`${CLEAR_LINE}metalsynth ${command}: ${current.step}… ${seconds(clock.now() - start)}`);
  };
  const stop = io.errTerminal === true ? clock.every(REDRAW_MS, draw) : () => {};
  let ended = false;
  return {
    step(step) {
      steps.push({ step, start: clock.now() });
      if (io.errTerminal === true) draw();
    },
    end() {
      if (ended) return;
      ended = true;
      stop();
      if (io.errTerminal === true) {
        if (steps.length > 0) io.err(CLEAR_LINE);
        return;
      }
      const end = clock.now();
      if (end - start < SUMMARY_AFTER_MS) return;
      const parts = steps.map(({ step, start: from }, index) => {
        const to = steps[index + 1]?.start ?? end;
        return `${step} ${seconds(to - from)}`;
      });
      io.err(`metalsynth ${command}: ${seconds(end - start)} (${parts.join(", ")})\n`);
    },
  };
}
