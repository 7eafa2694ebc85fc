import { clusterKey } from "../synth/cluster-key.ts";
import { readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { expandPaths } from "../gitops/files.ts";
import { readInventory } from "../gitops/inventory-reader.ts";
import { parseDocuments } from "../synth/codec/read-documents.ts";
import type { SourceDocument } from "../synth/documents.ts";
import { evaluateSite } from "../synth/evaluate.ts";
import { explainCluster } from "../synth/explain.ts";
import { compareText } from "../synth/issue.ts";
import { Inventory } from "../synth/inventory/inventory.ts";
import { field } from "../synth/inventory/raw.ts";
import { hostSnapshot } from "../synth/plan/lock.ts";
import { releaseHosts } from "../synth/plan/release.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import type { Lock, LockEntry } from "../synth/model/lock.ts";
import type { SitePlan } from "../synth/plan/model.ts";
import { checked, macFor, makeInventory, makeNic } from "./builders/inventory.ts";
import { parseDnsSubdomain } from "../synth/checked.ts";
import { REPO } from "./harness.ts";
import { cpuFlags } from "../synth/site/hardware.ts";

const site = path.join(REPO, "examples", "site");
let documents: SourceDocument[];
let inventory: Inventory;

beforeAll(async () => {
  const { files } = await expandPaths([path.join(site, "specs")]);
  documents = files.flatMap(
    (file) => parseDocuments(path.relative(REPO, file), readFileSync(file, "utf8")).documents,
  );
  inventory = (await readInventory([path.join(site, "inventory")], { relativeTo: REPO })).inventory;
});

/** Who got which host: the part of a plan that must never depend on input order. */
function assignments(plan: SitePlan): string[] {
  return plan.clusters.flatMap((cluster) =>
    cluster.kind === "bpa"
      ? [...cluster.masters, ...cluster.workers].map(
          (node) => `${cluster.key} ${node.request.role} ${node.request.label} ${node.host.id} ${node.ip}`,
        )
      : cluster.members.map((member) => `${cluster.key} ${member.role} ${member.standby} ${member.host.id}`),
  );
}

describe("planning the example site", () => {
  it("gives every node of a cluster its own host (unless it is the same node in both roles)", () => {
    const { plan, issues } = evaluateSite(documents, inventory, EMPTY_LOCK);
    expect(issues).toEqual([]);
    const owners = new Map<string, string>();
    for (const cluster of plan.clusters) {
      const hosts =
        cluster.kind === "bpa"
          ? [...cluster.masters, ...cluster.workers].map((node) => `${node.request.label}|${node.host.id}`)
          : cluster.members.map((member) => `${member.role}|${member.host.id}`);
      const byHost = new Map<string, string>();
      for (const entry of hosts) {
        const [label, host] = entry.split("|") as [string, string];
        expect(byHost.get(host) ?? label, `${host} serves two nodes of ${cluster.key}`).toBe(label);
        byHost.set(host, label);
        expect(owners.get(host) ?? cluster.key, `${host} is in two clusters`).toBe(cluster.key);
        owners.set(host, cluster.key);
      }
    }
  });

  it("explain accounts for every host in every decision", () => {
    const { plan } = evaluateSite(documents, inventory, EMPTY_LOCK);
    const decisions = plan.clusters.flatMap((cluster) =>
      explainCluster(plan, cluster.key, inventory.size).flatMap((explanation) => explanation.decisions),
    );
    // MAC, null-entry, resource and SIP decisions alike: chosen plus rejected is the whole inventory.
    expect(decisions.some((decision) => decision.chosen[0]?.reason.startsWith("mac-address"))).toBe(true);
    expect(decisions.some((decision) => decision.chosen[0]?.reason.startsWith("best fit"))).toBe(true);
    for (const decision of decisions) {
      const hosts = [...decision.chosen, ...decision.rejected].map((entry) => entry.host).sort();
      expect(hosts, decision.subject).toEqual(inventory.hosts.map((host) => host.id));
    }
  });

  it("is independent of document and inventory order (property)", () => {
    const reference = assignments(evaluateSite(documents, inventory, EMPTY_LOCK).plan);
    fc.assert(
      fc.property(
        fc.shuffledSubarray(documents, { minLength: documents.length }),
        fc.shuffledSubarray([...inventory.hosts], { minLength: inventory.size }),
        (shuffledDocuments, shuffledHosts) => {
          const plan = evaluateSite(shuffledDocuments, new Inventory(shuffledHosts), EMPTY_LOCK).plan;
          expect(assignments(plan)).toEqual(reference);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("keeps allocations from the lock when a new snapshot would choose differently", () => {
    const first = evaluateSite(documents, inventory, EMPTY_LOCK).plan;
    const westMaster = first.clusters.find((cluster) => cluster.key === "edge-a/cluster-west");
    expect(westMaster?.kind).toBe("bpa");
    if (westMaster?.kind !== "bpa") return;
    const chosen = westMaster.masters[0]!.host;
    // A smaller host appears in the new snapshot: without the lock it would win the best fit.
    const smaller = {
      ...chosen,
      id: "metal3/a-new-node",
      name: checked(parseDnsSubdomain, "a-new-node"),
      macs: ["02:00:00:00:00:01"],
      nics: [makeNic({ name: "eno1", mac: "02:00:00:00:00:01", ipv4: "10.0.0.250" })],
      bootMac: "02:00:00:00:00:01",
      labels: {},
    };
    const grown = new Inventory([...inventory.hosts, smaller]);
    expect(assignments(evaluateSite(documents, grown, EMPTY_LOCK).plan)).not.toEqual(assignments(first));
    expect(assignments(evaluateSite(documents, grown, first.lock).plan)).toEqual(assignments(first));
  });
});

describe("releasing SIP hosts", () => {
  /** The site with the SIPCluster's Worker standby count dropped from 1 to 0. */
  const shrink = (docs: readonly SourceDocument[]) => {
    const sipFile = docs.find((document) => field(document.value, "kind") === "SIPCluster")?.file;
    if (sipFile === undefined) throw new Error("the example site has no SIPCluster");
    const text = readFileSync(path.join(REPO, sipFile), "utf8").replace(
      "standby: 1 # slew for upgrades",
      "standby: 0 # shrunk",
    );
    return [
      ...docs.filter((document) => document.file !== sipFile),
      ...parseDocuments(sipFile, text).documents,
    ];
  };

  it("releases a dropped host until a snapshot shows it done, and keeps it from other clusters until then", () => {
    const sipPlan = (plan: SitePlan) => plan.clusters.find((cluster) => cluster.kind === "sip");
    const first = evaluateSite(documents, inventory, EMPTY_LOCK).plan;
    const before = sipPlan(first);
    expect(before?.kind === "sip" && before.released).toEqual([]);

    const shrunk = shrink(documents);
    const second = evaluateSite(shrunk, inventory, first.lock).plan;
    const after = sipPlan(second);
    if (after?.kind !== "sip" || before?.kind !== "sip") throw new Error("no SIP plan");
    const standbyWorker = before.members.find((member) => member.role === "Worker" && member.standby);
    if (standbyWorker === undefined) throw new Error("no standby worker");
    expect(after.released.map((host) => host.id)).toEqual([standbyWorker.host.id]);
    const released = (plan: SitePlan) =>
      plan.lock.entries.filter((entry) => entry.host === standbyWorker.host.id);
    expect(released(second)).toEqual([
      {
        host: standbyWorker.host.id,
        cluster: after.key,
        kind: "sip",
        role: "Worker",
        released: true,
        snapshot: hostSnapshot(standbyWorker.host),
      },
    ]);

    // The same inputs again (no snapshot since): the release is rendered again, unchanged.
    const again = evaluateSite(shrunk, inventory, second.lock).plan;
    expect(again.lock).toEqual(second.lock);
    const againSip = sipPlan(again);
    expect(againSip?.kind === "sip" && againSip.released).toEqual(after.released);

    // A snapshot still showing the labels (the patch was never applied): the release is repeated.
    const stillLabelled = new Inventory(
      inventory.hosts.map((host) =>
        host.id === standbyWorker.host.id
          ? { ...host, sipOwner: { namespace: after.namespace, name: after.name, nodeType: "Worker" } }
          : host,
      ),
    );
    const repeated = evaluateSite(shrunk, stillLabelled, second.lock).plan;
    const repeatedSip = sipPlan(repeated);
    expect(repeatedSip?.kind === "sip" && repeatedSip.released.map((host) => host.id)).toEqual([
      standbyWorker.host.id,
    ]);

    // The next snapshot shows the labels gone: the release is over, and the lock forgets the host.
    const third = evaluateSite(shrunk, inventory, repeated.lock).plan;
    const thirdSip = sipPlan(third);
    expect(thirdSip?.kind === "sip" && thirdSip.released).toEqual([]);
    expect(released(third)).toEqual([]);
  });
});

describe("retiring a SIPCluster", () => {
  it("releases its hosts for one generation after it leaves the site", () => {
    const withSip = evaluateSite(documents, inventory, EMPTY_LOCK).plan;
    const sip = withSip.clusters.find((cluster) => cluster.kind === "sip");
    if (sip?.kind !== "sip") throw new Error("the example site has a SIPCluster");
    const withoutSip = documents.filter((document) => field(document.value, "kind") !== "SIPCluster");

    const next = evaluateSite(withoutSip, inventory, withSip.lock).plan;
    expect(next.retired).toEqual([
      {
        key: sip.key,
        namespace: sip.namespace,
        name: sip.name,
        released: sip.members.map((member) => member.host).sort((a, b) => compareText(a.id, b.id)),
      },
    ]);
    expect(next.lock.entries.filter((entry) => entry.kind === "sip").map((entry) => entry.released)).toEqual(
      sip.members.map(() => true),
    );
    // The same snapshot again: the release is rendered again, unchanged.
    const again = evaluateSite(withoutSip, inventory, next.lock).plan;
    expect([again.lock, again.retired]).toEqual([next.lock, next.retired]);
    // A snapshot showing the labels, then one showing them gone: nothing is left to release.
    const labelled = new Inventory(
      inventory.hosts.map((host) => {
        const member = sip.members.find((candidate) => candidate.host.id === host.id);
        return member
          ? { ...host, sipOwner: { namespace: sip.namespace, name: sip.name, nodeType: member.role } }
          : host;
      }),
    );
    const pending = evaluateSite(withoutSip, labelled, next.lock).plan;
    expect(pending.retired.map((cluster) => cluster.key)).toEqual([sip.key]);
    const after = evaluateSite(withoutSip, inventory, pending.lock).plan;
    expect(after.retired).toEqual([]);
    expect(after.lock.entries.filter((entry) => entry.kind === "sip")).toEqual([]);
  });
});

describe("planning order across kinds", () => {
  it("plans SIPClusters before BPA resource-only entries, whatever their keys", () => {
    const inventory = makeInventory([
      // The smallest host, and the only one the SIPCluster's selector matches.
      { name: "small-cp", cpus: 16, labels: { "vino.airshipit.org/flavor": "control-plane" } },
      { name: "big", cpus: 64 },
    ]);
    const yaml = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: a, namespace: aaa, labels: {cluster: a}}
spec:
  masters:
    - master-1: {cpu: 8}
---
apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: z, namespace: zzz}
spec:
  nodes:
    ControlPlane:
      labelSelector: {matchLabels: {vino.airshipit.org/flavor: control-plane}}
      count: {active: 1, standby: 0}
`;
    const evaluation = evaluateSite(parseDocuments("order.yaml", yaml).documents, inventory, EMPTY_LOCK);
    expect(evaluation.issues).toEqual([]);
    expect(assignments(evaluation.plan)).toEqual([
      `aaa/a master master-1 metal3/big ${inventory.byId("metal3/big")?.nics[0]?.ipv4}`,
      "zzz/z ControlPlane false metal3/small-cp",
    ]);
  });
});

describe("docs/contract.md §3.1: a resource-only entry takes the best fit", () => {
  it("is the free host with the fewest CPUs, then the least memory, then the first name", () => {
    const GiB = 2 ** 30;
    const inventory = makeInventory([
      { name: "a-more-cpus", cpus: 32, memoryBytes: 64 * GiB },
      { name: "b-more-memory", cpus: 16, memoryBytes: 128 * GiB },
      { name: "c-tight", cpus: 16, memoryBytes: 64 * GiB },
      { name: "d-tight", cpus: 16, memoryBytes: 64 * GiB },
      { name: "e-too-few-cpus", cpus: 8, memoryBytes: 256 * GiB },
    ]);
    const yaml = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: c, namespace: ns, labels: {cluster: c}}
spec:
  masters:
    - master-1: {cpu: 16, memory: 32Gi}
  workers:
    - worker-1: {cpu: 16, memory: 32Gi}
    - worker-2: {cpu: 16, memory: 64Gi}
`;
    const evaluation = evaluateSite(parseDocuments("fit.yaml", yaml).documents, inventory, EMPTY_LOCK);
    expect(evaluation.issues).toEqual([]);
    expect(assignments(evaluation.plan).map((line) => line.split(" ").slice(0, 4).join(" "))).toEqual([
      "ns/c master master-1 metal3/c-tight",
      "ns/c worker worker-1 metal3/d-tight",
      // Fewer CPUs wins over less memory: CPUs are compared first.
      "ns/c worker worker-2 metal3/b-more-memory",
    ]);
  });
});

describe("hardware-aware placement (decision 0065): a resource-only entry asks for a CPU flag", () => {
  const flags = (...written: string[]) => cpuFlags(written);
  const inventory = makeInventory([
    { name: "a-small-without-avx512", cpus: 16, cpuFlags: flags("aes", "sse4_2") },
    { name: "b-avx512", cpus: 32, cpuFlags: flags("aes", "avx512f", "sse4_2") },
    { name: "c-avx512-larger", cpus: 64, cpuFlags: flags("aes", "avx512f") },
    { name: "d-not-inspected", cpus: 8 },
  ]);
  const provisioning = (worker: string) => `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: c, namespace: ns, labels: {cluster: c}}
spec:
  masters:
    - master-1: {cpu: 8}
  workers:
    - worker-1: ${worker}
`;
  const evaluate = (worker: string) =>
    evaluateSite(parseDocuments("hw.yaml", provisioning(worker)).documents, inventory, EMPTY_LOCK);

  it("takes the best fit among the hosts with the flag, passing over a smaller host without it", () => {
    const evaluation = evaluate("{cpu: 16, hardware: {cpuFlags: [AVX512F]}}");
    expect(evaluation.issues).toEqual([]);
    expect(assignments(evaluation.plan).map((line) => line.split(" ").slice(0, 4).join(" "))).toEqual([
      "ns/c master master-1 metal3/d-not-inspected",
      "ns/c worker worker-1 metal3/b-avx512",
    ]);
    const [explanation] = explainCluster(evaluation.plan, "ns/c", inventory.size);
    const worker = explanation?.decisions.find((decision) => decision.subject.includes("worker-1"));
    expect(worker?.rejected).toEqual([
      { host: "metal3/a-small-without-avx512", reason: "without CPU flags avx512f" },
      { host: "metal3/c-avx512-larger", reason: "fits, but a smaller host was chosen" },
      { host: "metal3/d-not-inspected", reason: "serves another node of this cluster" },
    ]);
  });

  it("says in the no-fit histogram how many hosts lack the flag", () => {
    const evaluation = evaluate("{hardware: {cpuFlags: [amx_tile]}}");
    expect(evaluation.issues.map((found) => `${found.rule} ${found.path}: ${found.message}`)).toEqual([
      "no-fit spec.workers[0].worker-1: no host for worker worker-1: 0/4 hosts fit: 3 without CPU flags amx_tile, 1 serves another node of this cluster",
    ]);
  });
});

describe("hardware-aware placement (decision 0065): a SIP node set asks for hardware", () => {
  const worker = { "vino.airshipit.org/flavor": "worker" };
  const inventory = makeInventory([
    { name: "w-a-x86", labels: worker, cpuArch: "x86_64", cpuFlags: cpuFlags(["avx512f"]) },
    { name: "w-b-arm", labels: worker, cpuArch: "aarch64" },
    { name: "w-c-arm", labels: worker, cpuArch: "aarch64" },
    { name: "w-d-x86-no-avx512", labels: worker, cpuArch: "x86_64", cpuFlags: cpuFlags(["aes"]) },
  ]);
  const sipCluster = (hardware: string, active: number) => `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: t, namespace: ns}
spec:
  nodes:
    Worker:
      labelSelector: {matchLabels: {vino.airshipit.org/flavor: worker}}
      count: {active: ${active}}
      hardware: ${hardware}
`;

  it("fills the role from matching hosts that have it, and says in explain why the others were passed over", () => {
    const evaluation = evaluateSite(
      parseDocuments("sip.yaml", sipCluster("{arch: x86_64, cpuFlags: [avx512f]}", 1)).documents,
      inventory,
      EMPTY_LOCK,
    );
    expect(evaluation.issues).toEqual([]);
    const [explanation] = explainCluster(evaluation.plan, "ns/t", inventory.size);
    const [role] = explanation?.decisions ?? [];
    expect(role?.chosen.map((entry) => entry.host)).toEqual(["metal3/w-a-x86"]);
    expect(role?.rejected).toEqual([
      { host: "metal3/w-b-arm", reason: "not x86_64" },
      { host: "metal3/w-c-arm", reason: "not x86_64" },
      { host: "metal3/w-d-x86-no-avx512", reason: "without CPU flags avx512f" },
    ]);
  });

  it("reports a role short of such hosts with the histogram", () => {
    const evaluation = evaluateSite(
      parseDocuments("sip.yaml", sipCluster("{arch: aarch64}", 3)).documents,
      inventory,
      EMPTY_LOCK,
    );
    expect(evaluation.issues.map((found) => `${found.rule} ${found.path}: ${found.message}`)).toEqual([
      "no-fit spec.nodes.Worker: role Worker needs 3 hosts (active 3 + standby 0), found 2: 2/4 hosts fit: 2 not aarch64",
    ]);
  });
});

describe("docs/contract.md §3.2: SIP roles", () => {
  const RACK = "vino.airshipit.org/rack";
  const controlPlane = { "vino.airshipit.org/flavor": "control-plane" };
  const sipCluster = (
    count: string,
    topologyKey = `\n      topologyKey: ${RACK}`,
  ) => `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: t, namespace: ns}
spec:
  nodes:
    ControlPlane:
      labelSelector: {matchLabels: {vino.airshipit.org/flavor: control-plane}}${topologyKey}
      count: ${count}
`;
  const locked = (...entries: [host: string, standby: boolean][]): Lock => ({
    entries: entries.map(([host, standby]): LockEntry => ({
      host: `metal3/${host}`,
      cluster: clusterKey("ns", "t"),
      kind: "sip",
      role: "ControlPlane",
      ...(standby ? { standby: true } : {}),
    })),
  });
  const plan = (yaml: string, inventory: Inventory, lock: Lock) => {
    const evaluation = evaluateSite(parseDocuments("sip.yaml", yaml).documents, inventory, lock);
    const [cluster] = evaluation.plan.clusters;
    if (cluster?.kind !== "sip") throw new Error("expected one SIP plan");
    return {
      issues: evaluation.issues,
      members: cluster.members.map((member) => `${member.host.name}${member.standby ? " standby" : ""}`),
      released: cluster.released.map((host) => host.name),
    };
  };

  it("counts kept hosts in the one-per-topology-value rule (upstream forgot them)", () => {
    const inventory = makeInventory([
      { name: "cp-a", rack: "r1", labels: controlPlane },
      { name: "cp-b", rack: "r1", labels: controlPlane },
      { name: "cp-c", rack: "r2", labels: controlPlane },
    ]);
    // cp-a sorts first and is free, but cp-b (kept from the lock) already holds rack r1.
    expect(plan(sipCluster("{active: 2}"), inventory, locked(["cp-b", false]))).toEqual({
      issues: [],
      members: ["cp-b", "cp-c"],
      released: [],
    });
  });

  it("leaves hosts without the topology label unconstrained", () => {
    const inventory = makeInventory([
      { name: "cp-a", labels: controlPlane },
      { name: "cp-b", labels: controlPlane },
      { name: "cp-c", rack: "r1", labels: controlPlane },
    ]);
    expect(plan(sipCluster("{active: 3}"), inventory, EMPTY_LOCK).members).toEqual(["cp-a", "cp-b", "cp-c"]);
  });

  it("shrinks by releasing standby hosts first, then the highest names", () => {
    const inventory = makeInventory(["cp-a", "cp-b", "cp-c"].map((name) => ({ name, labels: controlPlane })));
    const lock = locked(["cp-a", true], ["cp-b", false], ["cp-c", false]);
    expect(plan(sipCluster("{active: 1, standby: 0}", ""), inventory, lock)).toEqual({
      issues: [],
      members: ["cp-b"],
      released: ["cp-a", "cp-c"],
    });
  });
});

describe("a partial SIP label set is a claim (decision 0032)", () => {
  const SIP = "sip.airshipit.org";
  const selected = { "vino.airshipit.org/flavor": "control-plane" };
  const sipCluster = (name: string) => `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: ${name}, namespace: ns}
spec:
  nodes:
    ControlPlane:
      labelSelector: {matchLabels: {vino.airshipit.org/flavor: control-plane}}
      count: {active: 2}
`;
  const members = (yaml: string, inventory: Inventory) => {
    const { plan, issues } = evaluateSite(parseDocuments("sip.yaml", yaml).documents, inventory, EMPTY_LOCK);
    const [cluster] = plan.clusters;
    if (cluster?.kind !== "sip") throw new Error("expected one SIP plan");
    return {
      rules: issues.map((found) => `${found.rule} ${found.path}`),
      members: cluster.members.map((m) => m.host.name),
    };
  };

  // The reported case: cluster-name and cluster-namespace of another SIPCluster, no node-type. SIP
  // counts a host with cluster-name as taken; metalsynth handed it to the next SIPCluster.
  it.each([
    [
      "cluster-name and cluster-namespace",
      { [`${SIP}/cluster-name`]: "other", [`${SIP}/cluster-namespace`]: "ns" },
    ],
    ["cluster-name only", { [`${SIP}/cluster-name`]: "other" }],
    ["node-type only", { [`${SIP}/node-type`]: "ControlPlane" }],
  ])("never gives a host labelled with %s to another SIPCluster", (_name, labels) => {
    const inventory = makeInventory([
      { name: "cp-a", labels: { ...selected, ...labels } },
      { name: "cp-b", labels: selected },
      { name: "cp-c", labels: selected },
    ]);
    expect(members(sipCluster("t"), inventory)).toEqual({ rules: [], members: ["cp-b", "cp-c"] });
  });

  it("reports no-fit, counting the host as claimed, when it is the only one left", () => {
    const inventory = makeInventory([
      { name: "cp-a", labels: { ...selected, [`${SIP}/cluster-name`]: "other" } },
      { name: "cp-b", labels: selected },
    ]);
    const { issues } = evaluateSite(
      parseDocuments("sip.yaml", sipCluster("t")).documents,
      inventory,
      EMPTY_LOCK,
    );
    expect(issues.map((found) => `${found.rule} ${found.path}`)).toEqual(["no-fit spec.nodes.ControlPlane"]);
    expect(issues[0]?.message).toMatch(/1\/2 hosts fit: 1 claimed by other clusters/);
  });

  it("lets the SIPCluster the partial set names take the host, which its label patch completes", () => {
    const inventory = makeInventory([
      {
        name: "cp-a",
        labels: { ...selected, [`${SIP}/cluster-name`]: "t", [`${SIP}/cluster-namespace`]: "ns" },
      },
      { name: "cp-b", labels: selected },
      { name: "cp-c", labels: selected },
    ]);
    expect(members(sipCluster("t"), inventory)).toEqual({ rules: [], members: ["cp-a", "cp-b"] });
  });

  it("reports host-claimed at the MAC entry of a BPA cluster that names such a host", () => {
    const inventory = makeInventory([{ name: "cp-a", labels: { [`${SIP}/cluster-name`]: "other" } }]);
    const yaml = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: alpha, namespace: edge-a, labels: {cluster: alpha}}
spec:
  masters:
    - master-1: {mac-address: "${macFor("metal3/cp-a", 0)}"}
`;
    const { issues } = evaluateSite(parseDocuments("specs/test.yaml", yaml).documents, inventory, EMPTY_LOCK);
    expect(issues.map((found) => `${found.rule} ${found.path}`)).toEqual([
      "host-claimed spec.masters[0].master-1.mac-address",
    ]);
    expect(issues[0]?.message).toMatch(
      /partially labelled for a SIPCluster \(sip\.airshipit\.org\/cluster-name=other; no sip\.airshipit\.org\/cluster-namespace, sip\.airshipit\.org\/node-type\)/,
    );
  });
});

describe("docs/contract.md §3.4: a lost host never reshuffles its siblings", () => {
  /** Who serves what, keyed by node (BPA) or host (SIP), so a moved node shows as one changed entry. */
  const placements = (plan: SitePlan): Map<string, string> =>
    new Map(
      plan.clusters.flatMap((cluster) =>
        cluster.kind === "bpa"
          ? [...cluster.masters, ...cluster.workers].map((node): [string, string] => [
              `${cluster.key} ${node.request.role} ${node.request.label}`,
              node.host.id,
            ])
          : cluster.members.map((member): [string, string] => [
              `${cluster.key} ${member.role} ${member.host.id}`,
              member.host.id,
            ]),
      ),
    );
  /** The nodes whose host changed between two plans. */
  const moved = (before: SitePlan, after: SitePlan): string[] => {
    const next = placements(after);
    return [...placements(before)].filter(([node, host]) => next.get(node) !== host).map(([node]) => node);
  };
  const without = (hostId: string) => new Inventory(inventory.hosts.filter((host) => host.id !== hostId));

  it("keeps cluster-west's master-1 on r01-node-05 when the host leaves the inventory, with host-vanished", () => {
    const first = evaluateSite(documents, inventory, EMPTY_LOCK).plan;
    const second = evaluateSite(documents, without("metal3/r01-node-05"), first.lock);
    expect(second.issues.map((found) => `${found.rule} ${found.object} ${found.path}`)).toEqual([
      "host-vanished Provisioning/edge-a/cluster-west spec.masters[0].master-1",
    ]);
    // No other host for it: the plan leaves the node where the lock has it, and synth writes nothing.
    expect(placements(second.plan).has("edge-a/cluster-west master master-1")).toBe(false);
    expect(moved(first, second.plan)).toEqual(["edge-a/cluster-west master master-1"]);
  });

  it("moves only cluster-west's master-1 once r01-node-05 is released", () => {
    const first = evaluateSite(documents, inventory, EMPTY_LOCK).plan;
    const gone = without("metal3/r01-node-05");
    const { lock, released } = releaseHosts(first.lock, gone, ["metal3/r01-node-05"]);
    expect(released.map(({ entry }) => entry.host)).toEqual(["metal3/r01-node-05"]);
    const third = evaluateSite(documents, gone, lock);
    expect(third.issues).toEqual([]);
    expect(moved(first, third.plan)).toEqual(["edge-a/cluster-west master master-1"]);
  });

  it("moves only master-1 when r01-node-05 shrinks below what master-1 asks for", () => {
    const first = evaluateSite(documents, inventory, EMPTY_LOCK).plan;
    const shrunk = new Inventory(
      inventory.hosts.map((host) =>
        host.id === "metal3/r01-node-05" ? { ...host, memoryBytes: 32 * 2 ** 30 } : host,
      ),
    );
    expect(moved(first, evaluateSite(documents, shrunk, first.lock).plan)).toEqual([
      "edge-a/cluster-west master master-1",
    ]);
  });

  it("never gives a resource-only entry the host a later MAC entry of its cluster names", () => {
    const hosts = makeInventory([
      { name: "a-small", cpus: 8 },
      { name: "b-big", cpus: 32 },
    ]);
    const mac = macFor("metal3/a-small", 0);
    const yaml = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: c, namespace: ns, labels: {cluster: c}}
spec:
  masters:
    - master-1: {cpu: 4}
  workers:
    - worker-1: {mac-address: "${mac}"}
`;
    const evaluation = evaluateSite(parseDocuments("mac.yaml", yaml).documents, hosts, EMPTY_LOCK);
    expect(evaluation.issues).toEqual([]);
    expect(assignments(evaluation.plan).map((line) => line.split(" ").slice(0, 4).join(" "))).toEqual([
      "ns/c master master-1 metal3/b-big",
      "ns/c worker worker-1 metal3/a-small",
    ]);
  });

  it("moves only the nodes the host served when any one host is removed (property)", () => {
    const first = evaluateSite(documents, inventory, EMPTY_LOCK).plan;
    fc.assert(
      fc.property(fc.constantFrom(...inventory.hosts.map((host) => host.id)), (hostId) => {
        const second = evaluateSite(documents, without(hostId), first.lock).plan;
        const served = [...placements(first)].filter(([, host]) => host === hostId).map(([node]) => node);
        expect(moved(first, second)).toEqual(served);
      }),
      { numRuns: 48 },
    );
  });
});
