/**
 * Issue #24's least privilege on a real API server: with deploy/metalsynth.yaml's RBAC installed, the
 * webhook's ServiceAccount — impersonated by the cluster admin (`kubectl --as`), as the API server
 * authorises the pod — reads a labelled networkData Secret in an inventory namespace and no Secret
 * anywhere else, writes nothing; and the webhook, run as that ServiceAccount with the Deployment's
 * `--secrets-namespace` arguments, still gets ready, reads networkData there and refuses a bad CR.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  installCrds,
  kubectlFor,
  must,
  readObjects,
  type Kubectl,
} from "./support/kube.ts";
import {
  applyUnknownMac,
  installWebhookRbac,
  inventoryNamespaces,
  loadInventory,
  registerWebhook,
  startWebhook,
  WEBHOOK_USER,
  type RunningWebhook,
} from "./support/webhook.ts";

const EXAMPLE = path.join(REPO, "examples", "site");
/** A namespace that holds no inventory: the webhook must not read its Secrets. */
const ELSEWHERE = "tenant-apps";

/** A Secret in `namespace`, labelled as networkData when `networkData`. */
function secret(name: string, namespace: string, networkData: boolean): string {
  return stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace,
      ...(networkData && { labels: { "metalsynth.io/network-data": "true" } }),
    },
    stringData: { networkData: JSON.stringify({ networks: [] }) },
  });
}

describe("the webhook's ServiceAccount reads Secrets in the inventory namespaces only", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  /** kubectl as the cluster admin impersonating the webhook's ServiceAccount. */
  let asWebhook: Kubectl;
  let inventory: string;
  let webhook: RunningWebhook | undefined;

  beforeAll(async () => {
    plane = await startControlPlane(inject("e2eBinDir"), { users: [WEBHOOK_USER] });
    kubectl = kubectlFor(plane.kubeconfig);
    // After the subcommand: the kubectl on this machine refuses global flags before it.
    asWebhook = (args, input) => kubectl([...args, `--as=${WEBHOOK_USER}`], input);
    await installCrds(kubectl);
    await installWebhookRbac(kubectl);
    [inventory = ""] = await inventoryNamespaces();
    await ensureNamespaces(kubectl, [ELSEWHERE, "edge-a", "edge-sip"]);
    await must(kubectl, ["apply", "-f", "-"], secret("probe-networkdata", inventory, true));
    await must(kubectl, ["apply", "-f", "-"], secret("probe-networkdata", ELSEWHERE, true));
    await must(kubectl, ["apply", "-f", "-"], secret("tenant-password", ELSEWHERE, false));
    await must(kubectl, ["apply", "-f", "-"], secret("apiserver-secret", "kube-system", false));
  });
  afterAll(async () => {
    await webhook?.stop();
    await plane?.stop();
  });

  it("deploy/metalsynth.yaml names an inventory namespace", () => {
    expect(inventory).toBe("metal3");
  });

  it("reads a labelled networkData Secret in the inventory namespace, listed by label as the informer does", async () => {
    const got = await asWebhook(["get", "secret", "probe-networkdata", "-n", inventory, "-o", "name"]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout.trim()).toBe("secret/probe-networkdata");
    const listed = await asWebhook([
      "get",
      "secrets",
      "-n",
      inventory,
      "-l",
      "metalsynth.io/network-data=true",
      "-o",
      "name",
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("secret/probe-networkdata");
    const watch = await asWebhook(["auth", "can-i", "watch", "secrets", "-n", inventory]);
    expect(watch.stdout.trim()).toBe("yes");
  });

  it("cannot read a Secret anywhere else, labelled or not, nor list Secrets cluster-wide", async () => {
    for (const [name, namespace] of [
      ["probe-networkdata", ELSEWHERE],
      ["tenant-password", ELSEWHERE],
      ["apiserver-secret", "kube-system"],
    ] as const) {
      const got = await asWebhook(["get", "secret", name, "-n", namespace]);
      expect(got.code, `${namespace}/${name}`).not.toBe(0);
      expect(got.stderr, `${namespace}/${name}`).toMatch(/forbidden/i);
      expect(got.stderr).toContain(`User "${WEBHOOK_USER}" cannot get resource "secrets"`);
    }
    const all = await asWebhook([
      "get",
      "secrets",
      "--all-namespaces",
      "-l",
      "metalsynth.io/network-data=true",
    ]);
    expect(all.code).not.toBe(0);
    expect(all.stderr).toMatch(/cannot list resource "secrets" .* at the cluster scope/);
    for (const verb of ["list", "watch"]) {
      const can = await asWebhook(["auth", "can-i", verb, "secrets", "--all-namespaces"]);
      expect(can.stdout.trim(), verb).toBe("no");
    }
  });

  it("writes nothing: no Secret, BareMetalHost or CR verb beyond get, list and watch", async () => {
    for (const [verb, resource, namespace] of [
      ["create", "secrets", inventory],
      ["update", "secrets", inventory],
      ["delete", "secrets", inventory],
      ["patch", "baremetalhosts.metal3.io", inventory],
      ["create", "provisionings.bpa.akraino.org", "edge-a"],
    ] as const) {
      const can = await asWebhook(["auth", "can-i", verb, resource, "-n", namespace]);
      expect(can.stdout.trim(), `${verb} ${resource}`).toBe("no");
    }
  });

  it("still works as that ServiceAccount: ready, networkData read, a bad CR refused", async () => {
    const objects = await readObjects(filesUnder(path.join(EXAMPLE, "inventory")));
    expect(new Set(objects.map((object) => object.metadata.namespace))).toEqual(new Set([inventory]));
    await loadInventory(kubectl, objects);
    // startWebhook runs it with the kubeconfig of the ServiceAccount and the Deployment's
    // --secrets-namespace arguments; it resolves once /readyz is 200, i.e. every list succeeded.
    webhook = await startWebhook(plane);
    await registerWebhook(kubectl, webhook);
    const refused = await applyUnknownMac(kubectl);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('admission webhook "provisioning.metalsynth.io" denied the request: ');
    // The example site's CRs, SIP services among them, need the inventory namespace's networkData.
    const admitted = await kubectl(["apply", "-R", "-f", path.join(EXAMPLE, "specs")]);
    expect(admitted.code, admitted.stderr).toBe(0);
    expect(webhook.output()).not.toMatch(/forbidden/i);
  });
});
