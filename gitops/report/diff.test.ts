import { clusterKey } from "../../synth/cluster-key.ts";
import { describe, expect, it } from "vitest";
import { lockDocument } from "../../synth/plan/lock.ts";
import type { LockEntry } from "../../synth/model/lock.ts";
import { toYaml, toYamlStream } from "../../synth/codec/yaml-output.ts";
import { diffTrees } from "./diff.ts";
import { commitMessage } from "./diff-format.ts";

const lock = (...entries: LockEntry[]) => toYaml(lockDocument({ entries }));
const bpa = (host: string, cluster: string, role: "master" | "worker", node: string): LockEntry => ({
  host,
  cluster: clusterKey(cluster.split("/")[0] ?? "", cluster.split("/")[1] ?? ""),
  kind: "bpa",
  role,
  node,
});
const object = (kind: string, name: string, data: Record<string, string> = {}) => ({
  apiVersion: kind === "Job" ? "batch/v1" : "v1",
  kind,
  metadata: { name, namespace: "edge-a" },
  data,
});
const tree = (files: Record<string, string>) => new Map(Object.entries(files));

const EAST = "clusters/edge-a/east";

describe("diffTrees and commitMessage", () => {
  it("shows a host a SIPCluster is releasing as removed from it", () => {
    const member: LockEntry = {
      host: "m3/n1",
      cluster: clusterKey("edge-sip", "t"),
      kind: "sip",
      role: "Worker",
    };
    const diff = diffTrees(
      tree({ "metalsynth.lock.yaml": lock(member) }),
      tree({ "metalsynth.lock.yaml": lock({ ...member, released: true }) }),
    );
    expect(diff.clusters[0]?.hosts).toEqual({ added: [], removed: [{ host: "m3/n1", role: "Worker" }] });
  });

  it("names hosts gained and lost, a replaced Job and a changed ConfigMap", () => {
    const before = tree({
      "metalsynth.lock.yaml": lock(
        bpa("m3/n1", "edge-a/east", "master", "m1"),
        bpa("m3/n2", "edge-a/east", "worker", "w1"),
      ),
      [`${EAST}/kud.yaml`]: toYamlStream([
        object("Job", "kud-east-1a2b3c4d"),
        object("ConfigMap", "east-hosts", { a: "1" }),
      ]),
      [`${EAST}/kustomization.yaml`]: toYaml({
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
      }),
    });
    const after = tree({
      "metalsynth.lock.yaml": lock(
        bpa("m3/n1", "edge-a/east", "master", "m1"),
        bpa("m3/n7", "edge-a/east", "worker", "w1"),
      ),
      // The ConfigMap moved ahead of the Job: order within a file is not a change.
      [`${EAST}/kud.yaml`]: toYamlStream([
        object("ConfigMap", "east-hosts", { a: "2" }),
        object("Job", "kud-east-9f8e7d6c"),
      ]),
      [`${EAST}/kustomization.yaml`]: toYaml({
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
        resources: [],
      }),
    });
    const diff = diffTrees(before, after);
    expect(diff.clusters).toHaveLength(1);
    expect(diff.clusters[0]).toMatchObject({
      cluster: "edge-a/east",
      status: "changed",
      hosts: { added: [{ host: "m3/n7", role: "worker", node: "w1" }], removed: [{ host: "m3/n2" }] },
    });
    expect(diff.clusters[0]?.objects.changed.map((ref) => ref.name)).toEqual(["east-hosts"]);
    expect(diff.files.map((file) => `${file.status} ${file.path}`)).toEqual([
      `changed ${EAST}/kud.yaml`,
      `changed ${EAST}/kustomization.yaml`,
      "changed metalsynth.lock.yaml",
    ]);
    expect(commitMessage(diff)).toEqual({
      subject: "metalsynth: edge-a/east",
      body: "edge-a/east: +worker w1=m3/n7; -worker w1=m3/n2; Job kud-east replaced; ConfigMap east-hosts changed",
    });
  });

  it.each([
    [
      "a new cluster, counted",
      tree({}),
      tree({
        "metalsynth.lock.yaml": lock(
          bpa("m3/n1", "edge-a/east", "master", "m1"),
          bpa("m3/n2", "edge-a/east", "worker", "w1"),
        ),
        [`${EAST}/kud.yaml`]: toYamlStream([object("Job", "kud-east-1")]),
      }),
      "edge-a/east: new cluster (1 master, 1 worker hosts; 1 object)",
    ],
    [
      "a removed cluster",
      tree({
        "metalsynth.lock.yaml": lock(bpa("m3/n1", "edge-a/east", "master", "m1")),
        [`${EAST}/kud.yaml`]: toYamlStream([object("Job", "kud-east-1"), object("ConfigMap", "c")]),
      }),
      tree({ "metalsynth.lock.yaml": lock() }),
      "edge-a/east: removed (1 host released; 2 objects)",
    ],
    [
      "many object changes, counted past three",
      tree({ [`${EAST}/a.yaml`]: toYamlStream([object("ConfigMap", "a"), object("ConfigMap", "b")]) }),
      tree({
        [`${EAST}/a.yaml`]: toYamlStream(["c", "d", "e", "f"].map((name) => object("ConfigMap", name))),
      }),
      "edge-a/east: objects: 4 added, 2 removed",
    ],
    [
      "a file that is no longer YAML, as one opaque change",
      tree({ [`${EAST}/a.yaml`]: toYaml(object("ConfigMap", "a")) }),
      tree({ [`${EAST}/a.yaml`]: "key: [unclosed\n" }),
      `edge-a/east: +File ${EAST}/a.yaml; -ConfigMap a`,
    ],
    [
      "the wiring",
      tree({
        "flux/edge-a-east.yaml": toYaml({
          ...object("Kustomization", "edge-a-east"),
          apiVersion: "kustomize.toolkit.fluxcd.io/v1",
        }),
      }),
      tree({}),
      "gitops wiring: -Kustomization edge-a-east",
    ],
    [
      "only the lock's comment",
      tree({ "metalsynth.lock.yaml": `# a\n${lock()}` }),
      tree({ "metalsynth.lock.yaml": lock() }),
      "metalsynth.lock.yaml changed",
    ],
  ])("summarises %s", (_, before, after, body) => {
    expect(commitMessage(diffTrees(before, after)).body).toBe(body);
  });

  it("shortens the subject to a count when the cluster names do not fit, and takes a given one", () => {
    const clusters = Array.from(
      { length: 6 },
      (_, index) => `clusters/edge-a/cluster-number-${index}/a.yaml`,
    );
    const diff = diffTrees(
      tree({}),
      tree(Object.fromEntries(clusters.map((file) => [file, toYaml(object("ConfigMap", "a"))]))),
    );
    expect(commitMessage(diff).subject).toBe("metalsynth: 6 clusters");
    expect(commitMessage(diff, "render for CHG-42").subject).toBe("render for CHG-42");
  });

  // A region's lock is several MiB, over the Kubernetes object limit it once was read with: it gave no
  // entries, and every host of the new lock showed as new (decision 0044).
  it("reads hosts from a lock over 1.5 MiB", () => {
    // A region's shape: 4,000 clusters of four hosts.
    const entries = Array.from({ length: 16_000 }, (_, index) =>
      bpa(
        `metal3/host-${String(index).padStart(5, "0")}`,
        `edge-a/c${String(Math.floor(index / 4)).padStart(4, "0")}`,
        "worker",
        `worker-${index % 4}`,
      ),
    );
    const before = lock(...entries);
    expect(before.length).toBeGreaterThan(1.5 * 2 ** 20);
    const added = bpa("metal3/host-99999", "edge-a/c0000", "worker", "worker-4");
    const diff = diffTrees(
      tree({ "metalsynth.lock.yaml": before }),
      tree({ "metalsynth.lock.yaml": lock(...entries, added) }),
    );
    expect(diff.clusters.map((changed) => changed.cluster)).toEqual(["edge-a/c0000"]);
    expect(diff.clusters[0]?.hosts).toEqual({
      added: [{ host: "metal3/host-99999", role: "worker", node: "worker-4" }],
      removed: [],
    });
  });

  it("finds nothing in equal trees", () => {
    const same = tree({
      "metalsynth.lock.yaml": lock(),
      [`${EAST}/a.yaml`]: toYaml(object("ConfigMap", "a")),
    });
    expect(diffTrees(same, new Map(same))).toEqual({
      clusters: [],
      wiring: { added: [], changed: [], removed: [] },
      files: [],
    });
  });
});
