import { describe, expect, it } from "vitest";
import { RACK_LABEL, makeInventory, type HostOptions } from "../../test/builders/inventory.ts";
import { makeSipCluster, type SipClusterOptions } from "../../test/builders/specs.ts";
import { clusterKey } from "../cluster-key.ts";
import type { RuleId } from "../rule-catalogue.ts";
import { ClaimLedger } from "./claim-ledger.ts";
import { rejection } from "../rules/filters.ts";
import { SELECTOR } from "../rules/filters/selector.ts";
import { TOPOLOGY } from "../rules/filters/topology.ts";
import { UNCLAIMED } from "../rules/filters/unclaimed.ts";
import { hostSnapshot } from "./lock.ts";
import type { LockEntry } from "../model/lock.ts";
import { placeSipCluster, retireSipCluster } from "./sip-placement.ts";
import { planCache } from "./engine/plan-cache.ts";

const CLUSTER = clusterKey("ns", "sip");
const OWNED = { namespace: "ns", name: "sip", nodeType: "ControlPlane" } as const;

interface Setup {
  /** Host name → the other cluster (in namespace `ns`) that already holds it. */
  readonly held?: Readonly<Record<string, string>>;
  /** The previous lock's entries of this cluster: host name → role (`+` marks a standby). */
  readonly locked?: Readonly<Record<string, string>>;
}

function place(hosts: readonly HostOptions[], options: SipClusterOptions, setup: Setup = {}) {
  const inventory = makeInventory(hosts);
  const byName = (name: string) => inventory.byId(`metal3/${name}`)!;
  const ledger = new ClaimLedger();
  for (const [name, cluster] of Object.entries(setup.held ?? {}))
    ledger.claim(byName(name), clusterKey("ns", cluster), "held");
  const lockEntries = Object.entries(setup.locked ?? {}).map(([name, role]): LockEntry => ({
    host: `metal3/${name}`,
    cluster: CLUSTER,
    kind: "sip",
    role: role.replace("+", ""),
    ...(role.endsWith("+") && { standby: true }),
  }));
  const placed = placeSipCluster(makeSipCluster(options), {
    inventory,
    bestFit: inventory.bestFit(),
    ledger,
    lockEntries,
    vanished: [],
    explains: true,
    warns: true,
    stillPlanning: () => true,
    openMatches: (hosts) => hosts,
    rejection,
    cache: planCache(),
    releasing: [],
  });
  return {
    members: placed.plan.members.map(
      (member) => `${member.role} ${member.host.name}${member.standby ? " (standby)" : ""}`,
    ),
    released: placed.plan.released.map((host) => host.name),
    rules: placed.issues.map((found) => found.rule),
    placed,
  };
}

const controlPlane = (active: number, more: Partial<SipClusterOptions["nodes"]> = {}): SipClusterOptions => ({
  nodes: { ControlPlane: { active, matchLabels: { role: "cp" }, topologyKey: RACK_LABEL }, ...more },
});
const cp = (name: string, rack: string, more: HostOptions = {}): HostOptions => ({
  name,
  rack,
  labels: { role: "cp" },
  ...more,
});

describe("placeSipCluster", () => {
  it.each<[string, HostOptions[], SipClusterOptions, Setup, string[], string[], RuleId[]]>([
    [
      "fills from matching hosts in name order",
      [{ name: "a" }, cp("b", "r1"), cp("c", "r2")],
      controlPlane(1),
      {},
      ["ControlPlane b"],
      [],
      [],
    ],
    [
      "takes at most one host per topology value",
      [cp("a", "r1"), cp("b", "r1"), cp("c", "r2")],
      controlPlane(2),
      {},
      ["ControlPlane a", "ControlPlane c"],
      [],
      [],
    ],
    [
      "keeps a host labelled for it, and counts its rack",
      [cp("a", "r1"), cp("b", "r1", { sipOwner: OWNED }), cp("c", "r2")],
      controlPlane(2),
      {},
      ["ControlPlane b", "ControlPlane c"],
      [],
      [],
    ],
    [
      "keeps the lock's hosts before labels or names",
      [cp("a", "r1"), cp("b", "r2")],
      controlPlane(1),
      { locked: { b: "ControlPlane" } },
      ["ControlPlane b"],
      [],
      [],
    ],
    [
      "shrinks by releasing standby hosts first, then the highest names",
      [cp("a", "r1"), cp("b", "r2"), cp("c", "r3")],
      controlPlane(1),
      { locked: { a: "ControlPlane+", b: "ControlPlane", c: "ControlPlane" } },
      ["ControlPlane b"],
      ["a", "c"],
      [],
    ],
    [
      "marks the hosts past active as standby",
      [cp("a", "r1"), cp("b", "r2")],
      { nodes: { ControlPlane: { active: 1, standby: 1, matchLabels: { role: "cp" } } } },
      {},
      ["ControlPlane a", "ControlPlane b (standby)"],
      [],
      [],
    ],
    [
      "skips hosts another cluster holds",
      [cp("a", "r1"), cp("b", "r2")],
      controlPlane(1),
      { held: { a: "other" } },
      ["ControlPlane b"],
      [],
      [],
    ],
    [
      "never gives one host two roles",
      [cp("a", "r1", { labels: { role: "cp", worker: "yes" } }), { name: "b", labels: { worker: "yes" } }],
      {
        nodes: {
          ControlPlane: { active: 1, matchLabels: { role: "cp" } },
          Worker: { active: 1, matchLabels: { worker: "yes" } },
        },
      },
      {},
      ["ControlPlane a", "Worker b"],
      [],
      [],
    ],
    [
      "too few hosts: a no-fit, with the hosts it found",
      [cp("a", "r1"), cp("b", "r1")],
      controlPlane(2),
      {},
      ["ControlPlane a"],
      [],
      ["no-fit"],
    ],
    [
      "a topology key no matching host carries",
      [{ name: "a", labels: { role: "cp", rack: "r1" } }],
      { nodes: { ControlPlane: { active: 1, matchLabels: { role: "cp" }, topologyKey: "rak" } } },
      {},
      ["ControlPlane a"],
      [],
      ["topology-key"],
    ],
  ])("%s", (_, hosts, options, setup, members, released, rules) => {
    const placed = place(hosts, options, setup);
    expect(placed.members).toEqual(members);
    expect(placed.released).toEqual(released);
    expect(placed.rules).toEqual(rules);
  });

  it("says why each host was not chosen, in the no-fit histogram's words", () => {
    const { placed } = place([cp("a", "r1"), cp("b", "r1"), { name: "c" }, cp("d", "r2")], controlPlane(3), {
      held: { d: "other" },
    });
    expect(placed.issues.map((found) => found.message)).toEqual([
      "role ControlPlane needs 3 hosts (active 3 + standby 0), found 1: 1/4 hosts fit: 1 claimed by other clusters, 1 not matching the labelSelector, 1 same vino.airshipit.org/rack as a chosen host",
    ]);
    expect(placed.plan.decisions[0]?.rejected()).toEqual([
      {
        host: "metal3/b",
        rejection: {
          filter: TOPOLOGY.name,
          reason: "same-domain",
          requested: RACK_LABEL,
          available: "r1",
        },
      },
      { host: "metal3/c", rejection: { filter: SELECTOR.name, reason: "mismatch" } },
      { host: "metal3/d", rejection: { filter: UNCLAIMED.name, reason: "claimed" } },
    ]);
  });

  it("records members and released hosts in the lock", () => {
    const { placed } = place([cp("a", "r1"), cp("b", "r2")], controlPlane(1), {
      locked: { a: "ControlPlane", b: "ControlPlane" },
    });
    const b = placed.plan.released[0];
    if (b === undefined) throw new Error("b is released");
    expect(placed.lock).toEqual([
      { host: "metal3/a", cluster: CLUSTER, kind: "sip", role: "ControlPlane" },
      {
        host: "metal3/b",
        cluster: CLUSTER,
        kind: "sip",
        role: "ControlPlane",
        released: true,
        // The release lasts until a snapshot shows b changed (decision 0034).
        snapshot: hostSnapshot(b),
      },
    ]);
  });
});

describe("retireSipCluster", () => {
  it("releases every host the lock gave a cluster that left the site, sorted", () => {
    const inventory = makeInventory([{ name: "a" }, { name: "b" }]);
    const [a, b] = inventory.hosts;
    if (!a || !b) throw new Error("two hosts expected");
    const retired = retireSipCluster(clusterKey("ns", "gone"), [
      { host: b, role: "Worker" },
      { host: a, role: "ControlPlane" },
    ]);
    expect(retired.plan).toEqual({ key: "ns/gone", namespace: "ns", name: "gone", released: [a, b] });
    expect(retired.lock.map((entry) => `${entry.host} ${entry.role} ${entry.released}`)).toEqual([
      "metal3/a ControlPlane true",
      "metal3/b Worker true",
    ]);
  });
});
