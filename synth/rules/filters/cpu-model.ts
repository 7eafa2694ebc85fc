/**
 * CpuModel: the host's CPU model does not contain the entry's `hardware.cpuModel` (decision 0065),
 * both folded (lower case, no `(R)`/`(TM)`, runs of spaces as one), so `Xeon Gold` matches what
 * inspections write, `Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz`.
 */
import { foldCpuModel } from "../../checked.ts";
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import { inspected, notReported, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const CPU_MODEL = {
  name: "CpuModel",
  reads: HOST_FACTS.hardware,
  reasons: {
    unknown: () => "no CPU model reported",
    mismatch: ({ requested }) => `CPU model without "${requested}"`,
  },
  ofNeeds,
  macEntry: {
    field: ["hardware", "cpuModel"],
    finding: ({ reason, requested, available }, host) =>
      reason === "unknown"
        ? notReported(host, "CPU model", "hardware.cpuModel", String(requested))
        : {
            rule: "cpu-model-mismatch",
            message: `host ${host.id} has CPU model "${available}", which does not contain "${requested}"`,
          },
  },
  asked: ({ cpuModel }) => (cpuModel === undefined ? undefined : `CPU model "${cpuModel}"`),
  has: ({ cpuModel }) => cpuModel,
} as const satisfies FilterPlugin;

function ofNeeds({ cpuModel }: ResourceNeeds): HostFilter | undefined {
  return cpuModel === undefined
    ? undefined
    : inspected(
        CPU_MODEL,
        "mismatch",
        cpuModel,
        (host) => host.cpuModel,
        (has) => foldCpuModel(has).includes(cpuModel),
        (has) => has,
      );
}
