/** Arch: the host's CPU architecture is not the one the entry's `hardware.arch` asks for (decision 0065). */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import { inspected, notReported, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const ARCH = {
  name: "Arch",
  reads: HOST_FACTS.hardware,
  reasons: {
    unknown: () => "no CPU architecture reported",
    mismatch: ({ requested }) => `not ${requested}`,
  },
  ofNeeds,
  macEntry: {
    field: ["hardware", "arch"],
    finding: ({ reason, requested, available }, host) =>
      reason === "unknown"
        ? notReported(host, "CPU architecture", "hardware.arch", String(requested))
        : {
            rule: "arch-mismatch",
            message: `host ${host.id} is ${available}, ${requested} requested`,
          },
  },
  asked: ({ arch }) => arch,
  has: ({ cpuArch }) => cpuArch,
} as const satisfies FilterPlugin;

function ofNeeds({ arch }: ResourceNeeds): HostFilter | undefined {
  return arch === undefined
    ? undefined
    : inspected(
        ARCH,
        "mismatch",
        arch,
        (host) => host.cpuArch,
        (has) => has === arch,
        (has) => has,
      );
}
