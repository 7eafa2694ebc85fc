/**
 * Disk: the host has no disk of the size and kind the entry's `hardware.disk` asks for (decision
 * 0065): one disk must have both, as Metal3's root device hints pick one disk.
 */
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import { diskText } from "../../inventory/host.ts";
import type { DiskNeeds, ResourceNeeds } from "../../model/bpa.ts";
import { formatBytes } from "../../quantity.ts";
import { inspected, notReported, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const DISK = {
  name: "Disk",
  reads: HOST_FACTS.hardware,
  reasons: {
    unknown: () => "no disks reported",
    none: ({ requested }) => `without ${requested}`,
  },
  ofNeeds,
  macEntry: {
    field: ["hardware", "disk"],
    finding: ({ reason, requested, available }, host) =>
      reason === "unknown"
        ? notReported(host, "disks", "hardware.disk", String(requested))
        : {
            rule: "disk-insufficient",
            message: `host ${host.id} has no ${String(requested).replace(/^an? /, "")} (its disks: ${available})`,
          },
  },
  asked: ({ disk }) => (disk === undefined ? undefined : diskWords(disk)),
  has: ({ disks }) => (disks === undefined ? undefined : `disks ${disks.map(diskText).join(", ")}`),
} as const satisfies FilterPlugin;

function ofNeeds({ disk }: ResourceNeeds): HostFilter | undefined {
  if (disk === undefined) return undefined;
  const { minSizeBytes = 0, rotational } = disk;
  return inspected(
    DISK,
    "none",
    diskWords(disk),
    (host) => host.disks,
    (has) =>
      has.some(
        (found) =>
          found.sizeBytes >= minSizeBytes && (rotational === undefined || found.rotational === rotational),
      ),
    (has) => has.map(diskText).join(", "),
  );
}

/** `a solid-state disk of ≥ 400Gi`, `a disk of ≥ 1Ti`, `a rotational disk`. */
function diskWords({ minSizeBytes, rotational }: DiskNeeds): string {
  const kind = rotational === undefined ? "a disk" : rotational ? "a rotational disk" : "a solid-state disk";
  return minSizeBytes === undefined ? kind : `${kind} of ≥ ${formatBytes(minSizeBytes)}`;
}
