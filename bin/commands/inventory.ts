import { UsageError } from "../../gitops/errors.ts";
import { pullInventory } from "../../gitops/inventory-pull.ts";
import { pullText } from "../../gitops/report/pull-format.ts";
import { formatIssues, issueRows, jsonReport } from "../../gitops/report/report.ts";
import { DNS1123_LABEL } from "../../synth/inventory/selector.ts";
import { loadKubeConfig } from "../kube-config.ts";
import { EXIT, type Command } from "../common.ts";

/**
 * `metalsynth inventory pull`: the site's BareMetalHosts, HardwareData and networkData Secrets from the
 * API server, written into `inventory/` as the canonical snapshot (decision 0023). With `--check` it
 * writes nothing and exits 1 when the cluster differs from the snapshot in a fact metalsynth reads.
 */
export const inventory: Command<"inventory"> = async ({ values, operands }, io) => {
  const [subcommand, stray] = operands;
  if (subcommand !== "pull") {
    throw new UsageError(
      subcommand === undefined
        ? "missing subcommand: inventory pull"
        : `unknown subcommand "${subcommand}" (inventory pull)`,
    );
  }
  if (stray !== undefined) throw new UsageError(`unexpected argument "${stray}"`);
  const format = values.format ?? "text";
  for (const namespace of values.namespace ?? []) {
    if (!DNS1123_LABEL.test(namespace))
      throw new UsageError(`--namespace ${namespace}: not a namespace name`);
  }
  if (values.selector === "") throw new UsageError("--selector must not be empty");
  const check = values.check === true;

  // The Kubernetes client takes about half a second to load; only this command and the webhook use it.
  const [{ KubeConfig }, { readClusterInventory }] = await Promise.all([
    import("@kubernetes/client-node"),
    import("../../gitops/cluster-inventory.ts"),
  ]);
  const kubeConfig = new KubeConfig();
  loadKubeConfig(kubeConfig, values);
  const report = await pullInventory({
    ...(values.site !== undefined && { site: values.site }),
    ...(values.namespace !== undefined && { namespaces: values.namespace }),
    ...(values.selector !== undefined && { selector: values.selector }),
    check,
    read: (scope) => readClusterInventory(kubeConfig, scope),
  });

  if (format === "json") {
    io.out(
      jsonReport({
        inventory: report.inventory,
        changed: report.hosts.length > 0,
        written: report.written,
        hosts: report.hosts,
        clusters: report.clusters?.clusters ?? [],
        wiring: report.clusters?.wiring ?? { added: [], changed: [], removed: [] },
        refused: issueRows(report.refused),
        files: report.files,
        unchanged: report.unchanged,
        diagnostics: report.diagnostics,
      }),
    );
  } else {
    if (report.diagnostics.length > 0) io.err(formatIssues(report.diagnostics, "text"));
    io.out(pullText({ ...report, check }));
  }
  return check && report.hosts.length > 0 ? EXIT.invalid : EXIT.ok;
};
