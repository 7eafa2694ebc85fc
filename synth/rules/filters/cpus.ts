/** Cpus: the host has fewer logical CPUs than the entry's `cpu` asks for. */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import {
  NO_HARDWARE_DETAILS,
  atLeast,
  hardwareUnknown,
  type FilterPlugin,
  type HostFilter,
} from "./plugin.ts";

export const CPUS = {
  name: "Cpus",
  reads: HOST_FACTS.hardware,
  reasons: {
    unknown: () => NO_HARDWARE_DETAILS,
    insufficient: ({ requested }) => `fewer than ${requested} CPUs`,
  },
  ofNeeds,
  macEntry: {
    field: "cpu",
    finding: ({ reason, requested, available }, host) =>
      reason === "unknown"
        ? hardwareUnknown(host, "cpu", String(requested))
        : {
            rule: "cpu-insufficient",
            message: `host ${host.id} has ${available} CPUs, ${requested} requested`,
          },
  },
  asked: ({ cpus }) => (cpus === undefined ? undefined : `≥ ${cpus} CPUs`),
  has: ({ cpus }) => (cpus === undefined ? "CPUs unknown" : `${cpus} CPUs`),
} as const satisfies FilterPlugin;

function ofNeeds({ cpus }: ResourceNeeds): HostFilter | undefined {
  return cpus === undefined ? undefined : atLeast(CPUS, cpus, (host) => host.cpus);
}
