import { parseCpuFlag, parseCpuModelMatch, type CpuFlag } from "../checked.ts";
import { compareText } from "../issue.ts";
import type { DiskNeeds, HardwareNeeds } from "../model/bpa.ts";
import type { HardwareRequestSpec } from "../schema/hardware.ts";

/**
 * The `hardware` block of a Provisioning entry or a SIPCluster node set as needs (decision 0065):
 * only the fields it sets, so an entry without it is the entry it was before.
 */
export function hardwareNeeds(spec: HardwareRequestSpec | undefined): HardwareNeeds {
  if (spec === undefined) return NO_HARDWARE_NEEDS;
  const disk = spec.disk === undefined ? undefined : diskNeeds(spec.disk);
  const cpuModel = spec.cpuModel === undefined ? undefined : parseCpuModelMatch(spec.cpuModel);
  return {
    ...(spec.arch === undefined ? {} : { arch: spec.arch }),
    ...(cpuModel === undefined ? {} : { cpuModel }),
    ...(spec.cpuFlags === undefined || spec.cpuFlags.length === 0
      ? {}
      : { cpuFlags: cpuFlags(spec.cpuFlags) }),
    ...(spec.nicSpeedGbps === undefined ? {} : { nicSpeedGbps: spec.nicSpeedGbps }),
    ...(disk === undefined ? {} : { disk }),
  };
}

/** Flags as compared: parsed, sorted, once each. */
export function cpuFlags(written: readonly string[]): CpuFlag[] {
  return [...new Set(written.map(parseCpuFlag))].sort(compareText);
}

/** A disk asked for, its size in bytes; `undefined` for `disk: {}`, which asks for nothing. */
function diskNeeds(spec: NonNullable<HardwareRequestSpec["disk"]>): DiskNeeds | undefined {
  if (spec.minSizeGibibytes === undefined && spec.rotational === undefined) return undefined;
  return {
    ...(spec.minSizeGibibytes === undefined ? {} : { minSizeBytes: spec.minSizeGibibytes * 2 ** 30 }),
    ...(spec.rotational === undefined ? {} : { rotational: spec.rotational }),
  };
}

const NO_HARDWARE_NEEDS: HardwareNeeds = Object.freeze({});
