// Writes deploy/crds.yaml from the zod schemas (`npm run crds`). A test fails when the committed file
// is out of date, so the published CRDs always match what metalsynth validates.
import { writeFile } from "node:fs/promises";
import { crdsYaml, CRDS_FILE } from "./deploy-files.ts";

await writeFile(CRDS_FILE, crdsYaml());
console.log(`wrote ${CRDS_FILE}`);
