/**
 * `metalsynth inventory pull` as the CLI runs it: arguments, output formats and exit codes, against
 * API responses recorded from a real API server (the e2e suite runs the built CLI against the server
 * itself).
 */
import { readFileSync } from "node:fs";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO } from "../../test/harness.ts";
import { replayRecorded } from "../../test/support/recorded-apiserver.ts";
import type { FakeApiServer } from "../../test/support/fake-apiserver.ts";
import { main } from "../cli.ts";

const RECORDED: Record<string, unknown> = JSON.parse(
  readFileSync(path.join(REPO, "test", "fixtures", "inventory-pull", "api-responses.json"), "utf8"),
);

let server: FakeApiServer;
let dir: string;
let site: string;
const kubeconfigBefore = process.env["KUBECONFIG"];

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (text) => void (out += text), err: (text) => void (err += text) });
  return { code, out, err };
}

beforeEach(async () => {
  server = replayRecorded(RECORDED);
  await server.start();
  dir = await mkdtemp(path.join(tmpdir(), "metalsynth-inventory-cli-"));
  site = path.join(dir, "site");
  await cp(path.join(REPO, "examples", "site"), site, { recursive: true });
  await writeFile(path.join(dir, "kubeconfig"), server.kubeConfig().exportConfig());
  process.env["KUBECONFIG"] = path.join(dir, "kubeconfig");
});
afterEach(async () => {
  if (kubeconfigBefore === undefined) delete process.env["KUBECONFIG"];
  else process.env["KUBECONFIG"] = kubeconfigBefore;
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("metalsynth inventory pull", () => {
  it("exits 0 after a pull, 1 with --check when a host differs, 0 when none does", async () => {
    expect((await run("inventory", "pull", "--site", site)).code).toBe(0);
    expect(await run("inventory", "pull", "--site", site, "--check")).toMatchObject({ code: 0, err: "" });
    const host = server
      .objects("/apis/metal3.io/v1alpha1/baremetalhosts")
      .find((object) => (object["metadata"] as { name: string }).name === "r03-node-08");
    (host?.["status"] as { hardware: { cpu: { count: number } } }).hardware.cpu.count = 128;
    const check = await run("inventory", "pull", "--site", site, "--check");
    expect(check.code).toBe(1);
    expect(check.out).toContain("  ~ host    metal3/r03-node-08: cpus 96 → 128\n");
  });

  it("--format json: hosts, clusters, files and diagnostics as one object", async () => {
    const { code, out } = await run("inventory", "pull", "--site", site, "--check", "--format", "json");
    expect(code).toBe(0);
    const report = JSON.parse(out) as Record<string, unknown>;
    expect(Object.keys(report)).toEqual([
      "inventory",
      "changed",
      "written",
      "hosts",
      "clusters",
      "wiring",
      "refused",
      "files",
      "unchanged",
      "diagnostics",
    ]);
    expect(report).toMatchObject({ changed: false, written: false, hosts: [], unchanged: 0 });
    expect((report["files"] as unknown[]).length).toBe(6);
  });

  it.each([
    [["inventory"], /^metalsynth inventory: missing subcommand: inventory pull\n/],
    [["inventory", "push"], /^metalsynth inventory: unknown subcommand "push" \(inventory pull\)\n/],
    [
      ["inventory", "pull", "--namespace", "Not_A_Namespace"],
      /--namespace Not_A_Namespace: not a namespace name/,
    ],
    [["inventory", "pull", "--selector", ""], /--selector must not be empty/],
    [["inventory", "pull", "extra"], /unexpected argument "extra"/],
    [["inventory", "pull", "--format", "yaml"], /--format must be text or json/],
  ])("%j is a usage error (exit 2), before any request", async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(server.requests).toEqual([]);
  });

  it("--namespace takes every word up to the next option", async () => {
    await run("inventory", "pull", "--site", site, "--namespace", "metal3", "lab", "--check");
    expect(server.requests.filter((request) => request.includes("baremetalhosts"))).toEqual([
      "GET /apis/metal3.io/v1alpha1/namespaces/lab/baremetalhosts?limit=500",
      "GET /apis/metal3.io/v1alpha1/namespaces/metal3/baremetalhosts?limit=500",
    ]);
  });

  it("--help shows the subcommand's options", async () => {
    const { code, out } = await run("inventory", "--help");
    expect(code).toBe(0);
    expect(out).toContain(
      "usage: metalsynth inventory pull [--site DIR] [-n NS…] [-l SEL] [--kubeconfig FILE] [--context NAME] [--check]",
    );
  });
});

describe("kubectl's flags", () => {
  /** A kubeconfig whose current context is a server nobody listens on, and whose `fake` context is the recorded one. */
  async function twoContexts(): Promise<string> {
    const config = JSON.parse(server.kubeConfig().exportConfig()) as {
      clusters: { name: string; cluster: Record<string, unknown> }[];
      contexts: { name: string; context: { cluster: string; user: string } }[];
      "current-context": string;
    };
    const [cluster] = config.clusters;
    const [context] = config.contexts;
    if (cluster === undefined || context === undefined)
      throw new Error("the fake server's kubeconfig has no context");
    config.clusters.push({ name: "nowhere", cluster: { ...cluster.cluster, server: "https://127.0.0.1:9" } });
    config.contexts = [
      { name: "fake", context: context.context },
      { name: "nowhere", context: { ...context.context, cluster: "nowhere" } },
    ];
    config["current-context"] = "nowhere";
    const file = path.join(dir, "two-contexts");
    await writeFile(file, JSON.stringify(config));
    process.env["KUBECONFIG"] = path.join(dir, "no-such-kubeconfig");
    return file;
  }

  it("--kubeconfig names the file and --context picks its context, -n and -l are --namespace and --selector", async () => {
    const file = await twoContexts();
    const result = await run("inventory", "pull", "--site", site, "--kubeconfig", file, "--context", "fake");
    expect(result).toMatchObject({ code: 0 });
    // -l reaches the API server: only rack r01's hosts are pulled, so the others leave the snapshot.
    const short = await run(
      ...["inventory", "pull", "--site", site, "--kubeconfig", file, "--context", "fake"],
      ...["-n", "metal3", "-l", "vino.airshipit.org/rack=r01"],
    );
    expect(short.out).toContain("  - host    metal3/r02-node-01\n");
    expect(short.out).not.toContain("host    metal3/r01-node-01");
    // The file's own current context is the server nobody listens on.
    expect((await run("inventory", "pull", "--site", site, "--kubeconfig", file)).code).toBe(2);
  });

  it("refuses a context the kubeconfig does not have, naming those it has", async () => {
    const file = await twoContexts();
    const result = await run("inventory", "pull", "--site", site, "--kubeconfig", file, "--context", "prod");
    expect(result).toMatchObject({ code: 2, out: "" });
    expect(result.err).toBe(
      "metalsynth inventory: --context prod: no such context in the kubeconfig (fake, nowhere)\n",
    );
  });
});
