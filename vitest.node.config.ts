import { defineConfig } from "vitest/config";

/**
 * The node tier of the e2e suite (`npm run test:node`, decision 0060): what is rendered runs on a
 * real node (a kubelet, containerd, kube-controller-manager, kube-scheduler and kube-proxy beside the
 * suite's API server), started once for every file by test/e2e/node/global-setup.ts. Files run one at
 * a time: they share the node, and the machine has two cores.
 */
export default defineConfig({
  test: {
    include: ["test/e2e/node/**/*.test.ts"],
    globalSetup: ["test/e2e/node/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
