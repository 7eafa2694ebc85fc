/**
 * Once per run: compiles the CLI into dist/ (the webhook and the README blocks run bin/metalsynth.js,
 * which runs the build), and builds (or finds cached) kube-apiserver and flux-apply, whose directory
 * the test files get to start their own control planes with.
 */
import type { TestProject } from "vitest/node";
import { buildCli } from "../../support/build-cli.ts";
import { e2eBinaries } from "./control-plane.ts";

declare module "vitest" {
  export interface ProvidedContext {
    e2eBinDir: string;
  }
}

export default function setup(project: TestProject): void {
  buildCli();
  project.provide("e2eBinDir", e2eBinaries());
}
