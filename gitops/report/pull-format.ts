import { issueText, oneLine, type Issue } from "../../synth/issue.ts";
import type { HostChange } from "../../synth/inventory/changes.ts";
import type { RenderedDiff } from "./diff.ts";
import { clusterLines } from "./diff-format.ts";

/** What `metalsynth inventory pull` reports, as {@link pullText} prints it. */
export interface PullSummary {
  /** The inventory directory, as shown. */
  readonly inventory: string;
  /** Hosts in the new snapshot. */
  readonly hostCount: number;
  readonly hosts: readonly HostChange[];
  readonly clusters?: RenderedDiff;
  readonly refused: readonly Issue[];
  readonly files: readonly { readonly path: string; readonly status: "added" | "changed" | "removed" }[];
  readonly unchanged: number;
  /** `--check`: nothing was (or would have been) written. */
  readonly check: boolean;
}

/**
 * The pull's report in `metalsynth diff`'s vocabulary: an `inventory` block with a line per host
 * added (`+`), removed (`-`) or per fact changed (`~`), then the clusters the change affects as
 * `diff` shows them, the errors synth would newly report, and a last line saying what was written.
 *
 * ```
 * inventory (changed)
 *   ~ host    metal3/r02-node-05: nic ens1f0 ip 10.23.2.15 → 10.23.2.25
 * edge-a/cluster-east (changed)
 *   ~ object  ConfigMap edge-a/cluster-east-configmap
 * wrote examples/site/inventory: 0 file(s) added, 1 changed, 0 removed, 0 unchanged
 * ```
 */
export function pullText(summary: PullSummary): string {
  let text = "";
  if (summary.hosts.length > 0) {
    text += "inventory (changed)\n";
    for (const change of summary.hosts) {
      if (change.status === "added") text += `  + host    ${change.host}\n`;
      else if (change.status === "removed") text += `  - host    ${change.host}\n`;
      // A change quotes the host's values, which a snapshot holds unchecked: one line each all the same.
      else for (const line of change.changes) text += `  ~ host    ${change.host}: ${oneLine(line)}\n`;
    }
  }
  if (summary.clusters) text += clusterLines(summary.clusters);
  if (summary.refused.length > 0) {
    text += "with the new inventory, synth would refuse the site:\n";
    for (const found of summary.refused) text += `  ${issueText(found)}\n`;
  }
  const count = (status: "added" | "changed" | "removed") =>
    summary.files.filter((file) => file.status === status).length;
  const counts = `${count("added")} file(s) added, ${count("changed")} changed, ${count("removed")} removed, ${summary.unchanged} unchanged`;
  const hosts = `${summary.hostCount} host${summary.hostCount === 1 ? "" : "s"}`;
  if (summary.check) {
    text +=
      summary.hosts.length > 0
        ? `${summary.inventory}: the cluster differs in ${summary.hosts.length} host(s); nothing written (--check)\n`
        : summary.files.length > 0
          ? `${summary.inventory}: matches the cluster (${hosts}); a pull would rewrite the files (${counts})\n`
          : `${summary.inventory}: up to date (${hosts})\n`;
    return text;
  }
  for (const file of summary.files.filter((change) => change.status === "removed"))
    text += `removed ${file.path}: the snapshot holds everything of it\n`;
  text +=
    summary.files.length === 0
      ? `${summary.inventory}: up to date (${hosts})\n`
      : `wrote ${summary.inventory} (${hosts}): ${counts}\n`;
  return text;
}
