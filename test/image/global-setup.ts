/**
 * Once per run of the image suite: builds the image (test/image/build.sh makes or finds the local
 * stand-ins for its base images first) and gives the test files its name and the podman
 * configuration this machine needs.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    image: string;
    containersConf: string;
  }
}

export default function setup(project: TestProject): void {
  const output = execFileSync("bash", [fileURLToPath(new URL("build.sh", import.meta.url))], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exported = new Map(
    [...output.matchAll(/^export (\w+)=(.*)$/gm)].map(([, name, value]) => [name, value ?? ""]),
  );
  const image = exported.get("METALSYNTH_IMAGE");
  const containersConf = exported.get("CONTAINERS_CONF");
  if (image === undefined || containersConf === undefined) {
    throw new Error(`test/image/build.sh printed neither the image nor CONTAINERS_CONF:\n${output}`);
  }
  project.provide("image", image);
  project.provide("containersConf", containersConf);
}
