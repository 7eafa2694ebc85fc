/**
 * The README's blocks marked `<!-- e2e: NAME -->` run as written, with bash in this clone, against a
 * real API server: what a person copies from the README works, and prints what the README says.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { REPO } from "../harness.ts";
import { runJob, startAgentPlane } from "./support/agents.ts";
import type { ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  exec,
  kubectlEnvironment,
  must,
  readObjects,
  registrable,
  type KubeObject,
  type Kubectl,
} from "./support/kube.ts";
import { readmeBlock } from "./support/readme.ts";

describe("README blocks, run as written against a real API server", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let run: (script: string) => Promise<{ code: number; output: string }>;

  beforeAll(async () => {
    // The example's tenant has an auth service, whose Issuer and Certificate need cert-manager's CRDs.
    ({ plane, kubectl } = await startAgentPlane(inject("e2eBinDir")));
    run = async (script) => {
      const result = await exec("bash", ["-c", script], {
        cwd: REPO,
        env: kubectlEnvironment(plane.kubeconfig),
      });
      return { code: result.code, output: result.stdout + result.stderr };
    };
  });
  afterAll(async () => plane?.stop());

  it("Run it from a clone: the webhook refuses a CR with the message the README shows", async () => {
    const { script, shown } = await readmeBlock("run-from-clone");
    const result = await run(script);
    const expected = shown.trim().split("\n");
    expect(expected.length).toBeGreaterThan(0);
    for (const line of expected) expect(result.output).toContain(line);
    // The block cleans up after itself.
    expect((await kubectl(["get", "validatingwebhookconfigurations", "-o", "name"])).stdout).not.toContain(
      "metalsynth-from-a-clone",
    );
  });

  it("Applying rendered/ by hand: the label Job sets the SIP labels, a host made by kubectl apply keeps its spec", async () => {
    const inventory = path.join(REPO, "examples", "site", "inventory");
    const hosts = (
      await readObjects([
        path.join(inventory, "rack-r01.yaml"),
        path.join(inventory, "rack-r02.yaml"),
        path.join(inventory, "rack-r03.json"),
      ])
    ).filter((object) => object.kind === "BareMetalHost");
    await ensureNamespaces(kubectl, ["metal3", "edge-sip"]);
    await must(
      kubectl,
      ["apply", "-f", "-"],
      hosts.map((host) => stringify(registrable(host))).join("---\n"),
    );
    const specs = async () =>
      (
        JSON.parse(await must(kubectl, ["get", "baremetalhosts", "-n", "metal3", "-o", "json"])) as {
          items: KubeObject[];
        }
      ).items;
    const before = await specs();

    const { script } = await readmeBlock("apply-by-hand");
    for (const round of [1, 2]) {
      const result = await run(script);
      expect(result.code, `round ${round}: ${result.output}`).toBe(0);
      // No kubelet runs here: the label Job's containers are run as its ServiceAccount would.
      const jobs = JSON.parse(
        await must(kubectl, [
          "get",
          "jobs",
          "-n",
          "edge-sip",
          "-l",
          "metalsynth.io/cluster=tenant-a",
          "-o",
          "json",
        ]),
      ) as { items: KubeObject[] };
      expect(jobs.items.map((job) => job.metadata.name)).toEqual([
        expect.stringMatching(/^bmh-labels-tenant-a-/),
      ]);
      const labelRun = await runJob(plane, jobs.items[0]!);
      expect(labelRun.failed, labelRun.log).toBe(false);
    }

    const after = await specs();
    for (const host of before) {
      const now = after.find((candidate) => candidate.metadata.name === host.metadata.name);
      expect(stringify(now?.spec), host.metadata.name).toBe(stringify(host.spec));
    }
    const labelled = after.filter(
      (host) => host.metadata.labels?.["sip.airshipit.org/cluster-name"] === "tenant-a",
    );
    expect(labelled.map((host) => host.metadata.name).sort()).toEqual([
      "r01-node-01",
      "r01-node-02",
      "r01-node-03",
      "r02-node-01",
      "r02-node-02",
      "r03-node-01",
    ]);
  });
});
