import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["{synth,charts,gitops,webhook,bin,test}/**/*.test.ts"],
    // The e2e suite needs a real API server: `npm run test:e2e` (vitest.e2e.config.ts).
    exclude: ["test/e2e/**", "**/node_modules/**"],
    testTimeout: 30_000,
  },
});
