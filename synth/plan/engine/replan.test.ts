import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeInventory, type HostOptions } from "../../../test/builders/inventory.ts";
import { makeProvisioning, makeSipCluster, type NodeEntry } from "../../../test/builders/specs.ts";
import { clusterKey, type ClusterKey } from "../../cluster-key.ts";
import { compareText, type Issue } from "../../issue.ts";
import { SIP_LABELS } from "../../inventory/bmh.ts";
import type { Host } from "../../inventory/host.ts";
import { Inventory } from "../../inventory/inventory.ts";
import type { Provisioning } from "../../model/bpa.ts";
import type { SipCluster } from "../../model/sip.ts";
import { EMPTY_LOCK } from "../../rules/lock.ts";
import type { Lock, LockEntry } from "../../model/lock.ts";
import type { SitePlan } from "../model.ts";
import type { SiteModel } from "../../model/site.ts";
import { planClusters, tracePlan } from "../plan-site.ts";
import { replanClusters, replanFindings, replanHosts, TraceIndex, type ClusterChange } from "./replan.ts";

const GiB = 2 ** 30;
const HOSTS = 14;

/** A site as the property test builds it: BPA clusters c0…c5 and SIPClusters s0…s2 in `ns`. */
interface Site {
  readonly bpa: ReadonlyMap<string, Provisioning>;
  readonly sip: ReadonlyMap<string, SipCluster>;
}

function model(site: Site): SiteModel {
  return { provisionings: [...site.bpa.values()], softwares: [], glues: [], sips: [...site.sip.values()] };
}

/** What must be the same whichever way a site was planned: placements, the lock, every issue. */
function outcome(result: { plan: SitePlan; issues: readonly Issue[] }) {
  return {
    clusters: result.plan.clusters.map((plan) =>
      plan.kind === "sip"
        ? `${plan.key} sip ${plan.members.map((member) => `${member.role}=${member.host.id}${member.standby ? "+" : ""}`).join(" ")} released ${plan.released.map((host) => host.id).join(" ")}`
        : `${plan.key} bpa ${[...plan.masters, ...plan.workers].map((node) => `${node.request.label}=${node.host.id}`).join(" ")}`,
    ),
    retired: result.plan.retired.map(
      (plan) => `${plan.key} ${plan.released.map((host) => host.id).join(" ")}`,
    ),
    lock: result.plan.lock.entries,
    issues: result.issues
      .map((found) => `${found.rule} ${found.object ?? ""} ${found.path} ${found.message}`)
      .sort(compareText),
  };
}

/** MACs several hosts' NICs may carry (the loader reports the clash; the lowest id owns the MAC). */
const SHARED_MACS = ["02:00:00:00:0a:01", "02:00:00:00:0a:02"];

const hostArbitrary = (index: number) =>
  fc
    .record({
      cpus: fc.constantFrom(8, 16, 32, undefined),
      memory: fc.constantFrom(32, 64, 128),
      rack: fc.constantFrom("r1", "r2", "r3"),
      pool: fc.constantFrom("a", "b"),
      owner: fc.option(
        fc.record({
          name: fc.constantFrom("s0", "s1", "s2"),
          role: fc.constantFrom("ControlPlane", "Worker"),
          // Some hosts carry a partial SIP label set, which claims them as well (decision 0032).
          labels: fc.constantFrom("all", "all", "all", "no node-type", "name only"),
        }),
        { freq: 4 },
      ),
      mac: fc.option(fc.constantFrom(...SHARED_MACS), { freq: 4 }),
      ip: fc.boolean(),
      state: fc.constantFrom("provisioned", "provisioned", "ready", "deprovisioning", undefined),
      // Availability facts (decision 0052), read by a filter of their own and kept hosts' warnings.
      availability: fc.option(
        fc.constantFrom(
          { consumer: { kind: "Metal3Machine", namespace: "ns", name: "m" } },
          { offline: true as const },
          { poweredOff: true as const },
          { operationalStatus: "error" },
          { deletionTimestamp: "2026-11-29T00:00:00Z" },
          { paused: "" },
        ),
        { freq: 3 },
      ),
    })
    .map(({ cpus, memory, rack, pool, owner, mac, ip, state, availability }): HostOptions => {
      const name = `h${String(index).padStart(2, "0")}`;
      return {
        name,
        cpus,
        memoryBytes: memory * GiB,
        rack,
        labels: { pool, ...(owner && owner.labels !== "all" && partialSipLabels(owner.name, owner.labels)) },
        nics: [
          {
            name: "enp1s0",
            mac: mac ?? `02:00:00:00:00:${String(index).padStart(2, "0")}`,
            ...(ip && { ipv4: `10.0.0.${index + 1}` }),
          },
        ],
        provisioningState: state,
        ...(availability !== null && { availabilityFacts: availability }),
        ...(owner?.labels === "all" && {
          sipOwner: { namespace: "ns", name: owner.name, nodeType: owner.role },
        }),
      };
    });

/** The SIP labels of a host labelled for `name` in part only. */
function partialSipLabels(name: string, which: "no node-type" | "name only"): Record<string, string> {
  return which === "name only"
    ? { [SIP_LABELS.name]: name }
    : { [SIP_LABELS.name]: name, [SIP_LABELS.namespace]: "ns" };
}

/** Hosts h00…h13, and h14…h15 that may join the inventory later. */
const JOINING = 2;

/** The inventory's hosts after BareMetalHosts changed: each kept, changed, gone or (h14…) new. */
const changedHostsArbitrary = (hosts: readonly HostOptions[]) =>
  fc
    .tuple(
      ...Array.from({ length: HOSTS + JOINING }, (_, index) =>
        fc.oneof(
          { weight: index < HOSTS ? 6 : 2, arbitrary: fc.constant("kept" as const) },
          { weight: 2, arbitrary: hostArbitrary(index) },
          { weight: 1, arbitrary: fc.constant("gone" as const) },
        ),
      ),
    )
    .map((changes) =>
      changes.flatMap((change, index) => {
        if (change === "gone") return [];
        if (change !== "kept") return [change];
        const host = hosts[index];
        return host ? [host] : [];
      }),
    );

/** A node entry: a MAC of a host (or of none), resources, or (workers) the master's host. */
const entryArbitrary = (macs: readonly string[], worker: boolean) =>
  fc.oneof(
    fc.constantFrom(...macs, "aa:bb:cc:dd:ee:ff").map((mac): NodeEntry => ({ "mac-address": mac })),
    fc
      .record({
        cpu: fc.constantFrom(undefined, 8, 16, 32),
        memory: fc.constantFrom(undefined, "32Gi", "64Gi"),
      })
      .map(({ cpu, memory }): NodeEntry => ({ ...(cpu && { cpu }), ...(memory && { memory }) })),
    ...(worker ? [fc.constant<NodeEntry>(null)] : []),
  );

const provisioningArbitrary = (name: string, macs: readonly string[]) =>
  fc
    .record({
      master: entryArbitrary(macs, false),
      workers: fc.array(entryArbitrary(macs, true), { maxLength: 2 }),
    })
    .map(({ master, workers }) =>
      makeProvisioning({
        cluster: name,
        masters: { "master-1": master },
        workers: Object.fromEntries(workers.map((entry, index) => [`worker-${index + 1}`, entry])),
      }),
    );

const sipArbitrary = (name: string) =>
  fc
    .record({
      workers: fc.integer({ min: 1, max: 3 }),
      standby: fc.integer({ min: 0, max: 1 }),
      spread: fc.boolean(),
    })
    .map(({ workers, standby, spread }) =>
      makeSipCluster({
        name,
        nodes: {
          ControlPlane: { matchLabels: { pool: "a" }, active: 1 },
          Worker: {
            matchLabels: { pool: "b" },
            active: workers,
            standby,
            ...(spread && { topologyKey: "vino.airshipit.org/rack" }),
          },
        },
      }),
    );

const BPA_NAMES = ["c0", "c1", "c2", "c3", "c4", "c5"];
const SIP_NAMES = ["s0", "s1", "s2"];

const siteArbitrary = (macs: readonly string[]) =>
  fc
    .record({
      bpa: fc
        .subarray(BPA_NAMES)
        .chain((names) => fc.tuple(...names.map((name) => provisioningArbitrary(name, macs)))),
      sip: fc.subarray(SIP_NAMES).chain((names) => fc.tuple(...names.map(sipArbitrary))),
    })
    .map(({ bpa, sip }): Site => ({
      bpa: new Map(bpa.map((provisioning) => [provisioning.cluster ?? "", provisioning])),
      sip: new Map(sip.map((cluster) => [cluster.resource.name, cluster])),
    }));

/** One change: a cluster replaced by another request, added, or removed. */
const changeArbitrary = (macs: readonly string[]) =>
  fc.oneof(
    fc
      .constantFrom(...BPA_NAMES)
      .chain((name) =>
        fc
          .option(provisioningArbitrary(name, macs))
          .map((provisioning) => ({ name, kind: "bpa" as const, provisioning })),
      ),
    fc
      .constantFrom(...SIP_NAMES)
      .chain((name) => fc.option(sipArbitrary(name)).map((sip) => ({ name, kind: "sip" as const, sip }))),
  );

/** The site with one cluster changed, and the change as `replanClusters` takes it. */
function applyChange(
  site: Site,
  change:
    | { name: string; kind: "bpa"; provisioning: Provisioning | null }
    | { name: string; kind: "sip"; sip: SipCluster | null },
): { site: Site; changes: Map<ClusterKey, ClusterChange> } {
  const bpa = new Map(site.bpa);
  const sip = new Map(site.sip);
  if (change.kind === "bpa") {
    if (change.provisioning) bpa.set(change.name, change.provisioning);
    else bpa.delete(change.name);
  } else if (change.sip) sip.set(change.name, change.sip);
  else sip.delete(change.name);
  const changed: Site = { bpa, sip };
  const key = clusterKey("ns", change.name);
  const clusters = planClusters(model(changed));
  const bpaGroup = clusters.bpaByKey.get(key);
  const sipCluster = clusters.sipByKey.get(key);
  return {
    site: changed,
    changes: new Map([[key, { ...(bpaGroup && { bpa: bpaGroup }), ...(sipCluster && { sip: sipCluster }) }]]),
  };
}

/** The lock a previous run of `previous` left: the usual state of a site being changed. */
function lockOf(previous: Site | null, inventory: Inventory): Lock {
  return previous ? tracePlan({ model: model(previous), inventory, lock: EMPTY_LOCK }).plan.lock : EMPTY_LOCK;
}

describe("replanClusters", () => {
  it("plans a changed cluster exactly as a full run of the changed site does", () => {
    const scenario = fc
      .tuple(...Array.from({ length: HOSTS }, (_, index) => hostArbitrary(index)))
      .chain((hosts) => {
        const inventory = makeInventory(hosts);
        const macs = inventory.hosts.flatMap((host) => host.macs);
        return fc.record({
          inventory: fc.constant(inventory),
          previous: fc.option(siteArbitrary(macs)),
          site: siteArbitrary(macs),
          change: changeArbitrary(macs),
        });
      });
    fc.assert(
      fc.property(scenario, ({ inventory, previous, site, change }) => {
        const lock = lockOf(previous, inventory);
        const trace = tracePlan({ model: model(site), inventory, lock });
        const changed = applyChange(site, change);
        const incremental = replanClusters(
          new TraceIndex(trace, inventory, lock),
          changed.changes,
        ).complete();
        const full = tracePlan({ model: model(changed.site), inventory, lock });
        expect(outcome(incremental)).toEqual(outcome(full));
      }),
      { numRuns: 300 },
    );
  });

  it("plans changed, new and removed BareMetalHosts exactly as a full run does, also after a replanned change", () => {
    const scenario = fc
      .tuple(...Array.from({ length: HOSTS }, (_, index) => hostArbitrary(index)))
      .chain((hosts) => {
        const inventory = makeInventory(hosts);
        const macs = [...inventory.hosts.flatMap((host) => host.macs), ...SHARED_MACS];
        return fc.record({
          inventory: fc.constant(inventory),
          changedHosts: changedHostsArbitrary(hosts),
          previous: fc.option(siteArbitrary(macs)),
          site: siteArbitrary(macs),
          change: fc.option(changeArbitrary(macs)),
        });
      });
    fc.assert(
      fc.property(scenario, ({ inventory, changedHosts, previous, site, change }) => {
        const lock = lockOf(previous, inventory);
        let trace = tracePlan({ model: model(site), inventory, lock });
        // The webhook's trace has usually been planned again for a CR change before hosts change.
        if (change) {
          const changed = applyChange(site, change);
          trace = replanClusters(new TraceIndex(trace, inventory, lock), changed.changes).complete();
          site = changed.site;
        }
        const now = makeInventory(changedHosts);
        const incremental = replanHosts(new TraceIndex(trace, inventory, lock), now).complete();
        const full = tracePlan({ model: model(site), inventory: now, lock });
        expect(outcome(incremental)).toEqual(outcome(full));
        // What the next change starts from must answer as a fresh trace would.
        const again = replanHosts(new TraceIndex(incremental, now, lock), inventory).complete();
        expect(outcome(again)).toEqual(outcome(tracePlan({ model: model(site), inventory, lock })));
      }),
      { numRuns: 500 },
    );
  });

  it("re-places only the turns the change reaches", () => {
    const inventory = makeInventory(
      Array.from({ length: 8 }, (_, index): HostOptions => ({
        name: `h${index}`,
        cpus: index < 4 ? 8 : 32,
        memoryBytes: 64 * GiB,
      })),
    );
    const small = (name: string) => makeProvisioning({ cluster: name, masters: { "master-1": { cpu: 8 } } });
    const site: Site = {
      bpa: new Map([
        ["c0", small("c0")],
        ["c1", small("c1")],
        ["c2", makeProvisioning({ cluster: "c2", masters: { "master-1": { cpu: 32 } } })],
      ]),
      sip: new Map(),
    };
    const trace = tracePlan({ model: model(site), inventory, lock: EMPTY_LOCK });
    const index = new TraceIndex(trace, inventory, EMPTY_LOCK);
    // c0 now asks for a big host: c1 (which walked past c0's old host) and c2 (whose host c0 may
    // take) are placed again; a change that claims nothing new places only itself.
    const bigger = applyChange(site, {
      name: "c0",
      kind: "bpa",
      provisioning: makeProvisioning({ cluster: "c0", masters: { "master-1": { cpu: 32 } } }),
    });
    expect(replanClusters(index, bigger.changes).placed.map((turn) => turn.turn.key)).toEqual([
      "ns/c0",
      "ns/c1",
      "ns/c2",
    ]);
    const same = applyChange(site, { name: "c2", kind: "bpa", provisioning: site.bpa.get("c2") ?? null });
    expect(replanClusters(index, same.changes).placed.map((turn) => turn.turn.key)).toEqual(["ns/c2"]);
  });
});

describe("replanClustersFindings", () => {
  it("gives a review the changed cluster's findings and only the errors of the clusters it moves", () => {
    // Three hosts not installed yet, the first with no address: each cluster gets a warning, c1 on
    // h0 an error as well.
    const inventory = makeInventory(
      ["h0", "h1", "h2"].map((name, index): HostOptions => ({
        name,
        cpus: 8,
        memoryBytes: 64 * GiB,
        provisioningState: "ready",
        ...(index === 1 && { nics: [{ name: "enp1s0", mac: "02:00:00:00:0b:01" }] }),
      })),
    );
    const site: Site = {
      bpa: new Map([["c1", makeProvisioning({ cluster: "c1", masters: { "master-1": { cpu: 8 } } })]]),
      sip: new Map(),
    };
    const index = new TraceIndex(
      tracePlan({ model: model(site), inventory, lock: EMPTY_LOCK }),
      inventory,
      EMPTY_LOCK,
    );
    // c0 sorts first and takes h0, so c1 moves to h1, which has no address.
    const { changes } = applyChange(site, {
      name: "c0",
      kind: "bpa",
      provisioning: makeProvisioning({ cluster: "c0", masters: { "master-1": { cpu: 8 } } }),
    });
    const found = (issues: readonly Issue[]) =>
      issues.map((issue) => `${issue.cluster ?? ""} ${issue.rule} ${issue.severity}`).sort(compareText);
    expect(found(replanClusters(index, changes).placed.flatMap((turn) => turn.placed.issues))).toEqual([
      "ns/c0 host-not-ready warning",
      "ns/c1 host-not-ready warning",
      "ns/c1 ip-missing error",
    ]);
    expect(found(replanFindings(index, changes))).toEqual([
      "ns/c0 host-not-ready warning",
      "ns/c1 ip-missing error",
    ]);
  });
});

describe("replanClusters, one change after another", () => {
  it("places a SIPCluster again when a host it passed over as held is freed, though it never looked the host up", () => {
    const inventory = makeInventory([
      { name: "h0", labels: { pool: "a" } },
      { name: "h1", labels: { pool: "a" } },
      ...Array.from({ length: 10 }, (_, index): HostOptions => ({
        name: `other-${index}`,
        labels: { pool: "z" },
      })),
    ]);
    const h0 = inventory.byId("metal3/h0");
    const namesH0 = makeProvisioning({
      cluster: "c0",
      masters: { "master-1": { "mac-address": h0!.macs[0]! } },
    });
    const site: Site = { bpa: new Map([["c0", namesH0]]), sip: new Map() };
    const s0 = makeSipCluster({
      name: "s0",
      nodes: { ControlPlane: { matchLabels: { pool: "a" }, active: 1 } },
    });
    // s0 joins: placed again on its own, it skips h0 (c0's by MAC) without looking it up.
    const joined = applyChange(site, { name: "s0", kind: "sip", sip: s0 });
    const trace = tracePlan({ model: model(site), inventory, lock: EMPTY_LOCK });
    const withS0 = replanClusters(new TraceIndex(trace, inventory, EMPTY_LOCK), joined.changes).complete();
    // c0 leaves: h0 is free, and comes first in s0's walk.
    const left = applyChange(joined.site, { name: "c0", kind: "bpa", provisioning: null });
    const incremental = replanClusters(
      new TraceIndex(withS0, inventory, EMPTY_LOCK),
      left.changes,
    ).complete();
    const full = tracePlan({ model: model(left.site), inventory, lock: EMPTY_LOCK });
    expect(outcome(full).clusters).toEqual(["ns/s0 sip ControlPlane=metal3/h0 released "]);
    expect(outcome(incremental)).toEqual(outcome(full));
  });
});

describe("replanClustersHosts", () => {
  /** Plans `site` on `before`, then for `after` both ways; returns the two outcomes. */
  function bothWays(site: Site, before: Inventory, after: Inventory) {
    const trace = tracePlan({ model: model(site), inventory: before, lock: EMPTY_LOCK });
    const incremental = replanHosts(new TraceIndex(trace, before, EMPTY_LOCK), after).complete();
    const full = tracePlan({ model: model(site), inventory: after, lock: EMPTY_LOCK });
    return { incremental: outcome(incremental), full: outcome(full), trace: incremental };
  }
  // Hosts no turn looks at (their SIP labels hold them for a cluster the site no longer has), so
  // that a turn reading a few hosts reads less than the share that counts as reading all of them.
  const held = Array.from({ length: 10 }, (_, index): HostOptions => ({
    name: `held-${index}`,
    cpus: 64,
    sipOwner: { namespace: "ns", name: "gone", nodeType: "Worker" },
  }));
  const bpaSite = (...provisionings: Provisioning[]): Site => ({
    bpa: new Map(provisionings.map((provisioning) => [provisioning.cluster ?? "", provisioning])),
    sip: new Map(),
  });

  it("places again only the turns that read the fact that changed", () => {
    // c0 names h0 by MAC. c1's best-fit walks pass h0, held, on their way to h1 and h2; s0's walk
    // over the hosts labelled pool=a passes h0 the same way on its way to h3.
    const before = makeInventory([
      { name: "h0", cpus: 8, labels: { pool: "a" } },
      { name: "h1", cpus: 16 },
      { name: "h2", cpus: 32 },
      { name: "h3", cpus: 64, labels: { pool: "a" } },
      ...held,
    ]);
    const h0 = before.byId("metal3/h0")!;
    const site: Site = {
      ...bpaSite(
        makeProvisioning({ cluster: "c0", masters: { "master-1": { "mac-address": h0.macs[0]! } } }),
        makeProvisioning({
          cluster: "c1",
          masters: { "master-1": { cpu: 8 } },
          workers: { "worker-1": { cpu: 8 } },
        }),
      ),
      sip: new Map([
        ["s0", makeSipCluster({ name: "s0", nodes: { Worker: { matchLabels: { pool: "a" }, active: 1 } } })],
      ]),
    };
    const trace = tracePlan({ model: model(site), inventory: before, lock: EMPTY_LOCK });
    const placedAfter = (change: (host: Host) => Host) => {
      const after = new Inventory(before.hosts.map(change));
      const replanned = replanHosts(new TraceIndex(trace, before, EMPTY_LOCK), after);
      const full = tracePlan({ model: model(site), inventory: after, lock: EMPTY_LOCK });
      expect(outcome(replanned.complete())).toEqual(outcome(full));
      return replanned.placed.map((turn) => `${turn.turn.pass} ${turn.turn.key}`);
    };
    const h0Now = (facts: Partial<Host>) => (host: Host) =>
      host.id === h0.id ? { ...host, ...facts } : host;
    // h0's provisioning state: c0 looked it up (its MAC names it); c1 only walked past it as held,
    // and its filters read no state; s0's selector reads labels.
    expect(placedAfter(h0Now({ provisioningState: "ready", osInstalled: false }))).toEqual(["bpa ns/c0"]);
    // An unrelated label of h0: s0 listed its matches, so it reads h0's labels; c1 reads none.
    expect(placedAfter(h0Now({ labels: { ...h0.labels, note: "x" } }))).toEqual(["sip ns/s0", "bpa ns/c0"]);
  });

  it("places a best-fit turn again when a host it walked past shrinks, though its entry asks for nothing", () => {
    // c0's worker asks for no CPUs or memory: it takes the smallest free host, h1. Its walk read
    // no resource filter, yet which host comes first is the hosts' hardware.
    const before = makeInventory([{ name: "h1", cpus: 16 }, { name: "h2", cpus: 32 }, ...held]);
    const after = new Inventory(
      before.hosts.map((host) => (host.id === "metal3/h2" ? { ...host, cpus: 8 } : host)),
    );
    const site = bpaSite(makeProvisioning({ cluster: "c0", masters: { "master-1": {} } }));
    const { incremental, full } = bothWays(site, before, after);
    expect(full.clusters).toEqual(["ns/c0 bpa master-1=metal3/h2"]);
    expect(incremental).toEqual(full);
  });

  it("offers a host joining without hardware details to a turn that walked past every sized host", () => {
    const before = makeInventory([{ name: "h1", cpus: 16 }, { name: "h5", cpus: undefined }, ...held]);
    const after = makeInventory([...before.hosts, { name: "h3", cpus: undefined }]);
    const site = bpaSite(
      makeProvisioning({ cluster: "c0", masters: { "master-1": { cpu: 16 } } }),
      makeProvisioning({ cluster: "c1", masters: { "master-1": {} } }),
    );
    const { incremental, full } = bothWays(site, before, after);
    expect(full.clusters).toContain("ns/c1 bpa master-1=metal3/h3");
    expect(incremental).toEqual(full);
  });

  it("gives a SIPCluster the host its labels now assign it, though the cluster never looked at it", () => {
    const before = makeInventory([
      { name: "h0", labels: { pool: "a" } },
      { name: "h1", labels: { pool: "a" } },
      ...held,
    ]);
    const after = makeInventory([
      ...before.hosts.filter((host) => host.name !== "h1"),
      {
        name: "h1",
        labels: { pool: "a" },
        sipOwner: { namespace: "ns", name: "s0", nodeType: "ControlPlane" },
      },
    ]);
    const site: Site = {
      bpa: new Map(),
      sip: new Map([
        [
          "s0",
          makeSipCluster({ name: "s0", nodes: { ControlPlane: { matchLabels: { pool: "a" }, active: 1 } } }),
        ],
      ]),
    };
    const { incremental, full } = bothWays(site, before, after);
    expect(full.clusters).toContain("ns/s0 sip ControlPlane=metal3/h1 released ");
    expect(incremental).toEqual(full);
  });

  it("leaves a trace whose best-fit reads are in the new inventory's ranks, so the next change is planned right", () => {
    // c9 names h2 by MAC, so c0 walks past h2 to h3 and reads h2 only by its rank.
    const before = makeInventory([
      { name: "h1", cpus: 8 },
      { name: "h2", cpus: 16 },
      { name: "h3", cpus: 32 },
      ...held,
    ]);
    const h2 = before.byId("metal3/h2");
    const c0 = makeProvisioning({ cluster: "c0", masters: { "master-1": { cpu: 16 } } });
    const namesH2 = makeProvisioning({
      cluster: "c9",
      masters: { "master-1": { "mac-address": h2!.macs[0]! } },
    });
    const site = bpaSite(c0, namesH2);
    // h1 leaves: h2 and h3 move down one rank.
    const after = makeInventory(before.hosts.filter((host) => host.name !== "h1"));
    const { incremental, full, trace } = bothWays(site, before, after);
    expect(incremental).toEqual(full);
    // c9 lets h2 go: c0, the best fit for which h2 now is, must be placed again.
    const released = applyChange(site, { name: "c9", kind: "bpa", provisioning: null });
    const next = replanClusters(new TraceIndex(trace, after, EMPTY_LOCK), released.changes).complete();
    const fresh = tracePlan({ model: model(released.site), inventory: after, lock: EMPTY_LOCK });
    expect(outcome(fresh).clusters).toContain("ns/c0 bpa master-1=metal3/h2");
    expect(outcome(next)).toEqual(outcome(fresh));
  });
});

/** The ways a living site changes a host between two snapshots (decision 0052). */
const HOST_CHANGES = ["vanish", "consumed", "deleting", "off", "error", "bmc", "ip"] as const;

/** `host` as a snapshot after `change` shows it; none when it vanished. */
function changedHost(host: HostOptions, change: (typeof HOST_CHANGES)[number], index: number): HostOptions[] {
  const facts = (availabilityFacts: NonNullable<HostOptions["availabilityFacts"]>) => [
    { ...host, availabilityFacts: { ...host.availabilityFacts, ...availabilityFacts } },
  ];
  switch (change) {
    case "vanish":
      return [];
    case "consumed":
      return facts({ consumer: { kind: "Metal3Machine", namespace: "other", name: `m-${index}` } });
    case "deleting":
      return [{ ...host, provisioningState: "deleting" }];
    case "off":
      return facts({ offline: true, poweredOff: true });
    case "error":
      return facts({ operationalStatus: "error", errorType: "power management error" });
    case "bmc":
      return [{ ...host, bmc: { address: `redfish://10.99.0.${index}/redfish/v1/Systems/1` } }];
    case "ip":
      return [
        {
          ...host,
          nics: (host.nics ?? []).map((nic) =>
            nic.ipv4 === undefined ? nic : { ...nic, ipv4: `10.1.0.${index + 1}` },
          ),
        },
      ];
  }
}

describe("hosts live (decision 0052)", () => {
  it("never moves a locked node off its host without a finding naming the host, whatever the snapshot did to it", () => {
    const scenario = fc
      .tuple(...Array.from({ length: HOSTS }, (_, index) => hostArbitrary(index)))
      .chain((hosts) => {
        const macs = makeInventory(hosts).hosts.flatMap((host) => host.macs);
        return fc.record({
          hosts: fc.constant(hosts),
          site: siteArbitrary(macs),
          changes: fc.tuple(
            ...hosts.map(() => fc.option(fc.constantFrom(...HOST_CHANGES), { freq: 2, nil: undefined })),
          ),
        });
      });
    fc.assert(
      fc.property(scenario, ({ hosts, site, changes }) => {
        const before = makeInventory(hosts);
        const lock = tracePlan({ model: model(site), inventory: before, lock: EMPTY_LOCK }).plan.lock;
        const now = makeInventory(
          hosts.flatMap((host, index) => {
            const change = changes[index];
            return change === undefined ? [host] : changedHost(host, change, index);
          }),
        );
        const { plan, issues } = tracePlan({ model: model(site), inventory: now, lock });
        const stays = (entry: LockEntry) =>
          plan.lock.entries.some(
            (kept) =>
              kept.host === entry.host &&
              kept.cluster === entry.cluster &&
              kept.released !== true &&
              (entry.kind === "bpa"
                ? kept.kind === "bpa" && kept.role === entry.role && kept.node === entry.node
                : kept.kind === "sip" && kept.role === entry.role),
          );
        const named = (entry: LockEntry) =>
          issues.some((found) => found.host === entry.host || found.message.includes(entry.host));
        const movedSilently = lock.entries.filter(
          (entry) => entry.released !== true && !stays(entry) && !named(entry),
        );
        expect(movedSilently).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
