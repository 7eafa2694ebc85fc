import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { makeInventory } from "../../test/builders/inventory.ts";
import { clusterKey } from "../cluster-key.ts";
import { hostSnapshot, lockDocument } from "../plan/lock.ts";
import type { LockEntry } from "../model/lock.ts";
import { MAX_DOCUMENT_BYTES, MAX_DOCUMENT_TEXT_BYTES } from "../documents.ts";
import { toYaml } from "../codec/yaml-output.ts";
import { lockFromText, parseLock } from "./lock.ts";

const HEAD = "apiVersion: metalsynth.io/v1alpha1\nkind: Lock\n";
const EAST_MASTER =
  "  - host: metal3/n1\n    cluster: edge-a/east\n    kind: bpa\n    role: master\n    node: master-1\n";
const SIP_WORKER = "  - host: metal3/n2\n    cluster: edge-sip/t\n    kind: sip\n    role: Worker\n";

/** The findings of reading `yaml` as a lock, as `rule path` strings. */
function findings(yaml: string): string[] {
  return parseLock(parse(yaml)).issues.map((found) => `${found.rule} ${found.path}`);
}

describe("parseLock", () => {
  it.each([
    ["an empty hosts list (a site with no clusters)", `${HEAD}hosts: []\n`, 0],
    ["a BPA master", `${HEAD}hosts:\n${EAST_MASTER}`, 1],
    ["a SIP worker", `${HEAD}hosts:\n${SIP_WORKER}`, 1],
    [
      "a host that is master and worker of one cluster",
      `${HEAD}hosts:\n${EAST_MASTER}${EAST_MASTER.replace("role: master", "role: worker")}`,
      2,
    ],
    [
      "a host a SIPCluster is releasing",
      `${HEAD}hosts:\n${SIP_WORKER}    released: true\n    snapshot: 0a1b2c3d\n`,
      1,
    ],
  ])("accepts %s", (_, yaml, entries) => {
    const { lock, issues } = parseLock(parse(yaml));
    expect(issues).toEqual([]);
    expect(lock.entries).toHaveLength(entries);
  });

  it.each([
    ["a zero-byte file", "", ["lock-invalid "]],
    ["a comment-only file", "# nothing here\n", ["lock-invalid "]],
    ["a number", "hosts: 5\n", ["lock-invalid "]],
    ["another kind", "apiVersion: v1\nkind: ConfigMap\n", ["lock-invalid "]],
    ["no hosts list", HEAD, ["lock-invalid hosts"]],
    ["hosts that are not a list", `${HEAD}hosts: 5\n`, ["lock-invalid hosts"]],
    ["an entry that is not a map", `${HEAD}hosts:\n  - metal3/n1\n`, ["lock-invalid hosts[0]"]],
    [
      "an unknown BPA role",
      `${HEAD}hosts:\n${EAST_MASTER.replace("master\n", "king\n")}`,
      ["lock-invalid hosts[0].role"],
    ],
    [
      "an unknown kind",
      `${HEAD}hosts:\n${EAST_MASTER.replace("kind: bpa", "kind: vm")}`,
      ["lock-invalid hosts[0].kind"],
    ],
    [
      "a SIP role that can't be a label",
      `${HEAD}hosts:\n${SIP_WORKER.replace("Worker", "'Work er'")}`,
      ["lock-invalid hosts[0].role"],
    ],
    [
      "a BPA entry without its node",
      `${HEAD}hosts:\n${EAST_MASTER.replace("    node: master-1\n", "")}`,
      ["lock-invalid hosts[0].node"],
    ],
    [
      "a host that is not namespace/name",
      `${HEAD}hosts:\n${EAST_MASTER.replace("metal3/n1", "n1")}`,
      ["lock-invalid hosts[0].host"],
    ],
    [
      "a host name that is no object name",
      `${HEAD}hosts:\n${EAST_MASTER.replace("metal3/n1", "metal3/N_1")}`,
      ["lock-invalid hosts[0].host"],
    ],
    [
      "a cluster that is not namespace/name",
      `${HEAD}hosts:\n${EAST_MASTER.replace("edge-a/east", "east")}`,
      ["lock-invalid hosts[0].cluster"],
    ],
    [
      "a cluster whose name is no DNS label (it would name the cluster's objects)",
      `${HEAD}hosts:\n${SIP_WORKER.replace("edge-sip/t", "edge-sip/t.a")}`,
      ["lock-invalid hosts[0].cluster"],
    ],
    [
      "a misspelt field",
      `${HEAD}hosts:\n${SIP_WORKER}    relased: true\n`,
      ["lock-invalid hosts[0].relased"],
    ],
    [
      "released on a BPA entry",
      `${HEAD}hosts:\n${EAST_MASTER}    released: true\n`,
      ["lock-invalid hosts[0].released"],
    ],
    [
      "a flag that is not a boolean",
      `${HEAD}hosts:\n${SIP_WORKER}    standby: "yes"\n`,
      ["lock-invalid hosts[0].standby"],
    ],
    [
      "a malformed snapshot",
      `${HEAD}hosts:\n${SIP_WORKER}    released: true\n    snapshot: xyz\n`,
      ["lock-invalid hosts[0].snapshot"],
    ],
    [
      "one host in two clusters",
      `${HEAD}hosts:\n${EAST_MASTER}${EAST_MASTER.replace("edge-a/east", "edge-a/west")}`,
      ["lock-invalid hosts[1].cluster"],
    ],
    [
      "one SIP host in two roles",
      `${HEAD}hosts:\n${SIP_WORKER}${SIP_WORKER.replace("Worker", "ControlPlane")}`,
      ["lock-invalid hosts[1].role"],
    ],
  ])("refuses %s", (_, yaml, expected) => {
    expect(findings(yaml)).toEqual(expected);
  });

  it("keeps the sound entries of a damaged lock, and none of a host it records twice", () => {
    const yaml = `${HEAD}hosts:\n${EAST_MASTER}${EAST_MASTER.replace("edge-a/east", "edge-a/west")}${SIP_WORKER}`;
    const { lock, issues } = parseLock(parse(yaml));
    expect(issues.map((found) => found.rule)).toEqual(["lock-invalid"]);
    expect(lock.entries.map((entry) => entry.host)).toEqual(["metal3/n2"]);
  });

  it("places each finding with the position function", () => {
    const { issues } = parseLock(
      parse(`${HEAD}hosts:\n${EAST_MASTER.replace("master\n", "king\n")}`),
      (path) => ({
        file: "lock.yaml",
        line: path.length,
        column: 1,
      }),
    );
    expect(issues[0]).toMatchObject({ path: "hosts[0].role", source: { file: "lock.yaml", line: 3 } });
  });

  it("reads back what lockDocument writes", () => {
    const entries: LockEntry[] = [
      {
        host: "metal3/n1",
        cluster: clusterKey("edge-a", "east"),
        kind: "bpa",
        role: "master",
        node: "master-1",
      },
      { host: "metal3/n2", cluster: clusterKey("edge-sip", "t"), kind: "sip", role: "Worker", standby: true },
      {
        host: "metal3/n3",
        cluster: clusterKey("edge-sip", "t"),
        kind: "sip",
        role: "Worker",
        released: true,
        snapshot: "0a1b2c3d",
      },
    ];
    expect(parseLock(lockDocument({ entries }))).toEqual({ lock: { entries }, issues: [] });
  });
});

describe("hostSnapshot", () => {
  it("changes with the host's labels, not with where the host was read", () => {
    const [host] = makeInventory([{ name: "n1" }]).hosts;
    if (host === undefined) throw new Error("no host");
    const moved = { ...host, source: { file: "other.yaml", line: 9, column: 1 } };
    const labelled = { ...host, labels: { ...host.labels, "sip.airshipit.org/cluster-name": "t" } };
    expect(hostSnapshot(moved)).toBe(hostSnapshot(host));
    expect(hostSnapshot(labelled)).not.toBe(hostSnapshot(host));
    expect(hostSnapshot(host)).toMatch(/^[0-9a-f]{8}$/);
  });
});

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

/** A lock of `count` BPA entries, as synth writes it. */
function bigLock(count: number): { entries: LockEntry[]; text: string } {
  const entries: LockEntry[] = [];
  for (let index = 0; index < count; index++) {
    const cluster = clusterKey("bench", `c${String(Math.floor(index / 2)).padStart(5, "0")}`);
    const host = `metal3/r${String(Math.floor(index / 20)).padStart(4, "0")}n${String(index % 20).padStart(2, "0")}`;
    entries.push({ host, cluster, kind: "bpa", role: "worker", node: `worker-${index % 2}` });
  }
  entries.sort((a, b) => (a.host < b.host ? -1 : 1));
  return { entries, text: `# Written by metalsynth\n${toYaml(lockDocument({ entries }))}` };
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
    [
      "binary garbage",
      "\u0000\u0001lock",
      ["yaml-syntax rendered/metalsynth.lock.yaml:1 ", "lock-invalid rendered/metalsynth.lock.yaml:1 "],
    ],
    [
      "an alias bomb",
      `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
      ["yaml-syntax rendered/metalsynth.lock.yaml:1 ", "lock-invalid rendered/metalsynth.lock.yaml:1 "],
    ],
    [
      "a lock outside the block style, too large for the full parser",
      `{"apiVersion": "metalsynth.io/v1alpha1", "kind": "Lock", "hosts": [], "x": "${"x".repeat(MAX_DOCUMENT_TEXT_BYTES)}"}\n`,
      ["lock-invalid rendered/metalsynth.lock.yaml:1 "],
    ],
  ])("reports %s with file and line", (_, text, expected) => {
    expect(where(text)).toEqual(expected);
  });

  it("reads a sound lock without findings", () => {
    const { lock, issues } = lockFromText("lock.yaml", LOCK.replace("king", "master"));
    expect(issues).toEqual([]);
    expect(lock.entries).toHaveLength(1);
  });

  // A lock is no Kubernetes object (decision 0044): a region's is several MiB, and a site must render
  // again with it.
  it("reads a lock over the Kubernetes object limit, as written and reformatted as JSON", () => {
    const { entries, text } = bigLock(16_000);
    expect(text.length).toBeGreaterThan(MAX_DOCUMENT_BYTES);
    expect(lockFromText("lock.yaml", text)).toEqual({ lock: { entries }, issues: [] });
    const json = JSON.stringify(lockDocument({ entries }));
    expect(lockFromText("lock.json", json)).toEqual({ lock: { entries }, issues: [] });
  });

  it("places a finding in a lock the fast reader read whole on its line", () => {
    // Over a quarter of the object limit, where a CR's document goes to the full parser.
    const { text } = bigLock(5_000);
    expect(text.length).toBeGreaterThan(MAX_DOCUMENT_BYTES / 4);
    const broken = text.replace(/role: worker\n(?![\s\S]*role: worker)/, "role: king\n");
    expect(where(broken)).toEqual(["lock-invalid rendered/metalsynth.lock.yaml:25003 hosts[4999].role"]);
  });
});
