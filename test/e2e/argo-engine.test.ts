/**
 * How Argo CD's own sync engine (test/e2e/go-argo/argo-sync, decision 0046) treats a failing Job, on a
 * real API server: what the rendered Jobs and waves may count on. A failed Sync hook and a Degraded
 * Job that is no hook both end the sync Failed before the next wave; a failed PostSync hook ends it
 * Failed after every Sync-phase object was applied. Then the case issue #22 names: a BareMetalHost
 * deleted after the snapshot fails the label Job, and the cluster's wave 0 is never applied.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { argoSync, kustomize, startAgentPlane, type ArgoResourceResult } from "./support/agents.ts";
import type { ControlPlane } from "./support/control-plane.ts";
import { ensureNamespaces, must, readObjects, registrable, type Kubectl } from "./support/kube.ts";

/** A ConfigMap in `wave`. */
function configMap(namespace: string, name: string, wave: number): object {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, annotations: { "argocd.argoproj.io/sync-wave": String(wave) } },
    data: { wave: String(wave) },
  };
}

/** A Job whose one kubectl container succeeds, or fails reading a ConfigMap no one may read. */
function job(
  namespace: string,
  name: string,
  succeeds: boolean,
  annotations: Record<string, string>,
): object {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace, annotations },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: "Never",
          containers: [
            {
              name: "probe",
              image: "bitnami/kubectl",
              command: ["kubectl"],
              args: succeeds ? ["auth", "whoami"] : ["get", "configmap", "nobody-may-read-this"],
            },
          ],
        },
      },
    },
  };
}

function manifests(...objects: object[]): string {
  return objects.map((object) => stringify(object)).join("---\n");
}

function resultFor(results: readonly ArgoResourceResult[] | null, kind: string, name: string) {
  return results?.find((result) => result.kind === kind && result.name === name);
}

describe("Argo CD's sync engine and a failing Job", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;

  beforeAll(async () => {
    ({ plane, kubectl } = await startAgentPlane(inject("e2eBinDir")));
  });
  afterAll(async () => plane?.stop());

  async function exists(kind: string, namespace: string, name: string): Promise<boolean> {
    return (await kubectl(["get", kind, name, "-n", namespace])).code === 0;
  }

  const cases: {
    name: string;
    failing: Record<string, string>;
    hookType: string | undefined;
    sameWave: boolean;
    nextWave: boolean;
  }[] = [
    {
      name: "a failed Sync hook: the sync ends Failed, its own wave applied, the next wave never",
      failing: { "argocd.argoproj.io/hook": "Sync", "argocd.argoproj.io/sync-wave": "0" },
      hookType: "Sync",
      sameWave: true,
      nextWave: false,
    },
    {
      name: "a failed PostSync hook: the sync ends Failed after every Sync-phase wave was applied",
      failing: { "argocd.argoproj.io/hook": "PostSync" },
      hookType: "PostSync",
      sameWave: true,
      nextWave: true,
    },
    {
      name: "a Degraded Job that is no hook: the sync ends Failed, the next wave never applied",
      failing: { "argocd.argoproj.io/sync-wave": "0" },
      hookType: undefined,
      sameWave: true,
      nextWave: false,
    },
  ];
  for (const [index, probe] of cases.entries()) {
    it(probe.name, async () => {
      const namespace = `probe-${index}`;
      await ensureNamespaces(kubectl, [namespace]);
      const result = await argoSync(
        plane,
        { name: namespace, namespace, syncOptions: ["ApplyOutOfSyncOnly=true"] },
        manifests(
          configMap(namespace, "wave-0", 0),
          job(namespace, "fails", false, probe.failing),
          configMap(namespace, "wave-1", 1),
        ),
      );
      expect(result.phase, result.message).toBe("Failed");
      const failed = resultFor(result.resources, "Job", "fails");
      expect(failed?.hookType || undefined).toBe(probe.hookType);
      expect(failed?.hookPhase).toBe("Failed");
      expect(failed?.message).toContain("nobody-may-read-this");
      expect(await exists("configmap", namespace, "wave-0")).toBe(probe.sameWave);
      expect(await exists("configmap", namespace, "wave-1")).toBe(probe.nextWave);
    });
  }

  it("a succeeding Sync hook: the sync succeeds and the next wave is applied", async () => {
    const namespace = "probe-ok";
    await ensureNamespaces(kubectl, [namespace]);
    const result = await argoSync(
      plane,
      { name: namespace, namespace, syncOptions: ["ApplyOutOfSyncOnly=true"] },
      manifests(
        job(namespace, "succeeds", true, {
          "argocd.argoproj.io/hook": "Sync",
          "argocd.argoproj.io/sync-wave": "0",
        }),
        configMap(namespace, "wave-1", 1),
      ),
    );
    expect(result.phase, result.message).toBe("Succeeded");
    expect(resultFor(result.resources, "Job", "succeeds")?.hookPhase).toBe("Succeeded");
    expect(result.jobs?.map((run) => [run.name, run.ran, run.succeeded])).toEqual([["succeeds", true, true]]);
    expect(await exists("configmap", namespace, "wave-1")).toBe(true);
  });

  // Issue #22: the label Job, a PostSync hook (decision 0040), fails naming the missing host after
  // wave 0 is applied; as a Sync hook in wave -1 it kept wave 0 from being applied.
  it("a BareMetalHost deleted after the snapshot: the label Job fails naming it, wave 0 is applied", async () => {
    const example = path.join(REPO, "examples", "site");
    const hosts = (await readObjects(filesUnder(path.join(example, "inventory")))).filter(
      (object) => object.kind === "BareMetalHost",
    );
    await ensureNamespaces(kubectl, ["metal3", "edge-sip"]);
    await must(
      kubectl,
      ["apply", "-f", "-"],
      hosts.map((host) => stringify(registrable(host))).join("---\n"),
    );
    const vanished = "r01-node-02";
    await must(kubectl, ["delete", "baremetalhost", vanished, "-n", "metal3"]);

    const directory = path.join(example, "rendered", "clusters", "edge-sip", "tenant-a");
    const result = await argoSync(
      plane,
      { name: "edge-sip-tenant-a", namespace: "edge-sip", syncOptions: ["ApplyOutOfSyncOnly=true"] },
      await kustomize(plane, directory),
    );
    expect(result.phase, result.message).toBe("Failed");
    const labelJob = (result.resources ?? []).find(
      (resource) => resource.kind === "Job" && resource.name.startsWith("bmh-labels-tenant-a-"),
    );
    expect(labelJob?.hookType).toBe("PostSync");
    expect(labelJob?.hookPhase).toBe("Failed");
    expect(labelJob?.message).toContain(vanished);
    for (const wave0 of [
      "loadbalancer-controlplane-tenant-a",
      "loadbalancer-worker-tenant-a",
      "jumphost-tenant-a",
    ]) {
      expect(await exists("deployment", "edge-sip", wave0), wave0).toBe(true);
    }
    expect(await exists("baremetalhost", "metal3", vanished), "no agent creates a BareMetalHost").toBe(false);
  });
});
