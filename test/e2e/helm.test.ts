/**
 * The Helm chart (helm/metalsynth/, generated from the cdk8s chart by `npm run manifests`) with a real
 * helm built from its Go module (test/e2e/setup.sh): `helm lint`; `helm template` with the default
 * values renders exactly deploy/metalsynth.yaml's objects, and with other values what the cdk8s chart
 * renders for the same options; `helm install` on the e2e API server creates every object; the
 * webhook, run from this clone as the installed ServiceAccount with the installed Deployment's
 * arguments, behind the installed ValidatingWebhookConfiguration (its Service reference replaced by
 * the local process's URL and CA: no kubelet or kube-proxy runs here), refuses a bad CR through
 * `kubectl apply`; `helm upgrade` with changed values changes what they say; `helm uninstall` leaves
 * no object of the chart (its CRDs stay, as Helm keeps every chart's crds/).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { webhookManifests } from "../../charts/webhook/index.ts";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  exec,
  kubectlFor,
  METAL3_CRDS,
  must,
  readObjects,
  type KubeObject,
  type Kubectl,
  type Result,
} from "./support/kube.ts";
import {
  applyUnknownMac,
  deployObjects,
  loadInventory,
  startWebhook,
  WEBHOOK_USER,
  type RunningWebhook,
} from "./support/webhook.ts";

const CHART = path.join(REPO, "helm", "metalsynth");
const RELEASE = "metalsynth";
const LABEL = "app.kubernetes.io/part-of=metalsynth";
/** Every kind the chart can make, for `kubectl get` of whatever is left. */
const KINDS_OF_THE_CHART = [
  "namespaces",
  "serviceaccounts",
  "services",
  "deployments.apps",
  "poddisruptionbudgets.policy",
  "networkpolicies.networking.k8s.io",
  "roles.rbac.authorization.k8s.io",
  "rolebindings.rbac.authorization.k8s.io",
  "clusterroles.rbac.authorization.k8s.io",
  "clusterrolebindings.rbac.authorization.k8s.io",
  "validatingwebhookconfigurations.admissionregistration.k8s.io",
  "issuers.cert-manager.io",
  "certificates.cert-manager.io",
  "servicemonitors.monitoring.coreos.com",
].join(",");

/** Objects of a YAML stream, empty documents (Helm leaves some) dropped. */
function parseStream(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null && typeof object === "object");
}

/** `kind namespace/name` → object, to compare streams whatever their order (Helm sorts by kind). */
function byIdentity(objects: readonly KubeObject[]): Record<string, KubeObject> {
  return Object.fromEntries(
    objects.map((object) => [
      `${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`,
      object,
    ]),
  );
}

describe("the Helm chart, with a real helm", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let helmHome: string;
  let webhook: RunningWebhook | undefined;
  const helm = (args: readonly string[]): Promise<Result> =>
    exec(path.join(inject("e2eBinDir"), "helm"), args, {
      env: {
        ...process.env,
        KUBECONFIG: plane.kubeconfig,
        HELM_CACHE_HOME: path.join(helmHome, "cache"),
        HELM_CONFIG_HOME: path.join(helmHome, "config"),
        HELM_DATA_HOME: path.join(helmHome, "data"),
      },
    });
  const mustHelm = async (args: readonly string[]): Promise<string> => {
    const result = await helm(args);
    if (result.code !== 0) throw new Error(`helm ${args.join(" ")}: ${result.stderr}`);
    return result.stdout;
  };
  const template = async (...values: string[]) =>
    parseStream(await mustHelm(["template", RELEASE, CHART, "--include-crds", ...values]));

  beforeAll(async () => {
    helmHome = await mkdtemp(path.join(tmpdir(), "metalsynth-helm-"));
    plane = await startControlPlane(inject("e2eBinDir"), { users: [WEBHOOK_USER] });
    kubectl = kubectlFor(plane.kubeconfig);
    // Metal3's CRDs (the webhook lists BareMetalHosts), and cert-manager's and prometheus-operator's
    // as stand-ins (no controller runs here); metalsynth's own are the chart's to install.
    for (const file of [...METAL3_CRDS, path.join(REPO, "test", "e2e", "fixtures", "operator-crds.yaml")]) {
      await must(kubectl, ["apply", "--server-side", "-f", file]);
    }
    await must(kubectl, ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
    await ensureNamespaces(kubectl, ["metal3", "site-b", "edge-a", "edge-sip"]);
  });
  afterAll(async () => {
    await webhook?.stop();
    await plane?.stop();
    if (helmHome) await rm(helmHome, { recursive: true, force: true });
  });

  it("passes helm lint; values of the wrong shape, or no CA bundle without cert-manager, are refused", async () => {
    const lint = await helm(["lint", CHART]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    expect(lint.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    // Lint renders `required` as a warning: template refuses.
    const noCa = await helm(["template", RELEASE, CHART, "--set", "certManager.enabled=false"]);
    expect(noCa.code).not.toBe(0);
    expect(noCa.stdout + noCa.stderr).toMatch(/caBundle: the PEM CA bundle/);
    const noReplicas = await helm(["lint", CHART, "--set", "replicas=0"]);
    expect(noReplicas.code).not.toBe(0);
    const badNamespace = await helm(["lint", CHART, "--set", "inventoryNamespaces={Not_A_Namespace}"]);
    expect(badNamespace.code).not.toBe(0);
  });

  it("renders deploy/metalsynth.yaml's objects with the default values", async () => {
    const rendered = await template();
    const deployed = await deployObjects();
    expect(rendered.length).toBe(deployed.length);
    expect(byIdentity(rendered)).toEqual(byIdentity(deployed));
  });

  it("renders what the cdk8s chart renders for the same options, and the Helm-only values", async () => {
    const rendered = await template(
      "--set",
      "namespace=bare-metal",
      "--set",
      "image=registry.example/metalsynth:1.2.3",
      "--set",
      "inventoryNamespaces={metal3,site-b}",
      "--set",
      "serviceMonitor.enabled=true",
      "--set",
      "networkPolicy.enabled=false",
      "--set",
      "priorityClassName=",
    );
    const expected = webhookManifests({
      namespace: "bare-metal",
      image: "registry.example/metalsynth:1.2.3",
      inventoryNamespaces: ["metal3", "site-b"],
      serviceMonitor: true,
      networkPolicy: false,
      priorityClassName: null,
    }) as KubeObject[];
    expect(byIdentity(rendered)).toEqual(byIdentity(expected));

    const tuned = await template(
      "--set",
      "replicas=3",
      "--set",
      "resources.limits.memory=2Gi",
      "--set-json",
      'nodeSelector={"node-role.kubernetes.io/control-plane":""}',
      "--set-json",
      'tolerations=[{"key":"node-role.kubernetes.io/control-plane","operator":"Exists","effect":"NoSchedule"}]',
      "--set",
      "certManager.enabled=false",
      "--set",
      "caBundle=Q0E=",
    );
    const deployment = tuned.find(
      (object) => object.kind === "Deployment" && object.metadata.name === "metalsynth-webhook",
    ) as KubeObject & {
      spec: { replicas: number; template: { spec: Record<string, unknown> & { containers: KubeObject[] } } };
    };
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.template.spec.containers[0]?.resources).toEqual({
      limits: { cpu: "2", memory: "2Gi" },
      // The chart's requests by the bench's formula (decision 0056).
      requests: { cpu: "200m", memory: "448Mi" },
    });
    expect(deployment.spec.template.spec.nodeSelector).toEqual({
      "node-role.kubernetes.io/control-plane": "",
    });
    expect(deployment.spec.template.spec.tolerations).toEqual([
      { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
    ]);
    expect(tuned.map((object) => object.kind)).not.toContain("Certificate");
    const configuration = tuned.find(
      (object) => object.kind === "ValidatingWebhookConfiguration",
    ) as KubeObject & {
      webhooks: { clientConfig: { caBundle?: string } }[];
    };
    expect(configuration.metadata.annotations).toBeUndefined();
    for (const entry of configuration.webhooks) expect(entry.clientConfig.caBundle).toBe("Q0E=");

    // The status reporter (decision 0059): its resources of its own, or left out altogether.
    const reporter = (await template("--set", "status.resources.limits.memory=3Gi")).find(
      (object) => object.kind === "Deployment" && object.metadata.name === "metalsynth-status",
    ) as KubeObject & { spec: { template: { spec: { containers: KubeObject[] } } } };
    expect(reporter.spec.template.spec.containers[0]?.resources).toEqual({
      limits: { cpu: "1", memory: "3Gi" },
      requests: { cpu: "100m", memory: "256Mi" },
    });
    const without = await template("--set", "status.enabled=false");
    expect(without.filter((object) => object.metadata.name.startsWith("metalsynth-status"))).toEqual([]);
    expect(without.map((object) => object.kind)).toContain("Deployment");
  });

  it("installs every object on the API server", async () => {
    await mustHelm(["install", RELEASE, CHART, "--namespace", "default"]);
    const manifest = parseStream(await mustHelm(["get", "manifest", RELEASE, "--namespace", "default"]));
    const crds = (await template()).filter((object) => object.kind === "CustomResourceDefinition");
    expect(manifest.length + crds.length).toBe((await deployObjects()).length);
    for (const object of [...manifest, ...crds]) {
      const namespace = object.metadata.namespace ? ["-n", object.metadata.namespace] : [];
      const got = await kubectl(["get", object.kind, object.metadata.name, ...namespace, "-o", "name"]);
      expect(got.code, `${object.kind} ${object.metadata.name}: ${got.stderr}`).toBe(0);
    }
  });

  it("upgrades with changed values: a second inventory namespace, a ServiceMonitor, no NetworkPolicy, 3 replicas", async () => {
    await mustHelm([
      "upgrade",
      RELEASE,
      CHART,
      "--namespace",
      "default",
      "--set",
      "inventoryNamespaces={metal3,site-b}",
      "--set",
      "serviceMonitor.enabled=true",
      "--set",
      "networkPolicy.enabled=false",
      "--set",
      "replicas=3",
    ]);
    const get = (...args: string[]) => kubectl(["get", ...args, "-o", "name"]);
    expect((await get("role", "metalsynth-webhook-secrets", "-n", "site-b")).code).toBe(0);
    expect((await get("rolebinding", "metalsynth-webhook-secrets", "-n", "site-b")).code).toBe(0);
    expect((await get("servicemonitor", "metalsynth-webhook", "-n", "metalsynth-system")).code).toBe(0);
    expect((await get("networkpolicy", "metalsynth-webhook", "-n", "metalsynth-system")).stderr).toMatch(
      /NotFound/,
    );
    const deployment = JSON.parse(
      await must(kubectl, [
        "get",
        "deployment",
        "metalsynth-webhook",
        "-n",
        "metalsynth-system",
        "-o",
        "json",
      ]),
    ) as { spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } } };
    expect(deployment.spec.replicas).toBe(3);
    // The inventory namespaces' Secrets, whatever arguments follow them (Allocation trust, decision 0056).
    const args = deployment.spec.template.spec.containers[0]?.args.join(" ") ?? "";
    expect(args).toContain("--secrets-namespace metal3 --secrets-namespace site-b");
  });

  it("runs the webhook as the installed ServiceAccount behind the installed configuration: a bad CR is refused", async () => {
    await loadInventory(
      kubectl,
      await readObjects(filesUnder(path.join(REPO, "examples", "site", "inventory"))),
    );
    webhook = await startWebhook(plane);
    // The installed configuration, its Service reference replaced by the local process (no kube-proxy
    // routes a Service here) and cert-manager's injection by the test CA.
    const installed = JSON.parse(
      await must(kubectl, ["get", "validatingwebhookconfiguration", "metalsynth-webhook", "-o", "json"]),
    ) as KubeObject & { webhooks: { clientConfig: { service: { path: string } } }[] };
    const port = webhook.port;
    const caBundle = Buffer.from(webhook.ca.cert).toString("base64");
    const pointed = {
      ...installed,
      webhooks: installed.webhooks.map((entry) => ({
        ...entry,
        clientConfig: { url: `https://127.0.0.1:${port}${entry.clientConfig.service.path}`, caBundle },
      })),
    };
    await must(kubectl, ["replace", "-f", "-"], stringify(pointed));
    const refused = await applyUnknownMac(kubectl);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'admission webhook "provisioning.metalsynth.io" denied the request: spec.masters[0].master-1.mac-address: b8:ce:f6:79:e4:c0 matches no BareMetalHost',
    );
  });

  it("uninstalls without a stray object; the CRDs stay, as Helm keeps crds/", async () => {
    await mustHelm(["uninstall", RELEASE, "--namespace", "default"]);
    const left = await must(kubectl, [
      "get",
      KINDS_OF_THE_CHART,
      "--all-namespaces",
      "-l",
      LABEL,
      "-o",
      "json",
    ]);
    const objects = (JSON.parse(left) as { items: KubeObject[] }).items;
    // No namespace controller runs here: the deleted Namespace stays Terminating, with nothing in it.
    const stray = objects.filter(
      (object) =>
        !(
          object.kind === "Namespace" &&
          (object.status as { phase?: string } | undefined)?.phase === "Terminating"
        ),
    );
    expect(
      stray.map((object) => `${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`),
    ).toEqual([]);
    expect((await helm(["status", RELEASE, "--namespace", "default"])).code).not.toBe(0);
    const crds = await must(kubectl, ["get", "crd", "-l", LABEL, "-o", "name"]);
    expect(crds.trim().split("\n").sort()).toEqual(
      (await deployObjects())
        .filter((object) => object.kind === "CustomResourceDefinition")
        .map((object) => `customresourcedefinition.apiextensions.k8s.io/${object.metadata.name}`)
        .sort(),
    );
  });
});
