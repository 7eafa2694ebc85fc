/** Pick: no filter, the planning step that passes over a host that passed every filter. */
import type { FilterPlugin } from "./plugin.ts";

export const PICK = {
  name: "Pick",
  reads: 0,
  reasons: {
    /** The host fits, but nothing was left to choose (a no-fit counts it as fitting). */
    fits: () => "fits",
    /** Best fit preferred a smaller host. */
    "smaller-chosen": () => "fits, but a smaller host was chosen",
    /** The lock's host was kept. */
    "locked-kept": () => "fits, but the locked host is kept",
    /** The node stays on the lock's host, which the inventory lost (decision 0052). */
    "locked-vanished": () => "not considered: the node stays on its locked host, which vanished",
    /** The SIP role already has all the hosts it asks for. */
    "role-full": () => "not needed: the role is full",
  },
} as const satisfies FilterPlugin;
