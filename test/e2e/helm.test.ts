/**
 * The Helm chart (helm/metalsynth/, generated from the cdk8s chart by `npm run manifests`) with a real
 * helm built from its Go module (test/e2e/setup.sh): `helm lint --strict`; `helm template` as release
 * `metalsynth` in `metalsynth-system` with the default values renders exactly deploy/metalsynth.yaml's
 * objects but its Namespace, Helm's labels aside, and with other values what the cdk8s chart renders
 * for the same options; every value users set on charts. On the e2e API server, the README's blocks
 * as written: the install with `-n X --create-namespace` (from the previous chart, whose Provisioning
 * CRD had no printer columns), the upgrade that applies the CRDs first (a `helm upgrade` alone keeps
 * them old), a second release in another namespace, the chart as a subchart of an umbrella chart.
 * Then `helm upgrade` with changed values; the webhook, run from this clone as the installed
 * ServiceAccount with the installed Deployment's arguments, behind the installed
 * ValidatingWebhookConfiguration (its Service reference replaced by the local process's URL and CA:
 * no kubelet or kube-proxy runs here), refuses a bad CR through `kubectl apply`; the `helm test`
 * pod's program, run here as its container would run, gets a refusal from it; `helm uninstall`
 * leaves no object of the chart (its CRDs stay, as Helm keeps every chart's crds/).
 */
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { webhookManifests } from "../../charts/webhook/index.ts";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  eventually,
  exec,
  kubectlEnvironment,
  kubectlFor,
  METAL3_CRDS,
  must,
  readObjects,
  type KubeObject,
  type Kubectl,
  type Result,
} from "./support/kube.ts";
import { readmeBlock } from "./support/readme.ts";
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
const NAMESPACE = "metalsynth-system";
const LABEL = "app.kubernetes.io/part-of=metalsynth";
const PROVISIONINGS = "provisionings.bpa.akraino.org";
/** The `helm test` pod's ServiceAccount, as the API server knows it here (by a static token). */
const TEST_USER = `system:serviceaccount:${NAMESPACE}:metalsynth-test`;
/** Every kind the chart can make, for `kubectl get` of whatever is left. */
const KINDS_OF_THE_CHART = [
  "serviceaccounts",
  "services",
  "configmaps",
  "resourcequotas",
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
/** The labels Helm's charts put on every object, which deploy/metalsynth.yaml has not. */
const HELM_LABELS = ["helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/version"];

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

/**
 * `value` as deploy/metalsynth.yaml labels it: Helm's labels gone from labels and selectors, and
 * `app.kubernetes.io/managed-by` metalsynth's rather than Helm's.
 */
function withoutHelmLabels<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => withoutHelmLabels(item)) as T;
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !HELM_LABELS.includes(key))
      .map(([key, child]: [string, unknown]) => [
        key,
        key === "app.kubernetes.io/managed-by" && child === "Helm" ? "metalsynth" : withoutHelmLabels(child),
      ]),
  ) as T;
}

/** The objects of `objects` but the Namespace, which the chart leaves to `--create-namespace`. */
const withoutNamespace = (objects: readonly KubeObject[]) =>
  objects.filter((object) => object.kind !== "Namespace");

type Pod = {
  spec: {
    template: {
      metadata: KubeObject["metadata"];
      spec: Record<string, unknown> & { containers: (KubeObject & { args: string[] })[] };
    };
  };
};
const find = (objects: readonly KubeObject[], kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found)
    throw new Error(`no ${kind} ${name} in ${objects.map((object) => object.metadata.name).join(", ")}`);
  return found;
};

describe("the Helm chart, with a real helm", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let helmHome: string;
  let webhook: RunningWebhook | undefined;
  const helmEnvironment = (): NodeJS.ProcessEnv => ({
    ...kubectlEnvironment(plane.kubeconfig),
    PATH: `${inject("e2eBinDir")}:${process.env.PATH ?? ""}`,
    HELM_CACHE_HOME: path.join(helmHome, "cache"),
    HELM_CONFIG_HOME: path.join(helmHome, "config"),
    HELM_DATA_HOME: path.join(helmHome, "data"),
  });
  const helm = (args: readonly string[]): Promise<Result> =>
    exec(path.join(inject("e2eBinDir"), "helm"), args, { env: helmEnvironment() });
  const mustHelm = async (args: readonly string[]): Promise<string> => {
    const result = await helm(args);
    if (result.code !== 0) throw new Error(`helm ${args.join(" ")}: ${result.stderr}`);
    return result.stdout;
  };
  const template = async (...values: string[]) =>
    parseStream(
      await mustHelm([
        "template",
        RELEASE,
        CHART,
        "--namespace",
        NAMESPACE,
        "--include-crds",
        // The `helm test` hook's objects are no release's.
        "--skip-tests",
        ...values,
      ]),
    );
  /**
   * README.md's block `name`, run with bash as written in `directory`, whose helm/ is `chart`'s
   * parent (the README's lines name ./helm/metalsynth): the user's clone, or the previous chart's.
   */
  const runReadme = async (name: string, chart: string = CHART) => {
    const directory = await mkdtemp(path.join(helmHome, "clone-"));
    await symlink(path.dirname(chart), path.join(directory, "helm"));
    const { script } = await readmeBlock(name);
    const result = await exec("bash", ["-euo", "pipefail", "-c", script], {
      cwd: directory,
      env: helmEnvironment(),
    });
    expect(result.code, `README block ${name}:\n${result.stdout}${result.stderr}`).toBe(0);
    return result.stdout;
  };
  /** Every object of `release`'s manifest exists on the API server; resolves to the manifest. */
  const installed = async (release: string, namespace: string) => {
    const manifest = parseStream(await mustHelm(["get", "manifest", release, "--namespace", namespace]));
    for (const object of manifest) {
      const where = object.metadata.namespace ? ["-n", object.metadata.namespace] : [];
      const got = await kubectl(["get", object.kind, object.metadata.name, ...where, "-o", "name"]);
      expect(got.code, `${object.kind} ${object.metadata.name}: ${got.stderr}`).toBe(0);
    }
    return manifest;
  };
  const printerColumns = async () =>
    (
      JSON.parse(await must(kubectl, ["get", "crd", PROVISIONINGS, "-o", "json"])) as {
        spec: { versions: { additionalPrinterColumns?: unknown[] }[] };
      }
    ).spec.versions[0]?.additionalPrinterColumns ?? [];

  beforeAll(async () => {
    helmHome = await mkdtemp(path.join(tmpdir(), "metalsynth-helm-"));
    plane = await startControlPlane(inject("e2eBinDir"), { users: [WEBHOOK_USER, TEST_USER] });
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

  it("passes helm lint --strict; values of the wrong shape, or no CA bundle without cert-manager, are refused", async () => {
    const lint = await helm(["lint", "--strict", CHART]);
    expect(lint.code, lint.stdout + lint.stderr).toBe(0);
    expect(lint.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    // Lint renders `required` as a warning: template refuses.
    const noCa = await helm(["template", RELEASE, CHART, "--set", "certManager.enabled=false"]);
    expect(noCa.code).not.toBe(0);
    expect(noCa.stdout + noCa.stderr).toMatch(/caBundle: the PEM CA bundle/);
    for (const wrong of [
      "replicas=0",
      "inventoryNamespaces={Not_A_Namespace}",
      "webhook.failurePolicy=Sometimes",
      "webhook.timeoutSeconds=31",
      "imageTag=1.2.3",
      "image=metalsynth:1.2.3",
      "namespace=elsewhere",
    ]) {
      const refused = await helm(["lint", CHART, "--set", wrong]);
      expect(refused.code, wrong).not.toBe(0);
    }
    // The chart's kubeVersion: older API servers are refused before anything is installed.
    const old = await helm(["template", RELEASE, CHART, "--kube-version", "1.26.0"]);
    expect(old.stderr).toMatch(
      /chart requires kubeVersion: >=1\.27\.0-0 which is incompatible with Kubernetes v1\.26\.0/,
    );
  });

  it("renders deploy/metalsynth.yaml's objects but its Namespace, with Helm's labels, as release metalsynth in metalsynth-system", async () => {
    const rendered = await template();
    for (const object of rendered.filter((candidate) => candidate.kind !== "CustomResourceDefinition")) {
      expect(object.metadata.labels, `${object.kind} ${object.metadata.name}`).toMatchObject({
        "helm.sh/chart": "metalsynth-0.1.0",
        "app.kubernetes.io/instance": RELEASE,
        "app.kubernetes.io/version": "0.1.0",
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/part-of": "metalsynth",
      });
    }
    const deployment = find(rendered, "Deployment", "metalsynth-webhook") as KubeObject &
      Pod & { spec: { selector: unknown } };
    expect(deployment.spec.selector).toEqual({
      matchLabels: { "app.kubernetes.io/name": "metalsynth-webhook", "app.kubernetes.io/instance": RELEASE },
    });
    const deployed = withoutNamespace(await deployObjects());
    expect(rendered.length).toBe(deployed.length);
    expect(byIdentity(withoutHelmLabels(rendered))).toEqual(byIdentity(deployed));
  });

  it("renders what the cdk8s chart renders for the same options", async () => {
    const rendered = parseStream(
      await mustHelm([
        "template",
        RELEASE,
        CHART,
        "--include-crds",
        "--skip-tests",
        "--namespace",
        "bare-metal",
        "--set",
        "image.repository=registry.example/metalsynth",
        "--set",
        "image.tag=1.2.3",
        "--set",
        "inventoryNamespaces={metal3,site-b}",
        "--set",
        "serviceMonitor.enabled=true",
        "--set",
        "networkPolicy.enabled=false",
        "--set",
        "priorityClassName=",
      ]),
    );
    const expected = webhookManifests({
      namespace: "bare-metal",
      image: "registry.example/metalsynth:1.2.3",
      inventoryNamespaces: ["metal3", "site-b"],
      serviceMonitor: true,
      networkPolicy: false,
      priorityClassName: null,
    }) as KubeObject[];
    expect(byIdentity(withoutHelmLabels(rendered))).toEqual(byIdentity(withoutNamespace(expected)));
  });

  it("takes the values users set on every chart", async () => {
    const tuned = await template(
      "--set",
      "replicas=3",
      "--set",
      "resources.limits.memory=2Gi",
      "--set-json",
      'nodeSelector={"node-role.kubernetes.io/control-plane":""}',
      "--set-json",
      'tolerations=[{"key":"node-role.kubernetes.io/control-plane","operator":"Exists","effect":"NoSchedule"}]',
      "--set-json",
      'affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"edge","operator":"Exists"}]}]}}}',
      "--set-json",
      'imagePullSecrets=[{"name":"regcred"}]',
      "--set",
      "podAnnotations.team=metal",
      "--set-json",
      'extraArgs=["--review-workers","4"]',
      "--set",
      "status.extraArgs={--verbose}",
      "--set",
      "image.pullPolicy=Always",
      "--set",
      "webhook.failurePolicy=Ignore",
      "--set",
      "webhook.timeoutSeconds=10",
      "--set",
      "podDisruptionBudget.minAvailable=2",
      "--set",
      "fullnameOverride=bm",
      "--set",
      "certManager.enabled=false",
      "--set",
      "caBundle=Q0E=",
      // What an umbrella chart passes its subcharts.
      "--set",
      "global.imageRegistry=registry.example",
      "--set",
      "enabled=true",
    );
    const deployment = find(tuned, "Deployment", "bm-webhook") as KubeObject &
      Pod & { spec: { replicas: number } };
    const pod = deployment.spec.template.spec;
    expect(deployment.spec.replicas).toBe(3);
    expect(pod.containers[0]?.resources).toEqual({
      limits: { cpu: "2", memory: "2Gi" },
      // The chart's requests by the bench's formula (decision 0056).
      requests: { cpu: "200m", memory: "448Mi" },
    });
    expect(pod.containers[0]?.imagePullPolicy).toBe("Always");
    expect(pod.containers[0]?.args.slice(-2)).toEqual(["--review-workers", "4"]);
    expect(pod.nodeSelector).toEqual({ "node-role.kubernetes.io/control-plane": "" });
    expect(pod.tolerations).toEqual([
      { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
    ]);
    expect(pod.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(pod.affinity).toMatchObject({ nodeAffinity: {} });
    expect(pod.serviceAccountName).toBe("bm-webhook");
    expect(deployment.spec.template.metadata.annotations).toEqual({ team: "metal" });
    const reporter = find(tuned, "Deployment", "bm-status") as KubeObject & Pod;
    expect(reporter.spec.template.spec.containers[0]?.args.at(-1)).toBe("--verbose");
    expect(reporter.spec.template.spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(find(tuned, "PodDisruptionBudget", "bm-webhook").spec).toMatchObject({ minAvailable: 2 });
    expect(tuned.map((object) => object.kind)).not.toContain("Certificate");
    const configuration = find(tuned, "ValidatingWebhookConfiguration", "bm-webhook") as KubeObject & {
      webhooks: {
        failurePolicy: string;
        timeoutSeconds: number;
        clientConfig: { caBundle?: string; service: { name: string } };
      }[];
    };
    expect(configuration.metadata.annotations).toBeUndefined();
    for (const entry of configuration.webhooks) {
      expect(entry.clientConfig.caBundle).toBe("Q0E=");
      expect(entry.clientConfig.service.name).toBe("bm-webhook");
      expect(entry).toMatchObject({ failurePolicy: "Ignore", timeoutSeconds: 10 });
    }

    // The PodDisruptionBudget follows the replicas: one at a time by default, none for one replica.
    const budget = (...values: string[]) =>
      template(...values).then((objects) =>
        objects.filter((object) => object.kind === "PodDisruptionBudget"),
      );
    expect((await budget()).map((object) => object.spec)).toEqual([
      {
        maxUnavailable: 1,
        selector: {
          matchLabels: {
            "app.kubernetes.io/name": "metalsynth-webhook",
            "app.kubernetes.io/instance": RELEASE,
          },
        },
      },
    ]);
    expect(await budget("--set", "replicas=1")).toEqual([]);
    // The ResourceQuota follows the priority class.
    const quota = (...values: string[]) =>
      template(...values).then((objects) => objects.filter((object) => object.kind === "ResourceQuota"));
    expect(
      (await quota("--set", "priorityClassName=platform-high", "--set", "resourceQuota.pods=7")).map(
        (object) => object.spec,
      ),
    ).toEqual([
      {
        hard: { pods: "7" },
        scopeSelector: {
          matchExpressions: [{ operator: "In", scopeName: "PriorityClass", values: ["platform-high"] }],
        },
      },
    ]);
    expect(await quota("--set", "priorityClassName=")).toEqual([]);
    expect(await quota("--set", "resourceQuota.enabled=false")).toEqual([]);

    // The status reporter (decision 0059): its resources of its own, or left out altogether.
    const status = find(
      await template("--set", "status.resources.limits.memory=3Gi"),
      "Deployment",
      "metalsynth-status",
    ) as KubeObject & Pod;
    expect(status.spec.template.spec.containers[0]?.resources).toEqual({
      limits: { cpu: "1", memory: "3Gi" },
      requests: { cpu: "100m", memory: "256Mi" },
    });
    const without = await template("--set", "status.enabled=false");
    expect(without.filter((object) => object.metadata.name.startsWith("metalsynth-status"))).toEqual([]);
    expect(without.map((object) => object.kind)).toContain("Deployment");
  });

  it("installs as the README says with -n X --create-namespace (the previous chart), and upgrades as it says: the CRDs applied first", async () => {
    // The previous release: this chart at 0.0.9, whose Provisioning CRD had no printer columns yet.
    const previous = path.join(await mkdtemp(path.join(helmHome, "previous-")), "metalsynth");
    await cp(CHART, previous, { recursive: true });
    const chartFile = path.join(previous, "Chart.yaml");
    await writeFile(
      chartFile,
      (await readFile(chartFile, "utf8")).replace(/^version: .*$/m, "version: 0.0.9"),
    );
    const crdFile = path.join(previous, "crds", `${PROVISIONINGS}.yaml`);
    const crd = parse(await readFile(crdFile, "utf8")) as { spec: { versions: Record<string, unknown>[] } };
    for (const version of crd.spec.versions) delete version.additionalPrinterColumns;
    await writeFile(crdFile, stringify(crd));

    await runReadme("helm-install", previous);
    await installed(RELEASE, NAMESPACE);
    expect(await printerColumns()).toEqual([]);
    expect(
      JSON.parse(await must(kubectl, ["get", "namespace", NAMESPACE, "-o", "json"])).metadata.labels,
    ).toMatchObject({ "pod-security.kubernetes.io/enforce": "restricted" });

    // Helm never upgrades crds/: an upgrade alone keeps the previous CRD.
    await mustHelm(["upgrade", RELEASE, previous, "--namespace", NAMESPACE]);
    expect(await printerColumns()).toEqual([]);

    await runReadme("helm-upgrade");
    expect((await printerColumns()).length).toBeGreaterThan(0);
    const manifest = await installed(RELEASE, NAMESPACE);
    expect(manifest.length).toBe(
      (await template()).filter((object) => object.kind !== "CustomResourceDefinition").length,
    );
    const labels = find(manifest, "Deployment", "metalsynth-webhook").metadata.labels;
    expect(labels?.["helm.sh/chart"]).toBe("metalsynth-0.1.0");
  });

  it("upgrades with changed values: a second inventory namespace, a ServiceMonitor, no NetworkPolicy, 3 replicas", async () => {
    await mustHelm([
      "upgrade",
      RELEASE,
      CHART,
      "--namespace",
      NAMESPACE,
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
    expect((await get("servicemonitor", "metalsynth-webhook", "-n", NAMESPACE)).code).toBe(0);
    expect((await get("networkpolicy", "metalsynth-webhook", "-n", NAMESPACE)).stderr).toMatch(/NotFound/);
    const deployment = JSON.parse(
      await must(kubectl, ["get", "deployment", "metalsynth-webhook", "-n", NAMESPACE, "-o", "json"]),
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
    const configuration = JSON.parse(
      await must(kubectl, ["get", "validatingwebhookconfiguration", "metalsynth-webhook", "-o", "json"]),
    ) as KubeObject & { webhooks: { clientConfig: { service: { path: string } } }[] };
    const port = webhook.port;
    const caBundle = Buffer.from(webhook.ca.cert).toString("base64");
    const pointed = {
      ...configuration,
      webhooks: configuration.webhooks.map((entry) => ({
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

  it("helm test: its pod, its program run here as the kubelet would run it, passes on the webhook's refusal and fails without it", async () => {
    // The kubelet's part, which no kubelet plays here: the pod's program with the pod's environment,
    // as its ServiceAccount (token and CA where a pod has them), the API server at its address.
    const account = await mkdtemp(path.join(helmHome, "account-"));
    const kubeconfig = parse(await readFile(plane.kubeconfigFor(TEST_USER), "utf8")) as {
      clusters: { cluster: { "certificate-authority": string } }[];
      users: { user: { token: string } }[];
    };
    await cp(kubeconfig.clusters[0]?.cluster["certificate-authority"] ?? "", path.join(account, "ca.crt"));
    await writeFile(path.join(account, "token"), kubeconfig.users[0]?.user.token ?? "");
    const server = new URL(plane.server);
    const runPod = async (
      pod: KubeObject & {
        spec: { containers: { command: string[]; env: { name: string; value: string }[] }[] };
      },
    ) => {
      const [container] = pod.spec.containers;
      const [, ...args] = container?.command ?? [];
      return exec(process.execPath, args, {
        env: {
          ...Object.fromEntries((container?.env ?? []).map((variable) => [variable.name, variable.value])),
          KUBERNETES_SERVICE_HOST: server.hostname,
          KUBERNETES_SERVICE_PORT: server.port,
          SERVICE_ACCOUNT_DIR: account,
        },
      });
    };

    const testing = helm(["test", RELEASE, "--namespace", NAMESPACE, "--timeout", "100s"]);
    let found: Result | undefined;
    await eventually(
      async () =>
        (found = await kubectl(["get", "pod", "metalsynth-test", "-n", NAMESPACE, "-o", "json"])).code === 0,
      60_000,
      "helm test creates its pod",
    );
    const pod = JSON.parse(found?.stdout ?? "") as Parameters<typeof runPod>[0];
    const run = await runPod(pod);
    expect(run.stdout + run.stderr).toContain("the webhook refused a Provisioning naming an unknown MAC");
    expect(run.code).toBe(0);
    await must(kubectl, [
      "patch",
      "pod",
      "metalsynth-test",
      "-n",
      NAMESPACE,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status: { phase: "Succeeded" } }),
    ]);
    const tested = await testing;
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/TEST SUITE:\s+metalsynth-test\s[\s\S]*Phase:\s+Succeeded/);

    // In the webhook's own namespace, which it does not review, the dry run is admitted: the program fails.
    const unreviewed = {
      ...pod,
      spec: {
        containers: pod.spec.containers.map((container) => ({
          ...container,
          env: [{ name: "REVIEW_NAMESPACE", value: NAMESPACE }],
        })),
      },
    };
    await must(kubectl, [
      "create",
      "rolebinding",
      "metalsynth-test-unreviewed",
      "-n",
      NAMESPACE,
      "--clusterrole=cluster-admin",
      `--user=${TEST_USER}`,
    ]);
    const admitted = await runPod(unreviewed);
    expect(admitted.code).toBe(1);
    expect(admitted.stdout).toContain(
      "the webhook should have refused a Provisioning naming an unknown MAC; the API server answered 201",
    );
    await must(kubectl, ["delete", "rolebinding", "metalsynth-test-unreviewed", "-n", NAMESPACE]);
  });

  it("installs a second release in another namespace as the README says, beside the first", async () => {
    await runReadme("helm-second-release");
    const manifest = await installed("metalsynth-edge", "metalsynth-edge");
    expect(manifest.filter((object) => !object.metadata.name.startsWith("metalsynth-edge-"))).toEqual(
      // The admissions ConfigMap, its Role and binding keep the name the webhook looks for (decision 0056).
      manifest.filter((object) => object.metadata.name === "metalsynth-webhook-admissions"),
    );
    expect(find(manifest, "Role", "metalsynth-edge-webhook-secrets").metadata.namespace).toBe("site-b");
    // The first release's objects are its own still.
    await installed(RELEASE, NAMESPACE);
    await mustHelm(["uninstall", "metalsynth-edge", "--namespace", "metalsynth-edge"]);
  });

  it("installs as a subchart of an umbrella chart as the README says", async () => {
    await runReadme("helm-subchart");
    const manifest = await installed("platform", "platform");
    const deployment = find(manifest, "Deployment", "platform-metalsynth-webhook") as KubeObject & {
      spec: { replicas: number };
    };
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.metadata.namespace).toBe("platform");
    await mustHelm(["uninstall", "platform", "--namespace", "platform"]);
  });

  it("uninstalls without a stray object; the CRDs stay, as Helm keeps crds/", async () => {
    await mustHelm(["uninstall", RELEASE, "--namespace", NAMESPACE]);
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
    expect(
      objects.map((object) => `${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`),
    ).toEqual([]);
    expect((await helm(["status", RELEASE, "--namespace", NAMESPACE])).code).not.toBe(0);
    const crds = await must(kubectl, ["get", "crd", "-l", LABEL, "-o", "name"]);
    expect(crds.trim().split("\n").sort()).toEqual(
      (await deployObjects())
        .filter((object) => object.kind === "CustomResourceDefinition")
        .map((object) => `customresourcedefinition.apiextensions.k8s.io/${object.metadata.name}`)
        .sort(),
    );
  });
});
