/**
 * CpuFlags: the host's CPU lacks a flag the entry's `hardware.cpuFlags` asks for (decision 0065),
 * both sides in lower case, as Linux writes the flags inspection reports.
 */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import { inspected, notReported, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const CPU_FLAGS = {
  name: "CpuFlags",
  reads: HOST_FACTS.hardware,
  reasons: {
    unknown: () => "no CPU flags reported",
    missing: ({ available }) => `without CPU flags ${available}`,
  },
  ofNeeds,
  macEntry: {
    field: ["hardware", "cpuFlags"],
    finding: ({ reason, requested, available }, host) =>
      reason === "unknown"
        ? notReported(host, "CPU flags", "hardware.cpuFlags", String(requested))
        : {
            rule: "cpu-flags-missing",
            message: `host ${host.id} lacks CPU flags ${available} (asked for ${requested})`,
          },
  },
  asked: ({ cpuFlags }) => (cpuFlags === undefined ? undefined : `CPU flags ${cpuFlags.join(" ")}`),
  has: ({ cpuFlags }) =>
    cpuFlags === undefined ? undefined : `${cpuFlags.length} CPU flag${cpuFlags.length === 1 ? "" : "s"}`,
} as const satisfies FilterPlugin;

/** A rejection says which flags the host lacks (`available`), so the histogram counts each gap apart. */
function ofNeeds({ cpuFlags }: ResourceNeeds): HostFilter | undefined {
  if (cpuFlags === undefined) return undefined;
  const missing = (has: readonly string[]) => cpuFlags.filter((flag) => !has.includes(flag));
  return inspected(
    CPU_FLAGS,
    "missing",
    cpuFlags.join(" "),
    (host) => host.cpuFlags,
    (has) => missing(has).length === 0,
    (has) => missing(has).join(" "),
  );
}
