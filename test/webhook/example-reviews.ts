/**
 * Two reviews against the example site that a running webhook must answer one each way, and the
 * answers: tests of the webhook as a process and as an image send them and check the replies.
 */
import { expect } from "vitest";
import { provisioning } from "../builders/reviews.ts";

/** A Provisioning whose master fits a free host (allowed), and one whose MAC is mistyped (refused). */
export const GOOD_AND_BAD = [
  provisioning({ name: "good", masters: [["master-1", { "mac-address": "3c:fd:fe:ca:f9:a0" }]] }),
  provisioning({ name: "bad", masters: [["master-1", { "mac-address": "b8:ce:f6:79:e4:c0" }]] }),
] as const;

/** Asserts the replies to {@link GOOD_AND_BAD}, in that order: allowed, then refused with the message. */
export function expectGoodAndBadAnswers(good: string | undefined, bad: string | undefined): void {
  expect(JSON.parse(good ?? "")).toMatchObject({ response: { uid: "uid-good", allowed: true } });
  expect(JSON.parse(bad ?? "")).toMatchObject({
    response: {
      uid: "uid-bad",
      allowed: false,
      status: {
        code: 403,
        message:
          "spec.masters[0].master-1.mac-address: b8:ce:f6:79:e4:c0 matches no BareMetalHost (closest: b8:ce:f6:79:ea:c0 on metal3/r03-node-04)",
      },
    },
  });
}
