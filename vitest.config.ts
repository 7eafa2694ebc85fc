import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["{synth,charts,gitops,webhook,bin,test}/**/*.test.ts"],
    testTimeout: 30_000,
  },
});
