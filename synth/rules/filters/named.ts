/**
 * Named: no filter, the planning step of an entry that names its host itself (a MAC, a null entry),
 * which passes every other host over.
 */
import type { FilterPlugin } from "./plugin.ts";

export const NAMED = {
  name: "Named",
  reads: 0,
  reasons: {
    /** The entry's MAC (`requested`) is another host's. */
    "other-mac": ({ requested }) => `has no NIC ${requested}`,
    /** A null entry shares the host of master `requested`. */
    "other-master": ({ requested }) => `not master ${requested}'s host`,
    /** The entry's mac-address is malformed, so no host was considered. */
    "malformed-mac": () => "not considered: the mac-address is malformed",
  },
} as const satisfies FilterPlugin;
