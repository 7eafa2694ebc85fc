/**
 * Builds (or finds cached) kube-apiserver and flux-apply once per run and hands their directory to
 * the test files, which start their own control planes with it.
 */
import type { TestProject } from "vitest/node";
import { e2eBinaries } from "./control-plane.ts";

declare module "vitest" {
  export interface ProvidedContext {
    e2eBinDir: string;
  }
}

export default function setup(project: TestProject): void {
  project.provide("e2eBinDir", e2eBinaries());
}
