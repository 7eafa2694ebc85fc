import type { HardwareNeeds } from "../model/bpa.ts";
import type { HardwareRequestSpec } from "../schema/hardware.ts";

/**
 * The `hardware` block of a Provisioning entry or a SIPCluster node set as needs (decision 0065):
 * only the fields it sets, so an entry without it is the entry it was before.
 */
export function hardwareNeeds(spec: HardwareRequestSpec | undefined): HardwareNeeds {
  if (spec === undefined) return NO_HARDWARE_NEEDS;
  return {
    ...(spec.arch === undefined ? {} : { arch: spec.arch }),
  };
}

const NO_HARDWARE_NEEDS: HardwareNeeds = Object.freeze({});
