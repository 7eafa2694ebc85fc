import { defineConfig } from "vitest/config";

/**
 * The image suite (`npm run test:image`): builds the Dockerfile's image with podman from local
 * stand-ins for its base images (test/image/build.sh; 20–40 s when they are cached, about 2 minutes
 * the first time on a machine) and runs it as the Deployment does.
 */
export default defineConfig({
  test: {
    include: ["test/image/**/*.test.ts"],
    globalSetup: ["test/image/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
