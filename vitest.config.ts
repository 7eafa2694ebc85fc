import { defineConfig } from "vitest/config";

/**
 * Two tiers (`npm test` and `npm run test:slow`; `.ci/run` runs both, then the e2e suite of
 * vitest.e2e.config.ts, which needs a real API server):
 * - unit: the pure core, charts, and the edges' unit tests, beside their code. Fast enough to run
 *   on every save.
 * - slow: whatever runs the CLI, git, kubectl, child processes, a fuzz run, cdk8s synth or
 *   many thousands of hosts: test/ and the few unit files that build large inventories.
 */
const SLOW_UNIT_FILES = ["gitops/inventory-reader.test.ts", "synth/codec/block-yaml.test.ts"];
/** Tests in test/ that only read files, fast enough for the unit tier: docs/ against the code. */
const FAST_TEST_FILES = ["test/docs.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    projects: [
      {
        test: {
          name: "unit",
          // Pure tests share one module cache per worker: importing cdk8s-plus once, not per file.
          isolate: false,
          // The few that write files (a rendered chart, a config to check) write them here.
          globalSetup: ["test/support/temporary-root.ts"],
          include: ["{synth,charts,gitops,webhook,bin}/**/*.test.ts", ...FAST_TEST_FILES],
          exclude: [...SLOW_UNIT_FILES, "**/node_modules/**"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "slow",
          // Some of these spawn bin/metalsynth.js, which runs dist/: build it from these sources first.
          // Their scratch directories go under one temporary directory, removed when the run ends.
          globalSetup: ["test/support/build-cli.ts", "test/support/temporary-root.ts"],
          include: ["test/**/*.test.ts", ...SLOW_UNIT_FILES],
          // The e2e and image suites have configurations of their own (a control plane, podman).
          exclude: ["test/e2e/**", "test/image/**", ...FAST_TEST_FILES, "**/node_modules/**"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
