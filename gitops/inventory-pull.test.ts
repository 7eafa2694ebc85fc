/**
 * `inventory pull` on API responses recorded from a real API server (the example site's hosts, with
 * BMC credentials and other secret values planted; see test/e2e/inventory-pull.test.ts), replayed over
 * HTTP so the client code runs for real, into a copy of the example site.
 */
import { readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO } from "../test/harness.ts";
import { replayRecorded } from "../test/support/recorded-apiserver.ts";
import type { FakeApiServer } from "../test/support/fake-apiserver.ts";
import { canonicalFiles } from "../synth/inventory/canonical.ts";
import { ClusterReadError, readClusterInventory, type ClusterScope } from "./cluster-inventory.ts";
import { UsageError } from "./errors.ts";
import { readInventory } from "./inventory-reader.ts";
import { pullInventory, type PullOptions } from "./inventory-pull.ts";
import { pullText } from "./report/pull-format.ts";

const RECORDED: Record<string, unknown> = JSON.parse(
  readFileSync(path.join(REPO, "test", "fixtures", "inventory-pull", "api-responses.json"), "utf8"),
);
const EXAMPLE = path.join(REPO, "examples", "site");
const RAW_FILES = [
  "hardwaredata.yaml",
  "networkdata-secrets.yaml",
  "rack-r01.yaml",
  "rack-r02.yaml",
  "rack-r03.json",
];

const BMHS = "/apis/metal3.io/v1alpha1/baremetalhosts";
const SECRETS = "/api/v1/secrets";

let server: FakeApiServer;
let site: string;

/** A pull of the recorded cluster into `site`, paths shown relative to it; lists in pages of 5. */
function pull(options: Partial<PullOptions> = {}) {
  const read = (scope: ClusterScope) => readClusterInventory(server.kubeConfig(), scope, { pageSize: 5 });
  return pullInventory({ site, relativeTo: site, read, ...options });
}

/** The recorded BareMetalHost `name` (a live view: changing it changes what the server answers). */
function host(name: string): RecordedObject & {
  status: { hardware: { cpu: { count: number }; nics: { name: string; ip?: string }[] } };
} {
  const found = recorded(BMHS).find((object) => object.metadata.name === name);
  if (!found) throw new Error(`no recorded host ${name}`);
  return found as never;
}

type RecordedObject = Record<string, unknown> & {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
};

/** The objects the server holds at `path` (live: changing one changes what it answers). */
function recorded(path: string): RecordedObject[] {
  return server.objects(path) as RecordedObject[];
}

async function inventoryFiles(): Promise<string[]> {
  const entries = await readdir(path.join(site, "inventory"), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(path.join(site, "inventory"), path.join(entry.parentPath, entry.name)))
    .sort();
}

beforeEach(async () => {
  server = replayRecorded(RECORDED);
  await server.start();
  site = await mkdtemp(path.join(tmpdir(), "metalsynth-pull-"));
  await cp(EXAMPLE, site, { recursive: true });
});
afterEach(async () => {
  await server.stop();
  await rm(site, { recursive: true, force: true });
});

describe("inventory pull: the first pull of a site with a raw dump", () => {
  it("replaces the dump with one canonical file, byte for byte what the dump itself converts to", async () => {
    const report = await pull();
    expect(report.hosts).toEqual([]);
    expect(report.diagnostics).toEqual([]);
    expect(report.files).toEqual([
      { path: "inventory/hardwaredata.yaml", status: "removed" },
      { path: "inventory/metal3.yaml", status: "added" },
      ...RAW_FILES.slice(1).map((file) => ({ path: `inventory/${file}`, status: "removed" })),
    ]);
    expect(report.written).toBe(true);
    expect(await inventoryFiles()).toEqual(["metal3.yaml"]);
    // What the API server holds and what the committed dump says are the same facts, written the same.
    const committed = await readInventory([path.join(EXAMPLE, "inventory")]);
    expect(await readFile(path.join(site, "inventory", "metal3.yaml"), "utf8")).toBe(
      canonicalFiles(committed.inventory.hosts).get("metal3.yaml"),
    );
    expect(pullText({ ...report, check: false })).toBe(
      [
        ...RAW_FILES.map((file) => `removed inventory/${file}: the snapshot holds everything of it`),
        "wrote inventory (24 hosts): 1 file(s) added, 0 changed, 5 removed, 0 unchanged",
        "",
      ].join("\n"),
    );
  });

  it("reads only the networkData Secrets the hosts name, one by one, and writes no other Secret value", async () => {
    await pull();
    const secrets = server.requests.filter((request) => request.includes("/secrets"));
    expect(secrets).toHaveLength(7);
    for (const request of secrets)
      expect(request).toMatch(/^GET \/api\/v1\/namespaces\/metal3\/secrets\/r0\d-node-0\d-networkdata$/);
    const text = await readFile(path.join(site, "inventory", "metal3.yaml"), "utf8");
    // Planted in the recording: BMC credentials, a password beside networkData, a field in it.
    expect(JSON.stringify(RECORDED)).toContain("planted-");
    expect(text).not.toContain("planted");
    expect(text).not.toMatch(/^\s*(data|password|username):/m);
  });

  it("lists the labelled Secrets instead when the site says so (and gets none by name)", async () => {
    await writeFile(
      path.join(site, "metalsynth.yaml"),
      `${await readFile(path.join(site, "metalsynth.yaml"), "utf8")}inventory:\n  labelledNetworkData: true\n`,
    );
    const before = recorded(SECRETS).length;
    // An unlabelled Secret a host names is not read: the host loses its SIP addresses.
    const unlabelled = recorded(SECRETS).find((secret) => secret.metadata.name === "r03-node-02-networkdata");
    delete unlabelled?.metadata.labels?.["metalsynth.io/network-data"];
    const report = await pull();
    expect(recorded(SECRETS)).toHaveLength(before);
    const secrets = server.requests.filter((request) => request.includes("/secrets"));
    expect(secrets).toEqual([
      "GET /api/v1/namespaces/metal3/secrets?labelSelector=metalsynth.io%2Fnetwork-data%3Dtrue&limit=5",
      "GET /api/v1/namespaces/metal3/secrets?continue=5&labelSelector=metalsynth.io%2Fnetwork-data%3Dtrue&limit=5",
    ]);
    expect(report.hosts).toEqual([
      {
        host: "metal3/r03-node-02",
        status: "changed",
        changes: [
          "networkData Secret present → missing",
          "network oam-ipv4 removed (was 10.41.0.32)",
          "network oam-ipv6 removed (was fd00:41::32)",
          "network pxe-ipv4 removed (was 172.22.0.32)",
          "network storage-ipv4 removed (was 10.42.0.32)",
        ],
      },
    ]);
    expect(report.diagnostics.map((found) => found.rule)).toEqual(["inventory-unmatched"]);
  });

  it("splits the snapshot by a label when the site says so, each Secret beside its host", async () => {
    await writeFile(
      path.join(site, "metalsynth.yaml"),
      `${await readFile(path.join(site, "metalsynth.yaml"), "utf8")}inventory:\n  fileLabel: vino.airshipit.org/rack\n`,
    );
    const report = await pull();
    expect(report.hosts).toEqual([]);
    expect(await inventoryFiles()).toEqual(["metal3/r01.yaml", "metal3/r02.yaml", "metal3/r03.yaml"]);
    const r03 = await readFile(path.join(site, "inventory", "metal3", "r03.yaml"), "utf8");
    expect(r03.split("\n")[0]).toBe(
      "# metalsynth inventory pull: the BareMetalHosts of namespace metal3 labelled vino.airshipit.org/rack=r03,",
    );
    expect(r03).toContain("name: r03-node-01-networkdata");
    expect(r03).not.toContain("name: r01-node-01-networkdata");
  });
});

describe("inventory pull: refreshing a pulled snapshot", () => {
  beforeEach(async () => {
    await pull();
  });

  it("changes nothing when nothing changed: no file written, no host reported", async () => {
    const file = path.join(site, "inventory", "metal3.yaml");
    const before = await stat(file);
    const report = await pull();
    expect(report).toMatchObject({ hosts: [], files: [], unchanged: 1, written: false, refused: [] });
    expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
    expect(pullText({ ...report, check: false })).toBe("inventory: up to date (24 hosts)\n");
    expect(pullText({ ...report, check: true })).toBe("inventory: up to date (24 hosts)\n");
  });

  it("a renumbered NIC: one host line and the cluster it affects; --check writes nothing", async () => {
    for (const nic of host("r02-node-04").status.hardware.nics)
      if (nic.ip === "10.23.2.14") nic.ip = "10.23.2.114";
    const before = await readFile(path.join(site, "inventory", "metal3.yaml"), "utf8");
    const report = await pull({ check: true });
    expect(report.written).toBe(false);
    expect(await readFile(path.join(site, "inventory", "metal3.yaml"), "utf8")).toBe(before);
    expect(report.hosts).toEqual([
      { host: "metal3/r02-node-04", status: "changed", changes: ["nic ens1f0 ip 10.23.2.14 → 10.23.2.114"] },
    ]);
    expect(report.clusters?.clusters.map((cluster) => cluster.cluster)).toEqual(["edge-a/cluster-east"]);
    const text = pullText({ ...report, check: true });
    expect(text).toMatch(
      /^inventory \(changed\)\n {2}~ host {4}metal3\/r02-node-04: nic ens1f0 ip 10\.23\.2\.14 → 10\.23\.2\.114\nedge-a\/cluster-east \(changed\)\n/,
    );
    expect(text).toContain("  ~ object  ConfigMap edge-a/cluster-east-hosts-ini\n");
    expect(text.endsWith("inventory: the cluster differs in 1 host(s); nothing written (--check)\n")).toBe(
      true,
    );

    const written = await pull();
    expect(written.files).toEqual([{ path: "inventory/metal3.yaml", status: "changed" }]);
    const after = await readFile(path.join(site, "inventory", "metal3.yaml"), "utf8");
    const lines = [before.split("\n"), after.split("\n")] as const;
    expect(lines[1].filter((line, index) => line !== lines[0][index])).toEqual(["      - ip: 10.23.2.114"]);
  });

  it("a host that no longer fits its node: the node's move in diff's words", async () => {
    // cluster-west's master-2 was chosen by best fit for 16 CPUs (the lock keeps it while it fits).
    host("r02-node-06").status.hardware.cpu.count = 8;
    const report = await pull({ check: true });
    expect(report.hosts).toEqual([
      { host: "metal3/r02-node-06", status: "changed", changes: ["cpus 16 → 8"] },
    ]);
    const [west] = report.clusters?.clusters ?? [];
    expect(west?.cluster).toBe("edge-a/cluster-west");
    expect(west?.hosts.removed).toEqual([{ host: "metal3/r02-node-06", role: "master", node: "master-2" }]);
    expect(west?.hosts.added).toHaveLength(1);
    expect(pullText({ ...report, check: true })).toContain(
      "  - host    master master-2=metal3/r02-node-06\n",
    );
  });

  it("a host gone that a cluster names: the errors synth would newly report, and no render", async () => {
    server.remove(BMHS, "r01-node-04", "metal3");
    const report = await pull({ check: true });
    expect(report.hosts).toEqual([{ host: "metal3/r01-node-04", status: "removed", changes: [] }]);
    expect(report.clusters).toBeUndefined();
    expect(report.refused.map((found) => [found.rule, found.path])).toEqual([
      ["host-vanished", "spec.masters[0].master-1"],
    ]);
    expect(pullText({ ...report, check: true })).toContain(
      "with the new inventory, synth would refuse the site:\n  specs/cluster-east/provisioning.yaml:",
    );
  });

  it("a host it can't read cleanly stays in the snapshot, set aside, so validate names it (decision 0052)", async () => {
    // The issue's case: an extra NIC of cluster-west's locked master-1 reports an address with its prefix.
    host("r01-node-05").status.hardware.nics.push({
      name: "eno9",
      mac: "0c:00:00:00:09:09",
      ip: "10.0.0.2/24",
    } as never);
    const report = await pull();
    expect(report.diagnostics.map((found) => `${found.rule} ${found.host}`)).toEqual([
      "address-invalid metal3/r01-node-05",
    ]);
    expect(report.refused.map((found) => `${found.rule} ${found.path}`)).toEqual([
      "host-vanished spec.masters[0].master-1",
    ]);
    expect(await inventoryFiles()).toEqual(["_set-aside.yaml", "metal3.yaml"]);
    const aside = await readFile(path.join(site, "inventory", "_set-aside.yaml"), "utf8");
    expect(aside).toContain(
      `metalsynth.io/set-aside: 'address-invalid: NIC 0c:00:00:00:09:09 has ip "10.0.0.2/24"`,
    );
    const again = await readInventory([path.join(site, "inventory")], { relativeTo: site });
    expect(again.inventory.byId("metal3/r01-node-05")).toBeUndefined();
    expect(again.inventory.setAsideById("metal3/r01-node-05")?.reason).toMatch(
      /^set aside when the snapshot was taken: NIC 0c:00:00:00:09:09 has ip "10\.0\.0\.2\/24"/,
    );
    expect(again.issues.map((found) => `${found.severity} ${found.rule} ${found.source?.file}`)).toEqual([
      "warning address-invalid inventory/_set-aside.yaml",
    ]);
    // Fixed in the cluster: the next pull takes the host back and drops the file.
    host("r01-node-05").status.hardware.nics.pop();
    const fixed = await pull();
    expect(fixed.files).toEqual(
      expect.arrayContaining([{ path: "inventory/_set-aside.yaml", status: "removed" }]),
    );
    expect(await inventoryFiles()).toEqual(["metal3.yaml"]);
  });

  it("--namespace: files of other namespaces stay and still count", async () => {
    const other = path.join(site, "inventory", "lab.yaml");
    await writeFile(
      other,
      "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: { name: lab-1, namespace: lab }\nspec: { bootMACAddress: 02:00:00:00:00:01 }\n",
    );
    const report = await pull({ namespaces: ["metal3"] });
    expect(report.hosts).toEqual([]);
    expect(report.files).toEqual([]);
    expect(await inventoryFiles()).toEqual(["lab.yaml", "metal3.yaml"]);
    // Pulling every namespace replaces it: the cluster has no lab-1.
    const all = await pull();
    expect(all.hosts).toEqual([{ host: "lab/lab-1", status: "removed", changes: [] }]);
    expect(await inventoryFiles()).toEqual(["metal3.yaml"]);
  });

  it.each([
    [
      "a file with pulled hosts and another kind",
      "mixed.yaml",
      "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: { name: extra, namespace: metal3 }\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: notes, namespace: metal3 }\n",
      /inventory\/mixed\.yaml: holds 1 object\(s\) \(BareMetalHost metal3\/extra\), which the pull replaces, and 1 object\(s\) \(ConfigMap metal3\/notes\), which it does not; split the file or remove it/,
    ],
    [
      "a file that can't be parsed",
      "broken.yaml",
      "kind: BareMetalHost\nmetadata: [unclosed\n",
      /inventory\/broken\.yaml: can't tell what it holds \(inventory\/broken\.yaml:\d+:\d+: error\[yaml-syntax\]/,
    ],
    [
      "another namespace's hosts where the snapshot is written",
      "metal3.yaml",
      "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: { name: lab-1, namespace: lab }\n",
      /inventory\/metal3\.yaml: the snapshot is written to this path, but the file holds 1 object\(s\) \(BareMetalHost lab\/lab-1\)/,
    ],
  ])("refuses, writing nothing: %s", async (_name, file, text, message) => {
    await writeFile(path.join(site, "inventory", file), text);
    const before = await inventoryFiles();
    const options = file === "metal3.yaml" ? { namespaces: ["metal3"] } : {};
    const refusal = pull(options);
    await expect(refusal).rejects.toThrow(UsageError);
    await expect(refusal).rejects.toThrow(message);
    expect(await inventoryFiles()).toEqual(before);
  });
});

describe("inventory pull: the API server", () => {
  it("a refused list is one line: what was asked, the server's answer, what the pull needs", async () => {
    server.refuse.set("/apis/metal3.io/v1alpha1/baremetalhosts", 403);
    const refusal = pull();
    await expect(refusal).rejects.toThrow(ClusterReadError);
    await expect(refusal).rejects.toThrow(
      /^could not list baremetalhosts in all namespaces from http:\/\/127\.0\.0\.1:\d+: 403 refused by the test \(403\); the pull needs list on baremetalhosts and hardwaredata/,
    );
  });

  it("an API server that does not answer is named", async () => {
    const silent = replayRecorded(RECORDED);
    await silent.start();
    const kubeConfig = silent.kubeConfig();
    await silent.stop();
    const refusal = pullInventory({
      site,
      relativeTo: site,
      read: (scope) => readClusterInventory(kubeConfig, scope),
    });
    await expect(refusal).rejects.toThrow(
      /^could not list baremetalhosts in all namespaces from http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );
    expect((await inventoryFiles()).length).toBe(RAW_FILES.length);
  });

  it("a cluster without HardwareData (Metal3 before it) is read all the same", async () => {
    server.refuse.set("/apis/metal3.io/v1alpha1/hardwaredata", 404);
    const report = await pull({ check: true });
    // The three hosts whose hardware only HardwareData had are now uninspected.
    expect(report.hosts.map((change) => change.host)).toEqual([
      "metal3/r01-node-08",
      "metal3/r02-node-05",
      "metal3/r03-node-06",
    ]);
    expect(report.hosts[0]?.changes).toContain("cpus 32 → unknown");
  });

  it("--selector and --namespace go to the API server", async () => {
    await pull({ namespaces: ["metal3"], selector: "vino.airshipit.org/rack=r01", check: true });
    expect(server.requests[0]).toBe(
      "GET /apis/metal3.io/v1alpha1/namespaces/metal3/baremetalhosts?labelSelector=vino.airshipit.org%2Frack%3Dr01&limit=5",
    );
  });
});

describe("inventory pull: settings", () => {
  it("refuses to guess when metalsynth.yaml's inventory settings are invalid", async () => {
    await mkdir(path.join(site, "inventory"), { recursive: true });
    await writeFile(
      path.join(site, "metalsynth.yaml"),
      "apiVersion: metalsynth.io/v1alpha1\nkind: SiteSettings\ninventory:\n  fileLabel: not a label\n",
    );
    await expect(pull()).rejects.toThrow(/metalsynth\.yaml has errors[^]*inventory\.fileLabel/);
  });
});
