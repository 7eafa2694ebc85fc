import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium; `CHROMIUM` names another build. */
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

/**
 * What a headless Chromium needs on a machine with a closed network and no GPU: without the
 * background-networking flags it keeps trying to reach Google's services at every start.
 */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A running Chromium with a fresh profile; `close` stops it and removes the profile. */
export interface Chromium {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Starts Chromium with a page size and scale fixed for screenshots. A missing Chromium fails the
 * test rather than skipping it: CI installs it (.ci/run), so its absence is a broken machine.
 */
export async function startChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `the site map's browser tests need Chromium at ${CHROMIUM}: install Debian's package ` +
        `(apt-get install -y chromium, as .ci/run does) or set CHROMIUM to another build`,
    );
  }
  const profile = await mkdtemp(path.join(tmpdir(), "metalsynth-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1400, height: 900 },
    deviceScaleFactor: 1,
    colorScheme: "light",
    reducedMotion: "reduce",
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
