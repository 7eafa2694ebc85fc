import { parseArgs } from "node:util";
import { UsageError } from "../../gitops/errors.ts";
import { readSite } from "../../gitops/site-reader.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import { explainCluster, explanationText } from "../../synth/explain.ts";
import { EXIT, outputFormat, SITE_OPTIONS, siteLocation, type Console } from "../common.ts";

/** `metalsynth explain <cluster>`: per role, the chosen hosts and why every other host was rejected. */
export async function explain(argv: readonly string[], io: Console): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: SITE_OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  const format = outputFormat(values.format);
  const [cluster, ...extra] = positionals;
  if (cluster === undefined || extra.length > 0)
    throw new UsageError("explain takes exactly one cluster name (name or namespace/name)");
  const input = await readSite(siteLocation(values));
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const explanations = explainCluster(evaluation.plan, cluster, input.inventory.size);
  if (explanations.length === 0) {
    const known = evaluation.plan.clusters.map((plan) => plan.key).join(", ");
    io.err(`metalsynth: no cluster "${cluster}" in the site (clusters: ${known || "none"})\n`);
    return EXIT.invalid;
  }
  io.out(format === "json" ? `${JSON.stringify(explanations, null, 2)}\n` : explanationText(explanations));
  return EXIT.ok;
}
