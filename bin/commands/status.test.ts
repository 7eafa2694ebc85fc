/**
 * `metalsynth status` as the CLI runs it: its arguments, what it prints and its exit codes, against
 * the fake API server's list and watch (the e2e suite runs the built CLI, and `--write`, against a
 * real API server).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { allocation } from "../../test/builders/allocations.ts";
import { makeBmh } from "../../test/builders/inventory.ts";
import { provisioning } from "../../test/builders/reviews.ts";
import { FakeApiServer } from "../../test/support/fake-apiserver.ts";
import { main } from "../cli.ts";

const PROVISIONINGS = "/apis/bpa.akraino.org/v1alpha1/provisionings";
const MAC = "aa:00:00:00:00:01";

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (text) => void (out += text), err: (text) => void (err += text) });
  return { code, out, err };
}

describe("metalsynth status", () => {
  let server: FakeApiServer;
  let dir: string;
  let kubeconfig: string;

  beforeEach(async () => {
    server = new FakeApiServer()
      .serve("/apis/metal3.io/v1alpha1/baremetalhosts", "metal3.io/v1alpha1", "BareMetalHost")
      .serve("/apis/metal3.io/v1alpha1/hardwaredata", "metal3.io/v1alpha1", "HardwareData")
      .serve("/api/v1/secrets", "v1", "Secret")
      .serve("/apis/metalsynth.io/v1alpha1/allocations", "metalsynth.io/v1alpha1", "Allocation")
      .serve("/apis/batch/v1/jobs", "batch/v1", "Job")
      .serveCustomResources();
    server.put(
      "/apis/metal3.io/v1alpha1/baremetalhosts",
      makeBmh({ name: "node-1", nics: [{ name: "eth0", mac: MAC, ip: "10.0.0.1" }] }),
    );
    server.put(
      "/apis/metalsynth.io/v1alpha1/allocations",
      allocation("edge-a", "cluster-a", "bpa", [{ host: "metal3/node-1", node: "master-1", role: "master" }]),
    );
    server.put(
      PROVISIONINGS,
      provisioning({ name: "cluster-a", masters: [["master-1", { "mac-address": MAC }]] }),
    );
    await server.start();
    dir = await mkdtemp(path.join(tmpdir(), "metalsynth-status-cli-"));
    kubeconfig = path.join(dir, "kubeconfig");
    await writeFile(kubeconfig, server.kubeConfig().exportConfig());
  });
  afterEach(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("prints the table and what keeps each CR from Ready, and exits 1 while one is not", async () => {
    const result = await run("status", "--kubeconfig", kubeconfig);
    expect(result.err).toBe("");
    expect(result.code).toBe(1);
    expect(result.out).toBe(
      [
        "NAMESPACE   KIND           NAME        CLUSTER     READY   HOSTS   REASON",
        "edge-a      Provisioning   cluster-a   cluster-a   False   1/1     JobNotFound",
        "",
        "Provisioning edge-a/cluster-a:",
        "  Applied Unknown (NoGitOpsAgent): no Flux or Argo CD marks on the object: it was not applied by a GitOps agent",
        "  KudInstalled False (JobNotFound): no KUD installer Job (kud-cluster-a-…) in edge-a yet: the GitOps agent creates it when it applies the cluster's directory",
        "",
      ].join("\n"),
    );
  });

  it("prints a v1 List with -o yaml and -o json, only the namespaces -n names", async () => {
    const yaml = await run("status", "--kubeconfig", kubeconfig, "-o", "yaml");
    const list = parse(yaml.out) as {
      kind: string;
      items: { kind: string; metadata: unknown; status: { hostSummary: string } }[];
    };
    expect(list.kind).toBe("List");
    expect(list.items.map((item) => [item.kind, item.metadata, item.status.hostSummary])).toEqual([
      ["Provisioning", { name: "cluster-a", namespace: "edge-a" }, "1/1"],
    ]);
    // The same List; only the times a condition became what it is differ between two runs.
    const json = await run("status", "--kubeconfig", kubeconfig, "-o", "json");
    const timeless = (text: string) => text.replace(/"lastTransitionTime":"[^"]*"/g, "");
    expect(timeless(JSON.stringify(JSON.parse(json.out)))).toBe(timeless(JSON.stringify(list)));
    const elsewhere = await run("status", "--kubeconfig", kubeconfig, "-n", "edge-b");
    expect(elsewhere).toMatchObject({
      code: 0,
      out: "no Provisioning, Software, Cluster or SIPCluster found\n",
    });
  });

  it.each([
    [["-o", "xml"], /--format must be text, json or yaml, not "xml"/],
    [["--write", "-o", "json"], /--format goes without --write/],
    [["--port", "9090"], /--port and --host go with --write/],
    [["-n", "Bad_Name"], /--namespace must be a namespace name, not "Bad_Name"/],
    [["--write", "--port", "99999"], /--port must be a port number/],
    [
      ["--allocation-namespace", "Bad_Name"],
      /--allocation-namespace must be a namespace name, not "Bad_Name"/,
    ],
    [["--allocation-manager", "kubectl edit"], /--allocation-manager must be a field manager's name/],
    [["stray"], /unexpected argument "stray"/],
  ])("refuses %j with a usage error", async (args, message) => {
    const result = await run("status", "--kubeconfig", kubeconfig, ...args);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });
});
