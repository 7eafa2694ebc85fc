import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clusterKey } from "../cluster-key.ts";
import { parseLock } from "./lock.ts";
import { allocationObjects } from "../plan/allocation.ts";
import { lockFromAllocations } from "./allocation.ts";
import { lockDocument } from "../plan/lock.ts";
import { compareLockEntries } from "./lock.ts";
import type { Lock, LockEntry } from "../model/lock.ts";

const label = fc.constantFrom("a", "east", "edge-a", "t-1", "x".repeat(63));
const host = fc.tuple(fc.constantFrom("metal3", "hosts-b"), fc.constantFrom("n1", "n2", "n3", "r1.n4", "n5"));

/** One cluster's entries: BPA masters/workers (a host may be both), or SIP roles with their flags. */
const clusterEntries = fc
  .record({ namespace: label, name: label, kind: fc.constantFrom("bpa" as const, "sip" as const) })
  .chain(({ namespace, name, kind }) => {
    const cluster = clusterKey(namespace, name);
    const entry: fc.Arbitrary<LockEntry> =
      kind === "bpa"
        ? fc.record({
            host: host.map(([ns, n]) => `${ns}/${n}`),
            cluster: fc.constant(cluster),
            kind: fc.constant("bpa" as const),
            role: fc.constantFrom("master" as const, "worker" as const),
            node: fc.constantFrom("master-1", "worker-2", "n"),
          })
        : fc.record(
            {
              host: host.map(([ns, n]) => `${ns}/${n}`),
              cluster: fc.constant(cluster),
              kind: fc.constant("sip" as const),
              role: fc.constantFrom("ControlPlane", "Worker", "gpu"),
              standby: fc.constant(true as const),
              released: fc.constant(true as const),
              snapshot: fc.constantFrom("0a1b2c3d", "ffffffff"),
            },
            { requiredKeys: ["host", "cluster", "kind", "role"] },
          );
    return fc.array(entry, { maxLength: 4 });
  });

/** Locks as plans make them, and as hand edits leave them (a host in two clusters, twice in one). */
const anyLock: fc.Arbitrary<Lock> = fc
  .uniqueArray(clusterEntries, {
    maxLength: 5,
    selector: (entries) => entries[0]?.cluster ?? "",
  })
  .map((clusters) => ({ entries: clusters.flat().sort(compareLockEntries) }));

/** What the API server hands back: JSON, with metadata of its own. */
function asServed(objects: ReturnType<typeof allocationObjects>): unknown[] {
  return objects.map(({ object }) => {
    const copy = JSON.parse(JSON.stringify(object)) as { metadata: Record<string, unknown> };
    copy.metadata.uid = "0f0e";
    copy.metadata.resourceVersion = "7";
    return copy;
  });
}

describe("allocationObjects and lockFromAllocations", () => {
  it("read back the lock parseLock reads from the lock file, findings and all", () => {
    fc.assert(
      fc.property(anyLock, (lock) => {
        const fromFile = parseLock(JSON.parse(JSON.stringify(lockDocument(lock))));
        const fromObjects = lockFromAllocations(asServed(allocationObjects(lock)));
        expect(fromObjects.lock).toEqual(fromFile.lock);
        expect(fromObjects.issues.map((found) => found.rule)).toEqual(
          fromFile.issues.map((found) => found.rule),
        );
        if (fromFile.issues.length === 0) expect(fromObjects.lock).toEqual(lock);
      }),
      { numRuns: 200 },
    );
  });

  it("renders one Allocation per cluster, its entries without cluster and kind, in wave -3", () => {
    const east = clusterKey("edge-a", "east");
    const lock: Lock = {
      entries: [
        { host: "metal3/n1", cluster: east, kind: "bpa", role: "master", node: "master-1" },
        { host: "metal3/n2", cluster: clusterKey("sip", "t"), kind: "sip", role: "Worker", standby: true },
        { host: "metal3/n3", cluster: east, kind: "bpa", role: "worker", node: "worker-1" },
      ],
    };
    expect(allocationObjects(lock)).toEqual([
      {
        key: east,
        object: {
          apiVersion: "metalsynth.io/v1alpha1",
          kind: "Allocation",
          metadata: {
            name: "east",
            namespace: "edge-a",
            labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": "east" },
            annotations: { "argocd.argoproj.io/sync-wave": "-3" },
          },
          spec: {
            kind: "bpa",
            hosts: [
              { host: "metal3/n1", role: "master", node: "master-1" },
              { host: "metal3/n3", role: "worker", node: "worker-1" },
            ],
          },
        },
      },
      expect.objectContaining({ key: clusterKey("sip", "t") }),
    ]);
  });
});

describe("lockFromAllocations", () => {
  const valid = () => ({
    apiVersion: "metalsynth.io/v1alpha1",
    kind: "Allocation",
    metadata: { name: "east", namespace: "edge-a" },
    spec: { kind: "bpa", hosts: [{ host: "metal3/n1", role: "master", node: "master-1" }] },
  });
  const other = {
    ...valid(),
    metadata: { name: "west", namespace: "edge-a" },
  };
  const at = "Allocation/edge-a/east";

  it.each<[string, unknown[], string[]]>([
    ["a sound Allocation", [valid()], []],
    ["another kind", [{ ...valid(), kind: "ConfigMap" }], [at]],
    ["another version", [{ ...valid(), apiVersion: "metalsynth.io/v1" }], [at]],
    [
      "a namespace that is no DNS label",
      [{ ...valid(), metadata: { name: "east", namespace: "Edge" } }],
      ["Allocation/Edge/east.metadata"],
    ],
    ["one listed twice", [valid(), valid()], [`${at}.metadata.name`]],
    ["no spec", [{ ...valid(), spec: undefined }], [`${at}.spec`]],
    ["an unknown spec field", [{ ...valid(), spec: { ...valid().spec, extra: 1 } }], [`${at}.spec.extra`]],
    ["an unknown kind", [{ ...valid(), spec: { ...valid().spec, kind: "vm" } }], [`${at}.spec.kind`]],
    ["hosts that are not a list", [{ ...valid(), spec: { kind: "bpa", hosts: {} } }], [`${at}.spec.hosts`]],
    [
      "an entry naming its cluster",
      [{ ...valid(), spec: { kind: "bpa", hosts: [{ ...valid().spec.hosts[0], cluster: "edge-a/west" }] } }],
      [`${at}.spec.hosts[0].cluster`],
    ],
    [
      "an entry with an unknown role",
      [{ ...valid(), spec: { kind: "bpa", hosts: [{ ...valid().spec.hosts[0], role: "king" }] } }],
      [`${at}.spec.hosts[0].role`],
    ],
    [
      "a SIP field on a BPA entry",
      [{ ...valid(), spec: { kind: "bpa", hosts: [{ ...valid().spec.hosts[0], standby: true }] } }],
      [`${at}.spec.hosts[0].standby`],
    ],
    ["one host in two clusters", [valid(), other], ["Allocation/edge-a/west.spec.hosts[0].cluster"]],
  ])("reports %s as lock-invalid at its Allocation and field", (_, objects, paths) => {
    const { issues } = lockFromAllocations(objects);
    expect(issues.map((found) => found.rule)).toEqual(paths.map(() => "lock-invalid"));
    expect(issues.map((found) => found.path)).toEqual(paths);
  });

  it("keeps no entry of a host two Allocations record, and names where the first is", () => {
    const { lock, issues } = lockFromAllocations([valid(), other]);
    expect(lock.entries).toEqual([]);
    expect(issues[0]?.message).toContain(`at ${at}.spec.hosts[0], for edge-a/east`);
    expect(issues[0]?.object).toBe("Allocation/edge-a/west");
  });
});
