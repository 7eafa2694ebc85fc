import { webhookManifestsYaml } from "../../charts/webhook/index.ts";

/** The committed install file, relative to the repository root. */
export const DEPLOY_FILE = "deploy/metalsynth.yaml";

/** What deploy/metalsynth.yaml must contain: `metalsynth manifests` with the defaults. */
export function deployYaml(): string {
  return webhookManifestsYaml();
}
