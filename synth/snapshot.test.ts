import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeInventory, type HostOptions } from "../test/builders/inventory.ts";
import { evaluateResources } from "./evaluate.ts";
import { compareText, type Issue } from "./issue.ts";
import { EMPTY_LOCK } from "./rules/lock.ts";
import type { Lock } from "./model/lock.ts";
import { SiteSnapshot } from "./snapshot.ts";
import { readResources } from "./site/resources.ts";
import type { AnyResource } from "./model/resource.ts";

const GiB = 2 ** 30;
const NAMESPACE = "edge";

const HOSTS = Array.from({ length: 12 }, (_, index): HostOptions => ({
  name: `h${String(index).padStart(2, "0")}`,
  cpus: [8, 16, 32][index % 3],
  memoryBytes: [32, 64][index % 2]! * GiB,
  labels: { pool: index % 2 === 0 ? "a" : "b" },
  ...(index === 11 && { sipOwner: { namespace: NAMESPACE, name: "s1", nodeType: "Worker" } }),
}));
const inventory = makeInventory(HOSTS);
const MACS = [...inventory.hosts.flatMap((host) => host.macs), "aa:bb:cc:dd:ee:ff"];
/**
 * `jumphost-c0`'s address book and Software ConfigMap are the jump hosts of SIPClusters
 * `c0-configmap` and `c0-software`: `name-clash`.
 */
const CLUSTERS = ["c0", "c1", "c2", "jumphost-c0"];

const entry = fc.oneof(
  fc.constantFrom(...MACS).map((mac) => ({ "mac-address": mac })),
  fc.constantFrom({}, { cpu: 16 }, { cpu: 32, memory: "64Gi" }, { cpu: 64 }),
);

/** CRs of one namespace with few names, so keys, clusters, references and NodePorts collide. */
const crArbitrary = fc.oneof(
  fc
    .record({
      name: fc.constantFrom("p0", "p1", "p2"),
      cluster: fc.constantFrom(...CLUSTERS),
      master: entry,
      workers: fc.array(entry, { maxLength: 2 }),
    })
    .map(({ name, cluster, master, workers }) => ({
      apiVersion: "bpa.akraino.org/v1alpha1",
      kind: "Provisioning",
      metadata: { name, namespace: NAMESPACE, labels: { cluster } },
      spec: {
        masters: [{ "master-1": master }],
        ...(workers.length > 0 && {
          workers: workers.map((worker, index) => ({ [`worker-${index + 1}`]: worker })),
        }),
      },
    })),
  fc
    .record({ name: fc.constantFrom("w0", "w1"), cluster: fc.constantFrom(...CLUSTERS) })
    .map(({ name, cluster }) => ({
      apiVersion: "bpa.akraino.org/v1alpha1",
      kind: "Software",
      metadata: { name, namespace: NAMESPACE, labels: { cluster } },
      spec: { masterSoftware: ["htop"] },
    })),
  fc
    .record({
      name: fc.constantFrom("g0", "g1"),
      cluster: fc.constantFrom(...CLUSTERS),
      provisioningCR: fc.constantFrom("p0", "p1", "p9"),
    })
    .map(({ name, cluster, provisioningCR }) => ({
      apiVersion: "bpa.akraino.org/v1alpha1",
      kind: "Cluster",
      metadata: { name, namespace: NAMESPACE, labels: { cluster } },
      spec: { provisioningCR },
    })),
  fc
    .record({
      name: fc.constantFrom("s0", "s1", "c0", "c0-configmap", "c0-software"),
      workers: fc.integer({ min: 1, max: 3 }),
      nodePort: fc.constantFrom(30001, 30002, 30003),
    })
    .map(({ name, workers, nodePort }) => ({
      apiVersion: "airship.airshipit.org/v1",
      kind: "SIPCluster",
      metadata: { name, namespace: NAMESPACE },
      spec: {
        nodes: {
          ControlPlane: { labelSelector: { matchLabels: { pool: "a" } }, count: { active: 1, standby: 0 } },
          Worker: { labelSelector: { matchLabels: { pool: "b" } }, count: { active: workers, standby: 0 } },
        },
        services: { jumpHost: [{ nodeInterfaceId: "oam-ipv4", nodePort, nodeSSHPrivateKeys: "ssh-keys" }] },
      },
    })),
);

function read(value: unknown, file: string): AnyResource | undefined {
  const position = { file, line: 1, column: 1 };
  return readResources([{ file, index: 0, value, position: () => position }]).resources[0];
}

/** Unique by key and sorted by key, as the webhook knows a site. */
function site(objects: readonly unknown[]): AnyResource[] {
  const byKey = new Map<string, AnyResource>();
  objects.forEach((object, index) => {
    const resource = read(object, `site-${index}`);
    if (resource && !byKey.has(resource.key)) byKey.set(resource.key, resource);
  });
  return [...byKey.values()].sort((a, b) => compareText(a.key, b.key));
}

function identity(found: Issue): string {
  return `${found.object ?? ""} ${found.rule} ${found.path}`;
}

/** What the webhook tells about `resource`: its own findings, and the errors it newly causes elsewhere. */
function verdict(issues: readonly Issue[], resource: AnyResource, before: ReadonlySet<string>): string[] {
  return issues
    .filter(
      (found) =>
        found.object === resource.key || (found.severity === "error" && !before.has(identity(found))),
    )
    .map((found) => `${identity(found)}: ${found.message}`)
    .sort(compareText);
}

describe("SiteSnapshot", () => {
  it("finds for a changed CR what evaluating the whole changed site finds", () => {
    fc.assert(
      fc.property(
        fc.array(crArbitrary, { maxLength: 8 }),
        fc.array(crArbitrary, { maxLength: 4 }),
        crArbitrary,
        (objects, previous, object) => {
          const resources = site(objects);
          const lock: Lock = evaluateResources(site(previous), inventory, EMPTY_LOCK).plan.lock;
          const snapshot = SiteSnapshot.of({ resources, inventory, lock });
          const before = new Set(snapshot.issues.filter((found) => found.severity === "error").map(identity));
          const resource = read(object, "review");
          if (!resource) throw new Error("the generated CR does not read");
          const changed = [...resources.filter((known) => known.key !== resource.key), resource].sort(
            (a, b) => compareText(a.key, b.key),
          );
          const full = evaluateResources(changed, inventory, lock).issues;
          expect(verdict(snapshot.change(resource), resource, before)).toEqual(
            verdict(full, resource, before),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("after any sequence of CR and BareMetalHost changes, is the snapshot of the site they leave", () => {
    /** A BareMetalHost h00…h12 as it is after an event: resized, relabelled, inspected anew, or gone. */
    const hostEvent = fc.record({
      index: fc.integer({ min: 0, max: HOSTS.length }),
      host: fc.option(
        fc.record({
          cpus: fc.constantFrom(8, 16, 32, undefined),
          memory: fc.constantFrom(32, 64),
          pool: fc.constantFrom("a", "b"),
          owner: fc.option(fc.constantFrom("s0", "s1"), { freq: 3 }),
          state: fc.constantFrom("provisioned", "inspecting"),
        }),
        { freq: 6 },
      ),
    });
    /**
     * One event: a CR applied (added or changed), or deleted (by the key of one generated CR), or
     * a BareMetalHost changed (by index, h12 being one that joins).
     */
    const event = fc.oneof(
      crArbitrary.map((object) => ({ apply: object })),
      crArbitrary.map((object) => ({ delete: object })),
      hostEvent.map((change) => ({ host: change })),
    );
    fc.assert(
      fc.property(
        fc.array(crArbitrary, { maxLength: 8 }),
        fc.array(crArbitrary, { maxLength: 4 }),
        fc.array(event, { minLength: 1, maxLength: 6 }),
        (objects, previous, events) => {
          const lock: Lock = evaluateResources(site(previous), inventory, EMPTY_LOCK).plan.lock;
          let known = site(objects);
          let snapshot = SiteSnapshot.of({ resources: known, inventory, lock });
          const hosts: (HostOptions | undefined)[] = [...HOSTS];
          events.forEach((change, index) => {
            if ("host" in change) {
              const { index: at, host } = change.host;
              hosts[at] =
                host === null
                  ? undefined
                  : {
                      name: `h${String(at).padStart(2, "0")}`,
                      cpus: host.cpus,
                      memoryBytes: host.memory * GiB,
                      labels: { pool: host.pool },
                      provisioningState: host.state,
                      ...(host.owner && {
                        sipOwner: { namespace: NAMESPACE, name: host.owner, nodeType: "Worker" },
                      }),
                    };
              snapshot = snapshot.withInventory(
                makeInventory(hosts.filter((options) => options !== undefined)),
              );
              return;
            }
            const resource = read("apply" in change ? change.apply : change.delete, `event-${index}`);
            if (!resource) throw new Error("the generated CR does not read");
            const others = known.filter((other) => other.key !== resource.key);
            known = ("apply" in change ? [...others, resource] : others).sort((a, b) =>
              compareText(a.key, b.key),
            );
            snapshot = snapshot.withResources(known);
          });
          const full = SiteSnapshot.of({ resources: known, inventory: snapshot.inventory, lock });
          // Sorted here: a CR applied again unchanged keeps its outcome, positions in its first file.
          expect(snapshot.issues.map(described).sort(compareText)).toEqual(
            full.issues.map(described).sort(compareText),
          );
          expect(snapshot.plan.lock).toEqual(full.plan.lock);
        },
      ),
      { numRuns: 200 },
    );
  });
});

function described(found: Issue): string {
  return `${identity(found)}: ${found.message}`;
}
