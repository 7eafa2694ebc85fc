import { describe, expect, it } from "vitest";
import { issue } from "../../synth/issue.ts";
import { pullText, type PullSummary } from "./pull-format.ts";

describe("pullText", () => {
  it("keeps a host change and a refusal on one line each when the values hold line breaks", () => {
    const summary: PullSummary = {
      inventory: "inventory",
      hostCount: 1,
      hosts: [{ host: "metal3/a", status: "changed", changes: ["label rack r01 → r01\nr02"] }],
      refused: [issue("cluster-label", "metadata.labels.cluster", 'label "a\r\nb" is not a DNS-1123 label')],
      files: [],
      unchanged: 1,
      check: true,
    };
    expect(pullText(summary)).toBe(
      "inventory (changed)\n" +
        "  ~ host    metal3/a: label rack r01 → r01\\nr02\n" +
        "with the new inventory, synth would refuse the site:\n" +
        '  error[cluster-label] metadata.labels.cluster: label "a\\r\\nb" is not a DNS-1123 label\n' +
        "inventory: the cluster differs in 1 host(s); nothing written (--check)\n",
    );
  });
});
