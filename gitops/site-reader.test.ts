import { describe, expect, it } from "vitest";
import { lockFromText } from "./site-reader.ts";

const LOCK = `# Written by metalsynth
apiVersion: metalsynth.io/v1alpha1
kind: Lock
hosts:
  - host: metal3/r01-node-04
    cluster: edge-a/cluster-east
    kind: bpa
    role: king
    node: master-1
`;

/** `rule file:line path` of each finding. */
function where(text: string): string[] {
  return lockFromText("rendered/metalsynth.lock.yaml", text).issues.map(
    (found) => `${found.rule} ${found.source?.file}:${found.source?.line} ${found.path}`,
  );
}

describe("lockFromText", () => {
  it.each([
    ["a zero-byte lock", "", ["lock-invalid rendered/metalsynth.lock.yaml:1 "]],
    ["a comment-only lock", "# emptied by hand\n", ["lock-invalid rendered/metalsynth.lock.yaml:1 "]],
    ["an unknown role, on its line", LOCK, ["lock-invalid rendered/metalsynth.lock.yaml:8 hosts[0].role"]],
    [
      "a second document",
      `${LOCK.replace("king", "master")}---\n${LOCK.replace("king", "master")}`,
      ["lock-invalid rendered/metalsynth.lock.yaml:12 "],
    ],
  ])("reports %s as lock-invalid with file and line", (_, text, expected) => {
    expect(where(text)).toEqual(expected);
  });

  it("reads a sound lock without findings", () => {
    const { lock, issues } = lockFromText("lock.yaml", LOCK.replace("king", "master"));
    expect(issues).toEqual([]);
    expect(lock.entries).toHaveLength(1);
  });
});
