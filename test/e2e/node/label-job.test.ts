/**
 * The SIPCluster's label Job (bmh-labels) run by a real kubelet under each GitOps agent (issue #37,
 * decision 0060): applied unchanged, it labels exactly the planned BareMetalHosts with the SIP labels
 * of their roles, and every write to a BareMetalHost is its ServiceAccount's, as kube-apiserver's
 * audit log records it; a host deleted since the inventory snapshot fails it the way it is designed
 * to (exit 3, the Job's podFailurePolicy fails the Job at once, without the retries backoffLimit
 * allows), naming the host, and the other hosts are labelled all the same.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { ensureNamespaces, installCrds, kubectlFor, must, type KubeObject } from "../support/kube.ts";
import { applySecret, build, objectsOf, renderNodeSite, type NodeSite } from "./support/site.ts";
import {
  AGENTS,
  applyAs,
  auditOffset,
  deleteNamespace,
  fluxInventory,
  hostWrites,
  jobOutcome,
  provideImages,
} from "./support/workloads.ts";

const info = inject("e2eNode");
const kubectl = kubectlFor(info.kubeconfig);
/** The sync options of the rendered ApplicationSet's template. */
const SYNC_OPTIONS = ["ApplyOutOfSyncOnly=true"];

describe("the label Job on a real node", () => {
  let site: NodeSite;
  let scratch: string;
  let sip: { namespace: string; name: string; serviceAccount: string };

  beforeAll(async () => {
    site = await renderNodeSite();
    scratch = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-node-labels-"));
    await installCrds(kubectl);
    const { sipNamespace, sipName } = site.values;
    sip = { namespace: sipNamespace, name: sipName, serviceAccount: `bmh-labels-${sipName}` };
  });
  afterAll(async () => {
    await deleteNamespace(kubectl, site.values.sipNamespace);
    await rm(site.dir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  /** Every host of the site registered afresh (no SIP labels), the cluster's namespace empty. */
  async function reset(): Promise<void> {
    await deleteNamespace(kubectl, sip.namespace);
    const namespace = site.values.hostNamespace;
    await ensureNamespaces(kubectl, [namespace, sip.namespace]);
    await must(kubectl, ["delete", "baremetalhosts,roles,rolebindings", "--all", "-n", namespace]);
    await must(kubectl, ["apply", "-f", "-"], site.hosts.map((host) => stringify(host)).join("---\n"));
    // The jump host's Deployment mounts the node SSH keys' Secret (not optional): an operator makes it.
    await applySecret(kubectl, sip.namespace, site.values.nodeSshPrivateKeys, {
      key: site.nodeKey.privateKey,
    });
  }

  /** The SIP labels each host has now. */
  async function sipLabels(): Promise<Map<string, Record<string, string>>> {
    const list = JSON.parse(
      await must(kubectl, ["get", "baremetalhosts", "-n", site.values.hostNamespace, "-o", "json"]),
    ) as { items: KubeObject[] };
    return new Map(
      list.items.map((host) => [
        host.metadata.name,
        Object.fromEntries(
          Object.entries(host.metadata.labels ?? {}).filter(
            ([label]) => label.startsWith("sip.airshipit.org/") || label === "metalsynth.io/cluster",
          ),
        ),
      ]),
    );
  }

  /** The labels the plan gives each host: SIP's for its role on the SIP hosts, none elsewhere. */
  function plannedLabels(except: readonly string[] = []): Map<string, Record<string, string>> {
    const labels = (role: string) => ({
      "metalsynth.io/cluster": sip.name,
      "sip.airshipit.org/cluster-namespace": sip.namespace,
      "sip.airshipit.org/cluster-name": sip.name,
      "sip.airshipit.org/node-type": role,
    });
    const { controlPlane, workers, master, worker } = site.values;
    return new Map([
      ...controlPlane.map(
        (host) => [host.name, except.includes(host.name) ? {} : labels("ControlPlane")] as const,
      ),
      ...workers.map((host) => [host.name, except.includes(host.name) ? {} : labels("Worker")] as const),
      ...[master, worker].map((host) => [host.name, {}] as const),
    ]);
  }

  /** Applies the SIPCluster's directory as `agent` does; the label Job's name and the sync's outcome. */
  async function sync(agent: (typeof AGENTS)[number]) {
    const manifests = await build(kubectl, site.sipDirectory);
    const objects = objectsOf(manifests);
    provideImages(info, objects);
    const job = objects.find(
      (object) => object.kind === "Job" && object.metadata.name.startsWith("bmh-labels-"),
    );
    expect(job, "the SIPCluster renders a label Job").toBeDefined();
    const app = {
      name: `${sip.namespace}-${sip.name}`,
      namespace: sip.namespace,
      syncOptions: SYNC_OPTIONS,
      fluxInventory: fluxInventory(scratch, agent),
    };
    const result = await applyAs(agent, info, app, manifests);
    return { job: job!.metadata.name, argo: result.argo };
  }

  for (const agent of AGENTS) {
    it(`${agent}: labels exactly the planned hosts, as its ServiceAccount`, async () => {
      await reset();
      const offset = auditOffset(info);
      const { job, argo } = await sync(agent);
      if (argo) {
        // A PostSync hook deleted once it succeeded (HookSucceeded): the engine saw it complete.
        expect(argo.phase, argo.message).toBe("Succeeded");
        const hook = argo.resources?.find((resource) => resource.kind === "Job" && resource.name === job);
        expect(hook?.hookPhase).toBe("Succeeded");
      } else {
        const outcome = await jobOutcome(kubectl, sip.namespace, job);
        expect(outcome.condition, outcome.logs).toBe("Complete");
      }
      expect(await sipLabels()).toEqual(plannedLabels());

      const writes = hostWrites(info, offset);
      const planned = [...site.values.controlPlane, ...site.values.workers].map(
        (host) => `${site.values.hostNamespace}/${host.name}`,
      );
      expect(new Set(writes.map((write) => write.user))).toEqual(
        new Set([`system:serviceaccount:${sip.namespace}:${sip.serviceAccount}`]),
      );
      expect(new Set(writes.map((write) => write.verb))).toEqual(new Set(["patch"]));
      expect(writes.every((write) => write.code === 200)).toBe(true);
      expect(new Set(writes.map((write) => write.host))).toEqual(new Set(planned));
    });

    it(`${agent}: a host deleted since the snapshot fails the Job at once, naming it; the rest are labelled`, async () => {
      await reset();
      const vanished = site.values.workers[1]!.name;
      await must(kubectl, ["delete", "baremetalhost", vanished, "-n", site.values.hostNamespace]);
      const { job, argo } = await sync(agent);
      const outcome = await jobOutcome(kubectl, sip.namespace, job);
      expect(outcome.condition).toBe("Failed");
      // Exit 3 matches the podFailurePolicy's FailJob rule: one pod, though backoffLimit allows retries.
      expect(outcome.reason).toBe("PodFailurePolicy");
      expect(outcome.pods).toBe(1);
      expect(outcome.logs).toContain(
        `BareMetalHost ${site.values.hostNamespace}/${vanished} not found: not labelled; deleted since the inventory snapshot?`,
      );
      const labels = plannedLabels([vanished]);
      labels.delete(vanished);
      expect(await sipLabels()).toEqual(labels);
      if (argo) {
        expect(argo.phase).toBe("Failed");
        const hook = argo.resources?.find((resource) => resource.kind === "Job" && resource.name === job);
        expect(hook?.hookType).toBe("PostSync");
        expect(hook?.hookPhase).toBe("Failed");
      }
    });
  }
});
