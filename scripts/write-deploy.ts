// Writes deploy/metalsynth.yaml and the Helm chart under helm/metalsynth/ (`npm run manifests`): the
// CRDs and the admission webhook's deployment, as `metalsynth manifests` prints them, and the chart
// generated from the same cdk8s source. A test fails when a committed file is stale.
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { helmChartFiles, HELM_CHART_DIR } from "../charts/webhook/helm.ts";
import { PACKAGE_VERSION, webhookManifestsYaml } from "../charts/webhook/index.ts";
import { DEPLOY_FILE } from "./deploy-files.ts";

await writeFile(DEPLOY_FILE, webhookManifestsYaml());
console.log(`wrote ${DEPLOY_FILE}`);

const files = helmChartFiles(PACKAGE_VERSION, await readFile("LICENSE", "utf8"));
// Files the generator no longer makes go: the directory holds exactly the chart.
const existing = await readdir(HELM_CHART_DIR, { recursive: true, withFileTypes: true }).catch(() => []);
for (const entry of existing) {
  const relative = path.relative(HELM_CHART_DIR, path.join(entry.parentPath, entry.name));
  if (entry.isFile() && !files.has(relative)) await rm(path.join(HELM_CHART_DIR, relative));
}
for (const [relative, content] of files) {
  await mkdir(path.dirname(path.join(HELM_CHART_DIR, relative)), { recursive: true });
  await writeFile(path.join(HELM_CHART_DIR, relative), content);
}
console.log(`wrote ${HELM_CHART_DIR}/ (${files.size} files)`);
