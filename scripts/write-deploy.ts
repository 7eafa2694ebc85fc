// Writes deploy/metalsynth.yaml (`npm run manifests`): the CRDs and the admission webhook's
// deployment, as `metalsynth manifests` prints them. A test fails when the committed file is stale.
import { writeFile } from "node:fs/promises";
import { DEPLOY_FILE, deployYaml } from "../test/webhook/deploy-file.ts";

await writeFile(DEPLOY_FILE, deployYaml());
console.log(`wrote ${DEPLOY_FILE}`);
