import { defineConfig } from "vitest/config";

/**
 * The e2e suite: a real etcd and kube-apiserver (test/e2e/setup.sh builds and caches them), kubectl,
 * the webhook from this clone, and the GitOps agents' apply code. Files run one at a time: each
 * starts its own control plane, and the machine has two cores.
 */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    // The node tier (a kubelet and containerd beside the API server) has its own configuration:
    // vitest.node.config.ts, `npm run test:node`.
    exclude: ["test/e2e/node/**", "**/node_modules/**"],
    globalSetup: ["test/e2e/support/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
