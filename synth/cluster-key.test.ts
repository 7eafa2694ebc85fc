import { describe, expect, it } from "vitest";
import { clusterKey, clusterKeyParts, parseClusterKey } from "./cluster-key.ts";

describe("ClusterKey", () => {
  it("is namespace/name, and splits back into them", () => {
    const key = clusterKey("edge-a", "cluster-east");
    expect(key).toBe("edge-a/cluster-east");
    expect(clusterKeyParts(key)).toEqual({ namespace: "edge-a", name: "cluster-east" });
  });

  it.each([
    ["edge-a/cluster-east", "edge-a/cluster-east"],
    ["cluster-east", undefined],
    ["/cluster-east", undefined],
    ["edge-a/", undefined],
    ["a/b/c", undefined],
  ])("parses %j as %j", (text, expected) => {
    expect(parseClusterKey(text)).toBe(expected);
  });
});
