import { z } from "zod";
import { BOUNDS } from "./bounds.ts";

/** The CPU architectures a node may ask for, as Metal3's inspection writes `status.hardware.cpu.arch`. */
export const CPU_ARCHES = ["x86_64", "aarch64"] as const;

/**
 * What a node asks of its host's hardware beyond upstream's `cpu` and `memory`, over what a
 * BareMetalHost's `status.hardware` reports: a metalsynth extension (decision 0065), the same block
 * on a Provisioning's master and worker entries and on a SIPCluster's node sets. Every field is
 * optional; a host whose inspection does not report a field can't be checked against it.
 */
export const HardwareRequestSpec = z
  .strictObject({
    arch: z
      .enum(CPU_ARCHES)
      .optional()
      .describe("The host's CPU architecture (BMH status.hardware.cpu.arch), exactly."),
    cpuModel: z
      .string()
      .min(1)
      .max(BOUNDS.short)
      .optional()
      .describe(
        "Text the host's CPU model (BMH status.hardware.cpu.model) contains, ignoring case, (R), (TM) and repeated spaces: 'Xeon Gold'.",
      ),
    cpuFlags: z
      .array(z.string().min(1).max(BOUNDS.label))
      .max(BOUNDS.cpuFlags)
      .optional()
      .describe("CPU flags the host must all have (BMH status.hardware.cpu.flags), in any case: [avx512f]."),
    nicSpeedGbps: z
      .int()
      .min(1)
      .optional()
      .describe(
        "The host must have a NIC at least this fast, in Gbit/s (BMH status.hardware.nics[].speedGbps).",
      ),
    disk: z
      .strictObject({
        minSizeGibibytes: z
          .int()
          .min(1)
          .optional()
          .describe("The disk's size (BMH status.hardware.storage[].sizeBytes), at least, in GiB."),
        rotational: z
          .boolean()
          .optional()
          .describe(
            "false: a solid-state disk; true: a rotational one (status.hardware.storage[].rotational).",
          ),
      })
      .optional()
      .describe("The host must have one disk with all of these, as Metal3's root device hints read a disk."),
  })
  .describe("metalsynth extension: what the host's inspected hardware must have (decision 0065).");

export type HardwareRequestSpec = z.infer<typeof HardwareRequestSpec>;
