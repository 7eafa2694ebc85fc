import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { macFor, makeInventory, type HostOptions } from "../../test/builders/inventory.ts";
import { makeProvisioning, type ProvisioningOptions } from "../../test/builders/specs.ts";
import { clusterKey } from "../cluster-key.ts";
import type { RuleId } from "../rule-catalogue.ts";
import { claimMacHosts, placeBpaCluster } from "./bpa-placement.ts";
import { fitHistogram, rejection } from "../rules/filters.ts";
import { parseCpuFlag } from "../checked.ts";
import { CPUS } from "../rules/filters/cpus.ts";
import { UNCLAIMED } from "../rules/filters/unclaimed.ts";
import { ClaimLedger } from "./claim-ledger.ts";
import type { LockEntry } from "../model/lock.ts";
import { dnsLabel } from "../../test/builders/inventory.ts";
import { planCache } from "./engine/plan-cache.ts";

const GI = 2 ** 30;
const CLUSTER = clusterKey("ns", "c1");

interface Setup {
  /** Host name → the other cluster (in namespace `ns`) that already holds it. */
  readonly held?: Readonly<Record<string, string>>;
  /** Node label → host name the previous lock gave it (role master). */
  readonly locked?: Readonly<Record<string, string>>;
}

/** Places one cluster the way planSite does: the lock and MAC claims first, then the entries. */
function place(
  hosts: readonly HostOptions[],
  nodes: ProvisioningOptions,
  setup: Setup = {},
  judge: typeof rejection = rejection,
) {
  const inventory = makeInventory(hosts);
  const byName = (name: string) => inventory.byId(`metal3/${name}`)!;
  const ledger = new ClaimLedger();
  for (const [name, cluster] of Object.entries(setup.held ?? {}))
    ledger.claim(byName(name), clusterKey("ns", cluster), "held");
  const lockEntries = Object.entries(setup.locked ?? {}).map(([node, name]): LockEntry => ({
    host: `metal3/${name}`,
    cluster: CLUSTER,
    kind: "bpa",
    role: "master",
    node,
  }));
  for (const entry of lockEntries) ledger.claim(byName(entry.host.slice("metal3/".length)), CLUSTER, "lock");
  const group = { namespace: dnsLabel("ns"), name: dnsLabel("c1"), provisioning: makeProvisioning(nodes) };
  const cache = planCache();
  const macs = claimMacHosts(new Map([[CLUSTER, group]]), inventory, ledger, cache);
  const placed = placeBpaCluster(CLUSTER, group, {
    inventory,
    bestFit: inventory.bestFit(),
    ledger,
    lockEntries,
    vanished: [],
    explains: true,
    warns: true,
    stillPlanning: () => true,
    openMatches: (hosts) => hosts,
    rejection: judge,
    cache,
    contested: macs.contested,
  });
  const issues = [...macs.issues, ...placed.issues];
  return {
    nodes: [...placed.plan.masters, ...placed.plan.workers].map(
      (node) => `${node.request.role} ${node.request.label}=${node.host.name}`,
    ),
    rules: issues.map((found) => found.rule),
    issues,
    placed,
  };
}

describe("placeBpaCluster", () => {
  it.each<[string, HostOptions[], ProvisioningOptions, Setup, string[], RuleId[]]>([
    [
      "a MAC entry gets the host with that MAC",
      [{ name: "a" }, { name: "b" }],
      { masters: { m1: { "mac-address": macFor("metal3/b", 0) } } },
      {},
      ["master m1=b"],
      [],
    ],
    [
      "a MAC entry keeps its host even when it is too small, with the rule that says so",
      [{ name: "a", cpus: 8 }],
      { masters: { m1: { "mac-address": macFor("metal3/a", 0), cpu: 16 } } },
      {},
      ["master m1=a"],
      ["cpu-insufficient"],
    ],
    [
      "best fit: the smallest host with enough CPUs",
      [
        { name: "a", cpus: 32 },
        { name: "b", cpus: 8 },
        { name: "c", cpus: 16 },
      ],
      { masters: { m1: { cpu: 12 } } },
      {},
      ["master m1=c"],
      [],
    ],
    [
      "best fit: CPUs first, then memory",
      [
        { name: "a", cpus: 16, memoryBytes: 32 * GI },
        { name: "b", cpus: 16, memoryBytes: 128 * GI },
        { name: "c", cpus: 64, memoryBytes: 64 * GI },
      ],
      { masters: { m1: { memory: "64Gi" } } },
      {},
      ["master m1=b"],
      [],
    ],
    [
      "without cpu or memory: the smallest free host that has the features",
      [
        { name: "a", cpus: 32, sriov: true },
        { name: "b", cpus: 8 },
      ],
      { masters: { m1: {} }, workers: { w1: { sriov: true } } },
      {},
      ["master m1=b", "worker w1=a"],
      [],
    ],
    [
      "two labels naming one host by two of its NICs: mac-duplicate on the later entry",
      [
        {
          name: "a",
          nics: [
            { name: "eno1", mac: macFor("metal3/a", 0), ipv4: "10.0.0.1" },
            { name: "eno2", mac: macFor("metal3/a", 1), ipv4: "10.0.1.1" },
          ],
        },
      ],
      {
        masters: { m1: { "mac-address": macFor("metal3/a", 0) } },
        workers: { w1: { "mac-address": macFor("metal3/a", 1) } },
      },
      {},
      ["master m1=a", "worker w1=a"],
      ["mac-duplicate"],
    ],
    [
      "one label as master and worker by two NICs of its host is not mac-duplicate",
      [
        {
          name: "a",
          nics: [
            { name: "eno1", mac: macFor("metal3/a", 0), ipv4: "10.0.0.1" },
            { name: "eno2", mac: macFor("metal3/a", 1), ipv4: "10.0.1.1" },
          ],
        },
      ],
      {
        masters: { m1: { "mac-address": macFor("metal3/a", 0) } },
        workers: { m1: { "mac-address": macFor("metal3/a", 1) } },
      },
      {},
      ["master m1=a", "worker m1=a"],
      [],
    ],
    [
      "a null worker shares its master's host",
      [{ name: "a" }],
      { masters: { m1: {} }, workers: { m1: null } },
      {},
      ["master m1=a", "worker m1=a"],
      [],
    ],
    [
      "two entries never share a host",
      [{ name: "a" }, { name: "b" }],
      { masters: { m1: {}, m2: {} } },
      {},
      ["master m1=a", "master m2=b"],
      [],
    ],
    [
      "a host another cluster holds is skipped",
      [
        { name: "a", cpus: 8 },
        { name: "b", cpus: 16 },
      ],
      { masters: { m1: {} } },
      { held: { a: "other" } },
      ["master m1=b"],
      [],
    ],
    [
      "the lock's host is kept while it still fits",
      [{ name: "a", cpus: 8 }, { name: "b" }],
      { masters: { m1: {} } },
      { locked: { m1: "b" } },
      ["master m1=b"],
      [],
    ],
    [
      "a resource entry does not take the host a later MAC entry names",
      [{ name: "a", cpus: 8 }, { name: "b" }],
      { masters: { m1: {}, m2: { "mac-address": macFor("metal3/a", 0) } } },
      {},
      ["master m1=b", "master m2=a"],
      [],
    ],
    [
      "a host without an installed OS is placed, with a warning",
      [{ name: "a", provisioningState: "available" }],
      { masters: { m1: {} } },
      {},
      ["master m1=a"],
      ["host-not-ready"],
    ],
    ["no host big enough", [{ name: "a", cpus: 8 }], { masters: { m1: { cpu: 64 } } }, {}, [], ["no-fit"]],
    [
      "a MAC no host has",
      [{ name: "a" }],
      { masters: { m1: { "mac-address": "02:00:00:00:00:01" } } },
      {},
      [],
      ["mac-unknown"],
    ],
    [
      "a MAC whose host another cluster holds",
      [{ name: "a" }],
      { masters: { m1: { "mac-address": macFor("metal3/a", 0) } } },
      { held: { a: "other" } },
      [],
      ["host-claimed"],
    ],
  ])("%s", (_, hosts, nodes, setup, expected, rules) => {
    const placed = place(hosts, nodes, setup);
    expect(placed.nodes).toEqual(expected);
    expect(placed.rules).toEqual(rules);
  });

  it("reports a host named by two of its NICs on the later entry's mac-address, about that host", () => {
    const nics = [
      { name: "eno1", mac: macFor("metal3/a", 0), ipv4: "10.0.0.1" },
      { name: "eno2", mac: macFor("metal3/a", 1), ipv4: "10.0.1.1" },
    ];
    const { issues } = place([{ name: "a", nics }], {
      masters: { m1: { "mac-address": macFor("metal3/a", 0) } },
      workers: { w1: { "mac-address": macFor("metal3/a", 1) } },
    });
    expect(issues.map((found) => [found.rule, found.path, found.host, found.message])).toEqual([
      [
        "mac-duplicate",
        "spec.workers[0].w1.mac-address",
        "metal3/a",
        `${macFor("metal3/a", 1)} is a NIC of host metal3/a, which master "m1" (spec.masters[0]) names by ${macFor("metal3/a", 0)}; one host can't be two nodes`,
      ],
    ]);
  });

  it("explains a no-fit with the histogram, and every host in the decision", () => {
    const { issues, placed } = place(
      [
        { name: "a", cpus: 8 },
        { name: "b", cpus: 96 },
      ],
      { masters: { m1: { cpu: 64 } } },
      { held: { b: "other" } },
    );
    expect(issues.map((found) => found.message)).toEqual([
      "no host for master m1: 0/2 hosts fit: 1 claimed by other clusters, 1 fewer than 64 CPUs",
    ]);
    expect(placed.plan.decisions[0]?.rejected()).toEqual([
      {
        host: "metal3/a",
        rejection: { filter: CPUS.name, reason: "insufficient", requested: 64, available: 8 },
      },
      { host: "metal3/b", rejection: { filter: UNCLAIMED.name, reason: "claimed" } },
    ]);
  });

  it("words a no-fit as judging every host one by one would, when it judges one host of each kind", () => {
    // Lists alike in content but not the same list, as two reads of a host give, are two kinds.
    const flags = [["avx2"], ["avx2"], ["avx2", "sse4_2"]].map((list) => list.map(parseCpuFlag));
    const disks = [
      [{ name: "sda", sizeBytes: 400 * GI, rotational: false }],
      [{ name: "sda", sizeBytes: 400 * GI, rotational: false }],
      [{ name: "sdb", sizeBytes: 2000 * GI, rotational: true }],
    ];
    // Each fact the entries may ask for is most often what they ask, so many hosts pass every
    // filter but one.
    const often = <T>(fits: T, ...others: T[]) => fc.constantFrom(fits, fits, fits, ...others);
    const facts = fc.record({
      cpus: often<number | undefined>(16, 8, undefined),
      memoryBytes: often(64 * GI, 32 * GI),
      sriov: often(true, false),
      qat: often(true, false),
      cpuArch: often<string | undefined>("x86_64", undefined),
      cpuModel: often<string | undefined>("Intel(R) Xeon(R) Gold 6230", "AMD EPYC 7502", undefined),
      cpuFlags: often<(typeof flags)[number] | undefined>(flags[0]!, flags[1]!, flags[2]!, undefined),
      disks: often<(typeof disks)[number] | undefined>(disks[0]!, disks[1]!, disks[2]!, undefined),
      speedGbps: often<number | undefined>(25, 10, undefined),
    });
    type Facts = typeof facts extends fc.Arbitrary<infer T> ? T : never;
    // A host is one of a few kinds, or one of them with one fact of another: the host a group of
    // that kind must not hide.
    const host = fc.record({
      kind: fc.nat(2),
      differs: fc.option(
        fc.constantFrom<keyof Facts>(
          "cpus",
          "memoryBytes",
          "sriov",
          "qat",
          "cpuArch",
          "cpuModel",
          "cpuFlags",
          "disks",
          "speedGbps",
        ),
        { nil: undefined },
      ),
      other: facts,
      held: fc.nat(3).map((draw) => draw === 0),
    });
    const entry = fc.record(
      {
        cpu: fc.constant(16),
        memory: fc.constant("64Gi"),
        sriov: fc.boolean(),
        qat: fc.boolean(),
        hardware: fc.record(
          {
            arch: fc.constant("x86_64"),
            cpuModel: fc.constant("xeon"),
            cpuFlags: fc.constantFrom(["avx2"], ["sse4_2"]),
            nicSpeedGbps: fc.constant(25),
            disk: fc.record(
              { minSizeGibibytes: fc.constantFrom(100, 1000), rotational: fc.boolean() },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.array(facts, { minLength: 3, maxLength: 3 }),
        fc.array(host, { minLength: 1, maxLength: 30 }),
        fc.array(entry, { minLength: 1, maxLength: 4 }),
        (kinds, drawn, workers) => {
          const hosts = drawn.map(
            ({ kind, differs, other, held }, position): HostOptions & { held: boolean } => {
              const { speedGbps, ...hardware } =
                differs === undefined ? kinds[kind]! : { ...kinds[kind]!, [differs]: other[differs] };
              const name = `h${position}`;
              const nic = { name: "eno1", mac: macFor(`metal3/${name}`, 0), ...(speedGbps && { speedGbps }) };
              return { name, ...hardware, held, nics: [nic] };
            },
          );
          const held = Object.fromEntries(
            hosts.filter((host) => host.held).map((host) => [host.name, "other"]),
          );
          const { issues, placed } = place(
            hosts,
            {
              masters: { m1: {} },
              workers: Object.fromEntries(workers.map((asked, index) => [`w${index}`, asked])),
            },
            { held },
          );
          for (const decision of placed.plan.decisions.filter((made) => made.chosen.length === 0)) {
            const judged = decision.rejected().map((rejected) => rejected.rejection);
            expect(issues.map((found) => found.message)).toContain(
              `no host for ${decision.subject}: ${fitHistogram(hosts.length, 0, judged)}`,
            );
          }
        },
      ),
      { numRuns: 600 },
    );
  });

  it("judges the hosts once for entries that ask alike and fit nowhere, until a claim or a used host changes the verdicts", () => {
    const hosts: HostOptions[] = [
      { name: "a", cpus: 8 },
      { name: "b", cpus: 96 },
      { name: "c", cpus: 16 },
      { name: "d", cpus: 4 },
    ];
    const big = { cpu: 64 };
    const judged = (workers: ProvisioningOptions["workers"]) => {
      let calls = 0;
      const counting: typeof rejection = (filters, host) => {
        calls += 1;
        return rejection(filters, host);
      };
      const placed = place(
        hosts,
        { masters: { m1: { cpu: 4 } }, workers },
        { held: { b: "other" } },
        counting,
      );
      return { calls, messages: placed.issues.map((found) => found.message), nodes: placed.nodes };
    };

    const alone = judged({ w1: big });
    const many = judged({ w1: big, w2: big, w3: big, w4: big });
    expect(many.calls).toBe(alone.calls);
    expect(many.messages).toEqual(
      ["w1", "w2", "w3", "w4"].map((label) => alone.messages[0]?.replace("worker w1", `worker ${label}`)),
    );

    // Entries that ask differently are each judged, but their histograms only on the hosts open
    // to them: the master uses d and another cluster holds b, so each further entry judges b, its
    // one best-fit candidate, then a and c against its CPUs, not every host against every filter.
    const distinct = judged({ w1: big, w2: { cpu: 65 }, w3: { cpu: 66 } });
    expect(distinct.calls).toBe(alone.calls + 2 * (1 + 2));
    expect(distinct.messages).toEqual(
      [64, 65, 66].map(
        (cpus, index) =>
          `no host for worker w${index + 1}: 0/4 hosts fit: 2 fewer than ${cpus} CPUs, 1 claimed by other clusters, 1 serves another node of this cluster`,
      ),
    );

    const between = judged({ w1: big, w2: { cpu: 16 }, w3: big });
    expect(between.nodes).toEqual(["master m1=d", "worker w2=c"]);
    expect(between.messages).toEqual([
      "no host for worker w1: 0/4 hosts fit: 2 fewer than 64 CPUs, 1 claimed by other clusters, 1 serves another node of this cluster",
      "no host for worker w3: 0/4 hosts fit: 2 serves another node of this cluster, 1 claimed by other clusters, 1 fewer than 64 CPUs",
    ]);

    // Host c is the cluster's already (its lock's, for a node the CR no longer has): w2 takes it
    // without a new claim, and only the hosts used tell w3 that c serves another node now.
    const placed = place(
      hosts,
      { masters: { m1: { cpu: 4 } }, workers: { w1: big, w2: { cpu: 16 }, w3: big } },
      { held: { b: "other" }, locked: { gone: "c" } },
    );
    expect(placed.nodes).toEqual(["master m1=d", "worker w2=c"]);
    expect(placed.issues.map((found) => found.message)).toEqual(between.messages);
  });

  it("records each placed node in the lock", () => {
    const { placed } = place([{ name: "a" }], { masters: { m1: {} }, workers: { m1: null } });
    expect(placed.lock).toEqual([
      { host: "metal3/a", cluster: CLUSTER, kind: "bpa", role: "master", node: "m1" },
      { host: "metal3/a", cluster: CLUSTER, kind: "bpa", role: "worker", node: "m1" },
    ]);
  });
});
