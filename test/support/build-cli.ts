/**
 * Tests that spawn `bin/metalsynth.js` run what it runs, the build in dist/, so that build must be the
 * code under test: this compiles it first (`npm run build`, incremental: about half a second when
 * nothing changed). The slow tier and the e2e suite run it as a vitest globalSetup; the unit tier runs
 * the CLI in-process from the sources and needs no build.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Brings dist/ up to date with the sources; a compile error fails the run before any test. */
export function buildCli(): void {
  execFileSync("npm", ["run", "--silent", "build"], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: "inherit",
  });
}

export { buildCli as setup };
