/**
 * What `metalsynth status` prints (docs/contract.md §7, decision 0059): a table like `kubectl get`'s
 * with the printer columns the CRDs publish, then what stands in the way of each CR that is not
 * Ready; or, with `-o json|yaml`, the CRs with their statuses as a `v1` List, as `kubectl get -o`
 * prints them. Pure: the statuses come in computed.
 */
import { compareText, oneLine } from "../../synth/issue.ts";
import { toYaml } from "../../synth/codec/yaml-output.ts";
import { KINDS } from "../../synth/schema/kinds.ts";
import type { CrStatus } from "../../synth/schema/status.ts";
import type { CrView } from "../../synth/status/objects.ts";

/** One CR and the status computed for it. */
export interface StatusRow {
  readonly cr: Pick<CrView, "kind" | "namespace" | "name">;
  readonly status: CrStatus;
  /** The cluster's name, `""` when the CR names none. */
  readonly cluster: string;
}

const KIND_ORDER: readonly string[] = ["Provisioning", "Software", "Cluster", "SIPCluster"];

/** The table and, for each CR not Ready, every condition that is not True. */
export function statusText(unordered: readonly StatusRow[]): string {
  if (unordered.length === 0) return "no Provisioning, Software, Cluster or SIPCluster found\n";
  // As a person reads a site: by namespace, then cluster, its CRs in the order they build it.
  const rows = [...unordered].sort(
    (a, b) =>
      compareText(a.cr.namespace, b.cr.namespace) ||
      compareText(a.cluster, b.cluster) ||
      KIND_ORDER.indexOf(a.cr.kind) - KIND_ORDER.indexOf(b.cr.kind) ||
      compareText(a.cr.name, b.cr.name),
  );
  const table = [
    ["NAMESPACE", "KIND", "NAME", "CLUSTER", "READY", "HOSTS", "REASON"],
    ...rows.map(({ cr, status, cluster }) => {
      const ready = status.conditions?.find((condition) => condition.type === "Ready");
      return [
        cr.namespace,
        cr.kind,
        cr.name,
        cluster || "-",
        ready?.status ?? "Unknown",
        status.hostSummary ?? "-",
        ready?.reason ?? "-",
      ];
    }),
  ];
  const widths =
    table[0]?.map((_, column) => Math.max(...table.map((row) => (row[column] ?? "").length))) ?? [];
  const lines = table.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("   ")
      .trimEnd(),
  );
  const details = rows.flatMap(({ cr, status }) => {
    const ready = status.conditions?.find((condition) => condition.type === "Ready");
    if (ready?.status === "True") return [];
    const open = (status.conditions ?? []).filter(
      (condition) => condition.type !== "Ready" && condition.status !== "True",
    );
    return [
      "",
      `${cr.kind} ${cr.namespace}/${cr.name}:`,
      ...open.map(
        (condition) =>
          `  ${condition.type} ${condition.status} (${condition.reason}): ${oneLine(condition.message)}`,
      ),
    ];
  });
  return `${[...lines, ...details].join("\n")}\n`;
}

/** The CRs with their statuses as a `v1` List, in JSON or YAML. */
export function statusDocument(rows: readonly StatusRow[], format: "json" | "yaml"): string {
  const list = {
    apiVersion: "v1",
    kind: "List",
    items: rows.map(({ cr, status }) => ({
      apiVersion: `${KINDS[cr.kind].group}/${KINDS[cr.kind].version}`,
      kind: cr.kind,
      metadata: { name: cr.name, namespace: cr.namespace },
      status,
    })),
  };
  return format === "json" ? `${JSON.stringify(list, null, 2)}\n` : toYaml(list);
}
