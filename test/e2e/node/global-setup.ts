/**
 * Once per run of the node tier: compiles the CLI, builds (or finds cached) the e2e suite's binaries
 * and the node's (test/e2e/setup.sh, test/e2e/node/setup.sh), and starts one node for every test
 * file (starting it takes about half a minute); stops it, and removes all it left, when the run ends.
 */
import type { TestProject } from "vitest/node";
import { buildCli } from "../../support/build-cli.ts";
import { e2eBinaries } from "../support/control-plane.ts";
import { nodeSetup, startNode, type NodeInfo } from "./support/node.ts";

declare module "vitest" {
  export interface ProvidedContext {
    e2eNode: NodeInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  buildCli();
  const node = await startNode(e2eBinaries(), nodeSetup());
  project.provide("e2eNode", node.info);
  return () => node.stop();
}
