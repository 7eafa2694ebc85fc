import { UsageError } from "../../gitops/errors.ts";
import { toYaml } from "../../synth/codec/yaml-output.ts";
import { issueRows } from "../../gitops/report/report.ts";
import { readSite } from "../../gitops/site-reader.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import { explainCluster, explanationText, failedClusters, failedClustersText } from "../../synth/explain.ts";
import { checkLockTree, EXIT, siteLocation, type Command } from "../common.ts";

/**
 * `metalsynth explain <cluster>`: per role, the chosen hosts and why every other host was rejected;
 * for a cluster whose CRs failed their rules, those CRs and their findings, exit 1.
 */
export const explain: Command<"explain"> = async ({ values, operands }, io) => {
  const format = values.format ?? "text";
  const [cluster, ...extra] = operands;
  if (cluster === undefined || extra.length > 0)
    throw new UsageError("explain takes exactly one cluster name (name or namespace/name)");
  await checkLockTree(values.out);
  // As validate: not render-site's evaluateFromSite, which would load cdk8s (decision 0018).
  const input = await readSite(siteLocation(values));
  const { plan, issues, invalid } = evaluateSite(input.documents, input.inventory, input.lock);
  const explanations = explainCluster(plan, cluster, input.inventory.size);
  const failed = explanations.length === 0 ? failedClusters(invalid, issues, cluster) : [];
  if (failed.length > 0) {
    // The cluster exists, but its CRs failed their rules: nothing was planned, so the answer is
    // their findings, and validate's exit code.
    const rows = failed.map((found) => ({
      cluster: found.cluster,
      failed: found.failed,
      diagnostics: issueRows(found.issues),
    }));
    io.out(format === "text" ? failedClustersText(failed) : data(rows, format));
    return EXIT.invalid;
  }
  if (explanations.length === 0) {
    const known = plan.clusters.map((other) => other.key).join(", ");
    io.err(`metalsynth: no cluster "${cluster}" in the site (clusters: ${known || "none"})\n`);
    return EXIT.invalid;
  }
  io.out(
    format === "text"
      ? explanationText(explanations, values.all === true ? undefined : REJECTED_SHOWN)
      : data(explanations, format),
  );
  return EXIT.ok;
};

/** Rejected hosts explain lists per decision without `--all`: a screen, and the reasons' counts above. */
const REJECTED_SHOWN = 20;

/** `value` as `-o json` or `-o yaml` prints it: every host, whatever `--all` says. */
function data(value: unknown, format: "json" | "yaml"): string {
  return format === "json"
    ? `${JSON.stringify(value, null, 2)}\n`
    : toYaml(JSON.parse(JSON.stringify(value)));
}
