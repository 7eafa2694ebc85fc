import { parseCpuFlag, parseCpuModelMatch, type CpuFlag } from "../checked.ts";
import { compareText } from "../issue.ts";
import type { HardwareNeeds } from "../model/bpa.ts";
import type { HardwareRequestSpec } from "../schema/hardware.ts";

/**
 * The `hardware` block of a Provisioning entry or a SIPCluster node set as needs (decision 0065):
 * only the fields it sets, so an entry without it is the entry it was before.
 */
export function hardwareNeeds(spec: HardwareRequestSpec | undefined): HardwareNeeds {
  if (spec === undefined) return NO_HARDWARE_NEEDS;
  const cpuModel = spec.cpuModel === undefined ? undefined : parseCpuModelMatch(spec.cpuModel);
  return {
    ...(spec.arch === undefined ? {} : { arch: spec.arch }),
    ...(cpuModel === undefined ? {} : { cpuModel }),
    ...(spec.cpuFlags === undefined || spec.cpuFlags.length === 0
      ? {}
      : { cpuFlags: cpuFlags(spec.cpuFlags) }),
    ...(spec.nicSpeedGbps === undefined ? {} : { nicSpeedGbps: spec.nicSpeedGbps }),
  };
}

/** Flags as compared: parsed, sorted, once each. */
export function cpuFlags(written: readonly string[]): CpuFlag[] {
  return [...new Set(written.map(parseCpuFlag))].sort(compareText);
}

const NO_HARDWARE_NEEDS: HardwareNeeds = Object.freeze({});
