import { clusterKey } from "../cluster-key.ts";
import { describe, expect, it } from "vitest";
import {
  FLAVOR_LABEL,
  makeHost,
  makeInventory,
  macFor,
  type HostOptions,
} from "../../test/builders/inventory.ts";
import type { Issue } from "../issue.ts";
import { parseDocuments } from "../codec/read-documents.ts";
import { evaluateSite } from "../evaluate.ts";
import { EMPTY_LOCK } from "../rules/lock.ts";
import type { Lock } from "../model/lock.ts";
import { clusterPalette, escapeHtml, mapHtml } from "./map-html.ts";
import { siteMap, type MapInput, type SiteMap } from "./site-map.ts";
import { cpuFlags } from "../site/hardware.ts";

const GiB = 2 ** 30;

/** Six hosts in three racks: one of them not inspected, one labelled for a SIPCluster the site lacks. */
const HOSTS: readonly HostOptions[] = [
  { name: "a1", rack: "r1", cpus: 32, memoryBytes: 128 * GiB, sriov: true },
  { name: "a2", rack: "r1", labels: { [FLAVOR_LABEL]: "cp" } },
  { name: "b1", rack: "r2", labels: { [FLAVOR_LABEL]: "cp" } },
  { name: "b2", rack: "r2", cpus: 64, memoryBytes: 256 * GiB, qat: true },
  { name: "c1", rack: "r3", cpus: undefined, memoryBytes: undefined, provisioningState: "inspecting" },
  { name: "c2", rack: "r3", sipOwner: { namespace: "other", name: "ghost", nodeType: "Worker" } },
];

/**
 * east names a1 by MAC but asks for more CPUs than it has (cpu-insufficient on a1) and takes a
 * worker by resources; tenant has a ControlPlane of one active and one standby, one per rack; big
 * asks for a worker no host can be.
 */
const SPECS = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: east, namespace: edge, labels: {cluster: east}}
spec:
  masters:
    - master-1: {mac-address: "${macFor("metal3/a1", 0)}", cpu: 64}
  workers:
    - worker-1: {cpu: 16, memory: 64Gi}
---
apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: tenant, namespace: sip}
spec:
  nodes:
    ControlPlane:
      labelSelector: {matchLabels: {${FLAVOR_LABEL}: cp}}
      topologyKey: vino.airshipit.org/rack
      count: {active: 1, standby: 1}
---
apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: big, namespace: edge, labels: {cluster: big}}
spec:
  masters:
    - master-1: {cpu: 512}
`;

/** Each document of `specs` in a file of its own, so their order can change without their lines. */
function mapInput(
  options: { hosts?: readonly HostOptions[]; specs?: string; reversed?: boolean } = {},
): MapInput {
  const inventory = makeInventory(options.hosts ?? HOSTS);
  const files = (options.specs ?? SPECS).split("---\n");
  const documents = files.flatMap((text, index) => parseDocuments(`spec-${index}.yaml`, text).documents);
  if (options.reversed) documents.reverse();
  const { plan, issues } = evaluateSite(documents, inventory, EMPTY_LOCK);
  return { inventory, plan, issues };
}

/** The host tiles of a page (legend swatches have no search text). */
function tiles(page: string): number {
  return page.match(/<g class="t [^"]*" transform="[^"]*" data-s=/g)?.length ?? 0;
}

function tileOf(map: SiteMap, name: string) {
  const found = map.groups.flatMap((group) => group.hosts).find((mapHost) => mapHost.host.name === name);
  if (found === undefined) throw new Error(`no tile for ${name}`);
  return found;
}

describe("siteMap", () => {
  const map = siteMap(mapInput());

  it("groups the hosts by the topology key the site's SIPClusters use, one entry per host", () => {
    expect(map.groupBy).toEqual({ label: "vino.airshipit.org/rack" });
    expect(map.groups.map((group) => [group.name, group.hosts.map((mapHost) => mapHost.host.name)])).toEqual([
      ["r1", ["a1", "a2"]],
      ["r2", ["b1", "b2"]],
      ["r3", ["c1", "c2"]],
    ]);
  });

  it("groups by namespace without SIPClusters, by the label asked for, and puts unlabelled hosts last", () => {
    const bpaOnly = siteMap(mapInput({ specs: SPECS.split("---\n")[0] ?? "" }));
    expect(bpaOnly.groupBy).toEqual({ namespace: true });
    expect(bpaOnly.groups.map((group) => group.name)).toEqual(["metal3"]);
    const byFlavor = siteMap({ ...mapInput(), groupBy: FLAVOR_LABEL });
    expect(byFlavor.groups.map((group) => [group.name, group.hosts.length])).toEqual([
      ["cp", 2],
      [undefined, 4],
    ]);
  });

  it("shows who holds each host and as what: BPA roles, SIP standby, SIP labels of a cluster the site lacks", () => {
    const roles = (name: string) =>
      tileOf(map, name).holdings.map((holding) => [
        holding.cluster,
        holding.kind,
        holding.role,
        holding.standby,
      ]);
    expect(roles("a1")).toEqual([["edge/east", "bpa", "master", false]]);
    expect(roles("a2")).toEqual([["sip/tenant", "sip", "ControlPlane", false]]);
    expect(roles("b1")).toEqual([["sip/tenant", "sip", "ControlPlane", true]]);
    expect(roles("c2")).toEqual([["other/ghost", "label", "Worker", false]]);
    expect(map.clusters.map((cluster) => [cluster.key, cluster.kinds, cluster.colour])).toEqual([
      ["edge/big", ["Provisioning"], 0],
      ["edge/east", ["Provisioning"], 1],
      ["other/ghost", ["SIP labels only"], 2],
      ["sip/tenant", ["SIPCluster"], 3],
    ]);
  });

  it("shows a host with part of the SIP labels held, as planning holds it, never free", () => {
    const partial = siteMap(
      mapInput({
        hosts: [
          ...HOSTS,
          { name: "c3", rack: "r3", labels: { "sip.airshipit.org/cluster-name": "half" } },
          {
            name: "c4",
            rack: "r3",
            labels: {
              "sip.airshipit.org/cluster-name": "ghost",
              "sip.airshipit.org/cluster-namespace": "other",
            },
          },
        ],
      }),
    );
    const roles = (name: string) =>
      tileOf(partial, name).holdings.map((holding) => [holding.cluster, holding.kind, holding.role]);
    expect(roles("c3")).toEqual([["(no namespace)/half", "label", "no node-type"]]);
    expect(roles("c4")).toEqual([["other/ghost", "label", "no node-type"]]);
    expect(partial.capacity.freeHosts).toBe(map.capacity.freeHosts);
  });

  it("marks the host a finding is about with that finding, and nothing else", () => {
    expect(tileOf(map, "a1").findings.map((found) => found.rule)).toEqual(["cpu-insufficient"]);
    const marked = map.groups
      .flatMap((group) => group.hosts)
      .filter((mapHost) => mapHost.findings.length > 0);
    expect(marked.map((mapHost) => mapHost.host.name)).toEqual(["a1"]);
  });

  it("marks a host a Provisioning names twice, under two labels, with that finding", () => {
    const twice = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: twice, namespace: edge, labels: {cluster: twice}}
spec:
  masters:
    - master-1: {mac-address: "${macFor("metal3/b2", 0)}"}
    - master-2: {mac-address: "${macFor("metal3/b2", 0)}"}
  workers:
    - master-1:
`;
    const named = siteMap(mapInput({ specs: twice }));
    expect(tileOf(named, "b2").findings.map((found) => [found.rule, found.path])).toEqual([
      ["mac-duplicate", "spec.masters[1].master-2.mac-address"],
    ]);
    const marked = named.groups.flatMap((group) => group.hosts).filter((mapHost) => mapHost.findings.length);
    expect(marked.map((mapHost) => mapHost.host.name)).toEqual(["b2"]);
  });

  it("lists a cluster's unplaced node with its no-fit histogram", () => {
    const big = map.clusters.find((cluster) => cluster.key === "edge/big");
    expect(big?.unplaced).toEqual([
      {
        subject: "master master-1",
        path: "spec.masters[0].master-1",
        wanted: 1,
        found: 0,
        histogram: expect.stringMatching(/^0\/6 hosts fit: .*fewer than 512 CPUs/),
      },
    ]);
    expect(big?.findings.map((found) => found.rule)).toEqual(["no-fit"]);
  });

  it("shows a node whose locked host vanished: unplaced in its cluster, and the host among the site's findings", () => {
    const inventory = makeInventory(HOSTS);
    const documents = parseDocuments("spec.yaml", SPECS.split("---\n")[0] ?? "").documents;
    const lock: Lock = {
      entries: [
        {
          host: "metal3/gone",
          cluster: clusterKey("edge", "east"),
          kind: "bpa",
          role: "worker",
          node: "worker-1",
        },
      ],
    };
    const { plan, issues } = evaluateSite(documents, inventory, lock);
    const vanished = siteMap({ inventory, plan, issues });
    const east = vanished.clusters.find((cluster) => cluster.key === "edge/east");
    expect(east?.unplaced.map((node) => node.subject)).toEqual(["worker worker-1"]);
    expect(east?.findings.map((found) => `${found.rule} ${found.host}`)).toContain(
      "host-vanished metal3/gone",
    );
    expect(vanished.siteFindings.map((found) => `${found.rule} ${found.host}`)).toEqual([
      "host-vanished metal3/gone",
    ]);
  });

  it("sums up the free hosts by shape and the room left for each requested shape", () => {
    const east = map.clusters.find((cluster) => cluster.key === "edge/east");
    const taken = new Set(map.clusters.flatMap((cluster) => cluster.hosts.map((entry) => entry.host)));
    expect(east?.hosts.map((entry) => entry.host)).toHaveLength(2);
    expect(map.capacity.freeHosts).toBe(6 - taken.size);
    expect(map.capacity.free.at(-1)).toMatchObject({ hosts: 1 }); // c1, not inspected, last
    expect(map.capacity.free.at(-1)?.cpus).toBeUndefined();
    expect(map.capacity.requested.map((shape) => [shape.kind, shape.shape, shape.requests])).toEqual([
      ["bpa", "≥ 16 CPUs × ≥ 64Gi", 1],
      ["bpa", "≥ 512 CPUs", 1],
      ["bpa", "≥ 64 CPUs", 1],
      ["sip", "vino.airshipit.org/flavor=cp, one per vino.airshipit.org/rack", 1],
    ]);
    const fit = Object.fromEntries(map.capacity.requested.map((shape) => [shape.shape, shape.fit]));
    expect(fit["≥ 512 CPUs"]).toBe(0);
    // Both cp hosts serve tenant: no free host matches its selector.
    expect(fit["vino.airshipit.org/flavor=cp, one per vino.airshipit.org/rack"]).toBe(0);
  });

  it("words the hardware a shape asks for and a host has in the filters' words (decision 0065)", () => {
    const hosts: HostOptions[] = [
      { name: "arm", labels: { [FLAVOR_LABEL]: "w" }, cpuArch: "aarch64", cpuFlags: cpuFlags(["aes"]) },
      { name: "x86", labels: { [FLAVOR_LABEL]: "w" }, cpuArch: "x86_64" },
    ];
    const specs = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: edge, namespace: edge, labels: {cluster: edge}}
spec:
  masters:
    - master-1: {cpu: 16, hardware: {arch: aarch64, disk: {minSizeGibibytes: 400, rotational: false}}}
---
apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata: {name: tenant, namespace: sip}
spec:
  nodes:
    Worker:
      labelSelector: {matchLabels: {${FLAVOR_LABEL}: w}}
      count: {active: 1}
      hardware: {arch: aarch64, nicSpeedGbps: 25}
`;
    const hardware = siteMap(mapInput({ hosts, specs }));
    expect(hardware.capacity.requested.map((shape) => [shape.kind, shape.shape, shape.fit])).toEqual([
      ["bpa", "≥ 16 CPUs × aarch64 × a solid-state disk of ≥ 400Gi", 0],
      ["sip", `${FLAVOR_LABEL}=w, aarch64, a NIC of ≥ 25 Gbps`, 0],
    ]);
    const page = mapHtml(hardware);
    expect(page).toContain("16 CPUs, 64Gi memory, aarch64, 1 CPU flag");
    expect(page).not.toContain("1 CPU flags");
  });

  it("marks hosts whose clusters differ from a previous lock, and only with one", () => {
    expect(map.changes).toBeUndefined();
    expect(tileOf(map, "a1").change).toBeUndefined();
    const previous: Lock = {
      entries: [
        {
          host: "metal3/a1",
          cluster: clusterKey("edge", "east"),
          kind: "bpa",
          role: "master",
          node: "master-1",
        },
        {
          host: "metal3/c1",
          cluster: clusterKey("edge", "gone"),
          kind: "bpa",
          role: "worker",
          node: "worker-1",
        },
      ],
    };
    const compared = siteMap({ ...mapInput(), previous: { lock: previous, source: "HEAD:lock" } });
    const changed = compared.changes?.hosts.map((change) => [change.host, change.before, change.after]);
    expect(changed).toContainEqual(["metal3/c1", ["edge/gone"], []]);
    expect(changed).toContainEqual(["metal3/a2", [], ["sip/tenant"]]);
    expect(changed?.map(([host]) => host)).not.toContain("metal3/a1");
    expect(tileOf(compared, "c1").change).toEqual({ host: "metal3/c1", before: ["edge/gone"], after: [] });
  });
});

describe("mapHtml", () => {
  const html = mapHtml(siteMap(mapInput()));

  it("gives each cluster a colour of its own, also past the first eight", () => {
    const specs = Array.from(
      { length: 12 },
      (_, index) => `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: c${index}, namespace: edge, labels: {cluster: c${index}}}
spec:
  masters:
    - master-1: {cpu: 1}
`,
    ).join("---\n");
    const many = siteMap(mapInput({ specs }));
    const page = mapHtml(many);
    const band = (index: number) =>
      new RegExp(`\\.k${index} \\.band\\{fill:(#[0-9a-f]{6})\\}`).exec(page)?.[1];
    const swatches = many.clusters.map((cluster) => {
      const index = new RegExp(`<span class="sw k(\\d+)"></span><b>${cluster.key}</b>`).exec(page)?.[1];
      return band(Number(index));
    });
    // The twelve, and other/ghost of HOSTS' SIP labels.
    expect(swatches).toHaveLength(13);
    expect(swatches.every((colour) => colour !== undefined)).toBe(true);
    expect(new Set(swatches).size).toBe(13);
    // The findings' red and the free hosts' grey stay theirs.
    const palette = clusterPalette(200);
    expect(new Set(palette).size).toBe(200);
    expect(palette).not.toContain("#c1121f");
    expect(palette.filter((colour) => colour[1] === colour[3] && colour[3] === colour[5])).toEqual([]);
  });

  it("is one self-contained page: no network, one inline script, one tile per host", () => {
    expect(html).toMatch(/^<!doctype html>\n/);
    expect(html).not.toMatch(/\b(src|href)=|https?:\/\/|@import|url\((?!#)/);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(tiles(html)).toBe(HOSTS.length);
  });

  it("draws roles, standby, findings and free hosts with classes and words, and a legend for each", () => {
    const tileClasses = (name: string) =>
      new RegExp(`<g class="([^"]*)"[^>]*><title>metal3/${name}\\n`).exec(html)?.[1];
    expect(tileClasses("a1")).toBe("t k1 cp bad");
    expect(tileClasses("a2")).toBe("t k3 cp");
    expect(tileClasses("b1")).toBe("t k3 cp sb");
    expect(tileClasses("b2")).toBe("t k1 wk");
    expect(tileClasses("c2")).toBe("t k2 wk");
    expect(html).toContain(
      "error[cpu-insufficient] spec.masters[0].master-1.cpu: host metal3/a1 has 32 CPUs",
    );
    expect(html).toContain(">ControlPlane · standby</text>");
    expect(html).toContain(">not inspected</text>");
    for (const words of [
      "solid band",
      "striped band",
      "standby: hatched",
      "being released",
      "free: grey",
      "finding: red border",
    ])
      expect(html).toContain(words);
    expect(html).not.toContain("changes hands: blue outline");
  });

  it("is the same bytes for the same site, whatever the order of hosts and documents", () => {
    const shuffled = mapInput({ hosts: [...HOSTS].reverse(), reversed: true });
    expect(mapHtml(siteMap(shuffled))).toBe(html);
    expect(mapHtml(siteMap(mapInput()))).toBe(html);
  });

  it("never lets a host's name, labels or a finding become markup", () => {
    const evil = `<img src=x onerror="alert(1)">'&`;
    const hosts: HostOptions[] = [
      { name: "evil", labels: { "vino.airshipit.org/rack": `</title><script>alert(2)</script>` } },
      ...HOSTS,
    ];
    // Host names are checked at the door now; a set-aside host's finding still carries the name as written.
    const input = mapInput({ hosts });
    const finding: Issue = {
      rule: "name-invalid",
      severity: "warning",
      path: "metadata.name",
      message: evil,
      host: `metal3/${evil}`,
    };
    const page = mapHtml(
      siteMap({ ...input, issues: [...input.issues, finding], groupBy: "vino.airshipit.org/rack" }),
    );
    expect(page).not.toContain("<img");
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toContain("</title><script>");
    expect(page).toContain(escapeHtml(evil).slice(0, 20));
    expect(escapeHtml(`<a href="x">'&`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;");
  });

  it("writes each finding in a tile's tooltip on one line", () => {
    const input = mapInput();
    const found = { rule: "host-not-ready", severity: "warning", path: "spec", host: "metal3/a1" } as const;
    const issues = [...input.issues, { ...found, message: "state\nprovisioning\u2028now" }];
    const page = mapHtml(siteMap({ ...input, issues }));
    const title = /<title>(metal3\/a1\n[^<]*)<\/title>/.exec(page)?.[1] ?? "";
    expect(title.split("\n")).toContain("warning[host-not-ready] spec: state\\nprovisioning\\u2028now");
  });

  it("shows hosts changing hands against the lock it names", () => {
    const lock: Lock = {
      entries: [
        {
          host: "metal3/b2",
          cluster: clusterKey("edge", "gone"),
          kind: "bpa",
          role: "master",
          node: "master-1",
        },
      ],
    };
    const page = mapHtml(
      siteMap({ ...mapInput(), previous: { lock, source: "HEAD:rendered/metalsynth.lock.yaml" } }),
    );
    expect(page).toContain("changing hands against HEAD:rendered/metalsynth.lock.yaml");
    expect(page).toContain("changes hands: blue outline");
    expect(page).toMatch(/<g class="t [^"]* mv"[^>]*><title>metal3\/b2\n[^<]*changes hands: edge\/gone → /);
  });

  it("keeps a hub's groups and clusters collapsed", () => {
    const hosts = Array.from({ length: 240 }, (_, index) =>
      makeHost({ name: `h${index}`, rack: `r${index % 12}` }),
    );
    const page = mapHtml(siteMap(mapInput({ hosts })));
    expect(tiles(page)).toBe(240);
    expect(page).not.toMatch(/<details class="group" open/);
    expect(html).toMatch(/<details class="group" open/);
  });
});
