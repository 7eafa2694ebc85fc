/** Memory: the host has less RAM than the entry's `memory` asks for. */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import { formatBytes } from "../../quantity.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import {
  NO_HARDWARE_DETAILS,
  atLeast,
  hardwareUnknown,
  type FilterPlugin,
  type HostFilter,
} from "./plugin.ts";

export const MEMORY = {
  name: "Memory",
  reads: HOST_FACTS.hardware,
  reasons: {
    unknown: () => NO_HARDWARE_DETAILS,
    insufficient: ({ requested }) => `less than ${quantity(requested)} memory`,
  },
  ofNeeds,
  macEntry: {
    field: "memory",
    finding: ({ reason, requested, available }, host) =>
      reason === "unknown"
        ? hardwareUnknown(host, "memory", quantity(requested))
        : {
            rule: "memory-insufficient",
            message: `host ${host.id} has ${quantity(available)} memory, ${quantity(requested)} requested`,
          },
  },
  asked: ({ memoryBytes }) => (memoryBytes === undefined ? undefined : `≥ ${formatBytes(memoryBytes)}`),
  has: ({ memoryBytes }) =>
    memoryBytes === undefined ? "memory unknown" : `${formatBytes(memoryBytes)} memory`,
} as const satisfies FilterPlugin;

function ofNeeds({ memoryBytes }: ResourceNeeds): HostFilter | undefined {
  return memoryBytes === undefined ? undefined : atLeast(MEMORY, memoryBytes, (host) => host.memoryBytes);
}

/** Bytes as messages write them, a quantity (`64Gi`). */
function quantity(bytes: number | string | undefined): string {
  return typeof bytes === "number" ? formatBytes(bytes) : String(bytes);
}
