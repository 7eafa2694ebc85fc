/**
 * `metalsynth inventory pull` against a real API server (decision 0023): the example site's hosts are
 * registered as an operator would leave them (BareMetalHosts with their status written through the
 * status subresource, HardwareData, networkData Secrets), next to BMC credentials and other secret
 * values planted where a careless pull would copy them. The CLI is run from this clone's build.
 *
 * Also keeps the recorded API responses the unit tests replay (test/fixtures/inventory-pull/) true:
 * `RECORD_API=1 npm run test:e2e -- test/e2e/inventory-pull.test.ts` rewrites them.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  exec,
  installCrds,
  kubectlEnvironment,
  kubectlFor,
  must,
  readObjects,
  type KubeObject,
  type Kubectl,
  type Result,
} from "./support/kube.ts";
import { loadInventory, writeStatus } from "./support/webhook.ts";

const EXAMPLE = path.join(REPO, "examples", "site");
const RECORDED = path.join(REPO, "test", "fixtures", "inventory-pull", "api-responses.json");
/** The user the README's RBAC is bound to, as a ServiceAccount. */
const PULL_USER = "system:serviceaccount:metal3:inventory-check";
const UNPRIVILEGED = "nobody";

/** Values that must never leave the cluster: every one is planted below. */
const PLANTED = {
  bmcPassword: "planted-bmc-password-7f3a91",
  bmcUser: "planted-bmc-user-c02e",
  secretKey: "planted-secret-key-55d1",
  networkDataExtra: "planted-in-networkdata-0b9e",
  annotation: "planted-annotation-token-e44c",
} as const;

/** The API paths the recording holds, each as the API server answers a plain GET. */
const RECORDED_PATHS = [
  "/apis/metal3.io/v1alpha1/namespaces/metal3/baremetalhosts",
  "/apis/metal3.io/v1alpha1/namespaces/metal3/hardwaredata",
  "/api/v1/namespaces/metal3/secrets",
] as const;

describe("metalsynth inventory pull on a real API server", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let site: string;

  /** `metalsynth …` from this clone's build, as `user` (the cluster admin by default). */
  const metalsynth = (args: readonly string[], user?: string): Promise<Result> =>
    exec(process.execPath, [path.join(REPO, "bin", "metalsynth.js"), ...args], {
      env: kubectlEnvironment(user === undefined ? plane.kubeconfig : plane.kubeconfigFor(user)),
      cwd: REPO,
    });
  const pull = (...args: string[]) => metalsynth(["inventory", "pull", "--site", site, ...args]);
  const snapshot = async (): Promise<Map<string, string>> => {
    const dir = path.join(site, "inventory");
    const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) =>
      entry.isFile(),
    );
    const texts = new Map<string, string>();
    for (const entry of files) {
      const file = path.join(entry.parentPath, entry.name);
      texts.set(path.relative(dir, file), await readFile(file, "utf8"));
    }
    return texts;
  };

  beforeAll(async () => {
    plane = await startControlPlane(inject("e2eBinDir"), { users: [PULL_USER, UNPRIVILEGED] });
    kubectl = kubectlFor(plane.kubeconfig);
    await installCrds(kubectl);
    await ensureNamespaces(kubectl, ["metal3"]);
    await loadInventory(kubectl, await readObjects(filesUnder(path.join(EXAMPLE, "inventory"))));
    await plantSecrets(kubectl);
    site = await mkdtemp(path.join(tmpdir(), "metalsynth-pull-"));
    for (const part of ["metalsynth.yaml", "specs", "inventory", "rendered"]) {
      await cp(path.join(EXAMPLE, part), path.join(site, part), { recursive: true });
    }
  });
  afterAll(async () => {
    await plane?.stop();
    if (site) await rm(site, { recursive: true, force: true });
  });

  it("the recorded API responses the unit tests replay are what this API server answers", async () => {
    const live: Record<string, unknown> = {};
    for (const apiPath of RECORDED_PATHS)
      live[apiPath] = JSON.parse(await must(kubectl, ["get", "--raw", apiPath]));
    if (process.env["RECORD_API"] === "1") {
      await writeFile(RECORDED, `${JSON.stringify(live, null, 1)}\n`);
      return;
    }
    const recorded = JSON.parse(await readFile(RECORDED, "utf8")) as Record<string, unknown>;
    expect(withoutServerState(live), "re-record with RECORD_API=1").toEqual(withoutServerState(recorded));
  });

  it("replaces the committed raw dump with one canonical file and renders the site exactly as before", async () => {
    const result = await pull();
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    // The example site's dump and the cluster agree on every fact: nothing changed but the files.
    expect(result.stdout).not.toContain("inventory (changed)");
    for (const raw of [
      "hardwaredata.yaml",
      "networkdata-secrets.yaml",
      "rack-r01.yaml",
      "rack-r02.yaml",
      "rack-r03.json",
    ])
      expect(result.stdout).toContain(`removed ${path.relative(REPO, path.join(site, "inventory", raw))}`);
    expect(result.stdout).toMatch(/\(24 hosts\): 1 file\(s\) added, 0 changed, 5 removed, 0 unchanged\n$/);
    expect([...(await snapshot()).keys()]).toEqual(["metal3.yaml"]);

    // The same plan: the committed rendered/ is exactly what synth makes of the pulled inventory.
    const diff = await metalsynth(["diff", "--site", site, "--exit-code"]);
    expect(diff.stdout + diff.stderr).toContain("up to date");
    expect(diff.code).toBe(0);
    expect((await metalsynth(["validate", "--site", site])).code).toBe(0);
  });

  it("never writes a credential or a Secret value other than the networkData addresses", async () => {
    const text = [...(await snapshot()).values()].join("\n");
    for (const [what, value] of Object.entries(PLANTED)) expect(text, what).not.toContain(value);
    // Nor any encoded Secret data: the networkData Secrets hold plain addresses only.
    expect(text).not.toMatch(/^\s*data:/m);
    const secrets = parseAllDocuments(text)
      .map((document) => document.toJS() as KubeObject)
      .filter((object) => object.kind === "Secret");
    expect(secrets).toHaveLength(7);
    for (const secret of secrets) {
      expect(Object.keys(secret).sort()).toEqual(["apiVersion", "kind", "metadata", "stringData"]);
      expect(Object.keys(secret["stringData"] as object)).toEqual(["networkData"]);
    }
  });

  it("a second pull changes nothing, and --check agrees", async () => {
    const before = await snapshot();
    const again = await pull();
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `${path.relative(REPO, path.join(site, "inventory"))}: up to date (24 hosts)\n`,
    );
    expect(await snapshot()).toEqual(before);
    const check = await pull("--check");
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("up to date (24 hosts)");
  });

  it("one renumbered NIC is one changed line in the snapshot, one host line and the cluster it affects", async () => {
    // r02-node-04 is cluster-east's worker-1, chosen by the MAC of its data NIC.
    const host = JSON.parse(
      await must(kubectl, ["get", "baremetalhost", "-n", "metal3", "r02-node-04", "-o", "json"]),
    ) as KubeObject & { status: { hardware: { nics: { name: string; ip?: string }[] } } };
    for (const nic of host.status.hardware.nics) if (nic.ip === "10.23.2.14") nic.ip = "10.23.2.114";
    await writeStatus(kubectl, host, host.status);

    const before = await snapshot();
    const check = await pull("--check");
    expect(check.code).toBe(1);
    const lines = check.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "inventory (changed)",
      "  ~ host    metal3/r02-node-04: nic ens1f0 ip 10.23.2.14 → 10.23.2.114",
      "edge-a/cluster-east (changed)",
    ]);
    expect(check.stdout).toContain("  ~ object  ConfigMap edge-a/cluster-east-hosts-ini\n");
    expect(check.stdout).toMatch(/ {2}\+ object {2}Job edge-a\/kud-cluster-east-[0-9a-f]{8}\n/);
    expect(check.stdout).not.toContain("edge-a/cluster-west");
    expect(lines.at(-1)).toContain("the cluster differs in 1 host(s); nothing written (--check)");
    expect(await snapshot()).toEqual(before);

    const pulled = await pull();
    expect(pulled.code).toBe(0);
    const after = await snapshot();
    const [old, next] = [before.get("metal3.yaml") ?? "", after.get("metal3.yaml") ?? ""].map((text) =>
      text.split("\n"),
    );
    const changed = (next ?? []).flatMap((line, index) =>
      line === old?.[index] ? [] : [[old?.[index], line]],
    );
    expect(changed).toEqual([["      - ip: 10.23.2.14", "      - ip: 10.23.2.114"]]);
    expect((await pull("--check")).code).toBe(0);
  });

  it("--selector narrows the pull; hosts outside it show as removed", async () => {
    const check = await pull("--selector", "vino.airshipit.org/rack=r01", "--check");
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("  - host    metal3/r02-node-01\n");
    expect(check.stdout).not.toContain("  - host    metal3/r01-node-01\n");
    expect(check.stdout).toContain("the cluster differs in 16 host(s)");
  });

  it("runs with the README's Role; without read access it exits 2 and says what it needs", async () => {
    const readme = await readFile(path.join(REPO, "README.md"), "utf8");
    const marker = readme.indexOf("<!-- e2e: inventory-pull-rbac ");
    expect(marker, "README.md has a block marked e2e: inventory-pull-rbac").toBeGreaterThan(-1);
    const block = /```yaml\n([\s\S]*?)```/.exec(readme.slice(marker))?.[1] ?? "";
    const objects = parseAllDocuments(block).map((document) => document.toJS() as KubeObject);
    expect(objects.map((object) => object.kind)).toEqual([
      "ServiceAccount",
      "Role",
      "RoleBinding",
      "CronJob",
    ]);
    // Created for real but the CronJob, which only a dry run can check here (no controller runs it).
    const rbac = objects.filter((object) => object.kind !== "CronJob");
    await must(kubectl, ["apply", "-f", "-"], rbac.map((object) => stringify(object)).join("---\n"));
    const cronJob = objects.find((object) => object.kind === "CronJob");
    await must(kubectl, ["apply", "--dry-run=server", "-f", "-"], stringify(cronJob));
    const args = (
      cronJob as unknown as {
        spec: { jobTemplate: { spec: { template: { spec: { containers: { args: string[] }[] } } } } };
      }
    ).spec.jobTemplate.spec.template.spec.containers[0]?.args;
    expect(args?.slice(0, 2)).toEqual(["inventory", "pull"]);
    const siteAt = args?.indexOf("--site") ?? -1;
    const asInCronJob = [...(args ?? [])];
    asInCronJob.splice(siteAt + 1, 1, site);

    const allowed = await metalsynth(asInCronJob, PULL_USER);
    expect(allowed.stderr).toBe("");
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain("up to date (24 hosts)");

    const refused = await metalsynth(["inventory", "pull", "--site", site, "--check"], UNPRIVILEGED);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^metalsynth inventory: could not list baremetalhosts in all namespaces from https:\/\/127\.0\.0\.1:\d+: 403 .*forbidden.*; the pull needs list on baremetalhosts/,
    );
    expect(refused.stderr.split("\n")).toHaveLength(2);
  });
});

/**
 * BMC credentials Secrets as Metal3 has them, a second key beside networkData, a networkData entry
 * field no one reads, and an annotation: all values a pull must leave in the cluster.
 */
async function plantSecrets(kubectl: Kubectl): Promise<void> {
  for (const host of ["r01-node-01", "r02-node-04", "r03-node-01"]) {
    await must(kubectl, [
      "create",
      "secret",
      "generic",
      "-n",
      "metal3",
      `${host}-bmc-secret`,
      `--from-literal=username=${PLANTED.bmcUser}`,
      `--from-literal=password=${PLANTED.bmcPassword}`,
    ]);
  }
  const secret = JSON.parse(
    await must(kubectl, ["get", "secret", "-n", "metal3", "r01-node-01-networkdata", "-o", "json"]),
  ) as { data: Record<string, string> };
  const networkData = JSON.parse(Buffer.from(secret.data["networkData"] ?? "", "base64").toString()) as {
    networks: Record<string, unknown>[];
  };
  for (const network of networkData.networks) network["password"] = PLANTED.networkDataExtra;
  const patch = {
    data: {
      networkData: Buffer.from(JSON.stringify(networkData)).toString("base64"),
      password: Buffer.from(PLANTED.secretKey).toString("base64"),
    },
  };
  await must(kubectl, [
    "patch",
    "secret",
    "-n",
    "metal3",
    "r01-node-01-networkdata",
    "--type=merge",
    "-p",
    JSON.stringify(patch),
  ]);
  await must(kubectl, [
    "annotate",
    "baremetalhost",
    "-n",
    "metal3",
    "r01-node-01",
    `example.com/token=${PLANTED.annotation}`,
  ]);
}

/** A recorded response without what the API server makes up anew each run. */
function withoutServerState(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutServerState);
  if (typeof value !== "object" || value === null) return value;
  const volatile = ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"];
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !volatile.includes(key))
      .map(([key, inner]) => [key, withoutServerState(inner)]),
  );
}
