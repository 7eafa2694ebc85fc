import { describe, expect, it } from "vitest";
import { parseIpAddress } from "../../synth/checked.ts";
import { hostHextets } from "./inventory.ts";

describe("generated hosts", () => {
  it.each([0, 1, 0xffff, 0x10000, 0x10001, 99_999, 1_000_000])(
    "host %i has IPv6 addresses that parse, and its own",
    (index) => {
      expect(parseIpAddress(`fd00:0::${hostHextets(index)}`)).toBeDefined();
      expect(parseIpAddress(`2001:1890:1001:293d::${hostHextets(index)}`)).toBeDefined();
      expect(hostHextets(index)).not.toBe(hostHextets(index + 1));
    },
  );
});
