// Writes deploy/metalsynth.yaml (`npm run manifests`): the CRDs and the admission webhook's
// deployment, as `metalsynth manifests` prints them. A test fails when the committed file is stale.
import { writeFile } from "node:fs/promises";
import { webhookManifestsYaml } from "../charts/webhook/index.ts";
import { DEPLOY_FILE } from "./deploy-files.ts";

await writeFile(DEPLOY_FILE, webhookManifestsYaml());
console.log(`wrote ${DEPLOY_FILE}`);
