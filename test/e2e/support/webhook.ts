/**
 * The admission webhook as a cluster runs it, from this clone's build (the suite's globalSetup
 * compiles it first): `metalsynth webhook --from-cluster` authenticated as its ServiceAccount (so the
 * ClusterRole and the inventory namespaces' Roles of deploy/metalsynth.yaml are what it gets), with
 * the Deployment's `--secrets-namespace` arguments, serving TLS with a test CA, registered by
 * the ValidatingWebhookConfiguration of deploy/metalsynth.yaml with `clientConfig.url` and `caBundle`
 * in place of the Service and cert-manager's CA injection.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { request } from "node:https";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseAllDocuments, stringify } from "yaml";
import { REPO } from "../../harness.ts";
import { createTestCa, issueServerCertificate, type TestCa } from "../../webhook/tls-fixture.ts";
import type { ControlPlane } from "./control-plane.ts";
import { freePort } from "../../support/free-port.ts";
import { ensureNamespaces, must, registrable, type KubeObject, type Kubectl, type Result } from "./kube.ts";

/** The identity the webhook's pod has: its ServiceAccount. */
export const WEBHOOK_USER = "system:serviceaccount:metalsynth-system:metalsynth-webhook";

/** A running webhook process. */
export interface RunningWebhook {
  readonly port: number;
  /** Its process id, for its memory (`/proc/<pid>/status`). */
  readonly pid: number;
  readonly ca: TestCa;
  /** The serving certificate and key it reads (and reads again when they change). */
  readonly tls: { readonly certFile: string; readonly keyFile: string };
  /** What it logged so far (JSON lines on stdout, anything else on stderr). */
  output(): string;
  /** `GET <path>` over TLS: status code, or 0 when nothing answers. */
  /** GET `path` over TLS, trusting `trusted` (default: the test CA); 0 when it can't connect. */
  probe(path: string, trusted?: string): Promise<number>;
  /** GET `path` over TLS: the body; empty when it can't connect. */
  probeText(path: string): Promise<string>;
  stop(): Promise<void>;
}

/** The objects of deploy/metalsynth.yaml. */
export async function deployObjects(): Promise<KubeObject[]> {
  const text = await readFile(path.join(REPO, "deploy", "metalsynth.yaml"), "utf8");
  return parseAllDocuments(text).map((document) => document.toJS() as KubeObject);
}

/**
 * Applies the webhook's RBAC from deploy/metalsynth.yaml (Namespace, ServiceAccount, ClusterRole,
 * binding, and the Role and RoleBinding for Secrets in each inventory namespace, created first when
 * missing: Metal3 owns them in a cluster).
 */
export async function installWebhookRbac(kubectl: Kubectl): Promise<void> {
  // The ConfigMap the replicas record admissions in (decision 0056) is the chart's, not the webhook's.
  const kinds = [
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ConfigMap",
  ];
  const objects = (await deployObjects()).filter((object) => kinds.includes(object.kind));
  await ensureNamespaces(kubectl, await inventoryNamespaces());
  await must(kubectl, ["apply", "-f", "-"], objects.map((object) => stringify(object)).join("---\n"));
}

/** The webhook's container in deploy/metalsynth.yaml's Deployment. */
async function webhookContainer(): Promise<{ args?: string[]; env?: { name: string; value: string }[] }> {
  const deployment = (await deployObjects()).find(
    (object) => object.kind === "Deployment" && object.metadata.name === "metalsynth-webhook",
  );
  const spec = deployment?.spec as
    | { template: { spec: { containers: { args?: string[]; env?: { name: string; value: string }[] }[] } } }
    | undefined;
  return spec?.template.spec.containers[0] ?? {};
}

/** The webhook Deployment's arguments in deploy/metalsynth.yaml. */
async function deploymentArgs(): Promise<string[]> {
  return (await webhookContainer()).args ?? [];
}

/** The webhook Deployment's environment in deploy/metalsynth.yaml (its Node.js options). */
async function deploymentEnv(): Promise<Record<string, string>> {
  const env = (await webhookContainer()).env ?? [];
  return Object.fromEntries(env.map((variable) => [variable.name, variable.value]));
}

/** The Deployment's `--secrets-namespace` values in deploy/metalsynth.yaml: the inventory namespaces. */
export async function inventoryNamespaces(): Promise<string[]> {
  const args = await deploymentArgs();
  return args.flatMap((arg, index) => (args[index - 1] === "--secrets-namespace" ? [arg] : []));
}

/**
 * The Deployment's arguments about what the webhook reads and where it records admissions:
 * `--secrets-namespace`, `--namespace`, `--allocation-namespace` and `--allocation-manager` pairs.
 */
async function clusterArgs(): Promise<string[]> {
  const flags = ["--secrets-namespace", "--namespace", "--allocation-namespace", "--allocation-manager"];
  const args = await deploymentArgs();
  return args.flatMap((arg, index) => (flags.includes(arg) ? [arg, args[index + 1] ?? ""] : []));
}

/** Options of {@link startWebhook}. */
export interface WebhookOptions {
  /** @default the webhook ServiceAccount's kubeconfig */
  readonly kubeconfig?: string;
  /** The CA and serving certificate, to share one between replicas. @default new ones */
  readonly tls?: { readonly ca: TestCa; readonly certFile: string; readonly keyFile: string };
}

/**
 * Starts `metalsynth webhook --from-cluster` as {@link WEBHOOK_USER}, with the Deployment's
 * arguments and environment; resolves once `/readyz` is 200.
 */
export async function startWebhook(
  plane: ControlPlane,
  extraArgs: readonly string[] = [],
  options: WebhookOptions = {},
): Promise<RunningWebhook> {
  const ca = options.tls?.ca ?? (await createTestCa());
  const certificate = options.tls ?? (await issueServerCertificate(ca, "webhook", ["127.0.0.1"]));
  const port = await freePort();
  let output = "";
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.join(REPO, "bin", "metalsynth.js"),
      "webhook",
      "--from-cluster",
      "--tls-cert",
      certificate.certFile,
      "--tls-key",
      certificate.keyFile,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      ...(await clusterArgs()),
      ...extraArgs,
    ],
    {
      env: {
        ...process.env,
        ...(await deploymentEnv()),
        KUBECONFIG: options.kubeconfig ?? plane.kubeconfigFor(WEBHOOK_USER),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));

  const probe = async (target: string, trusted: string = ca.cert): Promise<number> => {
    try {
      const response = await fetchWithCa(`https://127.0.0.1:${port}${target}`, trusted);
      return response;
    } catch {
      return 0;
    }
  };
  const running: RunningWebhook = {
    port,
    pid: child.pid ?? 0,
    probeText: (target) => textWithCa(`https://127.0.0.1:${port}${target}`, ca.cert).catch(() => ""),
    ca,
    tls: { certFile: certificate.certFile, keyFile: certificate.keyFile },
    output: () => output,
    probe,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(15_000).then(() => child.kill("SIGKILL"))]);
    },
  };
  const deadline = Date.now() + 60_000;
  while ((await probe("/readyz")) !== 200) {
    if (child.exitCode !== null) throw new Error(`webhook exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      await running.stop();
      throw new Error(`webhook not ready after 60 s:\n${output}`);
    }
    await sleep(200);
  }
  return running;
}

/** A GET over HTTPS trusting only `ca`; resolves to the body. */
async function textWithCa(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { ca, method: "GET", agent: false }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString()));
      response.on("end", () => resolve(text));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/** A GET over HTTPS trusting only `ca`; resolves to the status code. */
async function fetchWithCa(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { ca, method: "GET", agent: false }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/**
 * Registers the ValidatingWebhookConfiguration of deploy/metalsynth.yaml for `webhook`: every
 * webhook's `clientConfig` becomes the URL of the same path on 127.0.0.1, with the test CA.
 */
export async function registerWebhook(kubectl: Kubectl, webhook: RunningWebhook): Promise<void> {
  const configuration = (await deployObjects()).find(
    (object) => object.kind === "ValidatingWebhookConfiguration",
  );
  if (!configuration) throw new Error("deploy/metalsynth.yaml has no ValidatingWebhookConfiguration");
  // cert-manager's CA injection annotation goes: the test CA is put in place directly.
  const metadata = { name: configuration.metadata.name, labels: configuration.metadata.labels };
  const webhooks = (configuration.webhooks as { clientConfig: { service: { path: string } } }[]).map(
    (entry) => ({
      ...entry,
      clientConfig: {
        url: `https://127.0.0.1:${webhook.port}${entry.clientConfig.service.path}`,
        caBundle: Buffer.from(webhook.ca.cert).toString("base64"),
      },
    }),
  );
  await must(kubectl, ["apply", "-f", "-"], stringify({ ...configuration, metadata, webhooks }));
}

/**
 * Puts an inventory snapshot into the cluster the way Metal3 has it: each BareMetalHost created,
 * then its status written through the status subresource; HardwareData; networkData Secrets,
 * labelled for the webhook (`metalsynth.io/network-data=true`).
 */
export async function loadInventory(kubectl: Kubectl, objects: readonly KubeObject[]): Promise<void> {
  const wanted = objects.filter((object) =>
    ["BareMetalHost", "HardwareData", "Secret"].includes(object.kind),
  );
  const labelled = wanted.map((object) =>
    object.kind === "Secret"
      ? {
          ...object,
          metadata: {
            ...object.metadata,
            labels: { ...object.metadata.labels, "metalsynth.io/network-data": "true" },
          },
        }
      : object,
  );
  await must(
    kubectl,
    ["apply", "-f", "-"],
    labelled.map((object) => stringify(registrable(object))).join("---\n"),
  );
  // Every status in one kubectl run: a process per host would cost minutes at hub scale.
  const hosts = wanted.filter((object) => object.kind === "BareMetalHost" && object.status);
  if (hosts.length === 0) return;
  await must(
    kubectl,
    ["replace", "--subresource=status", "-f", "-"],
    hosts
      .map((host) => stringify({ ...registrable(host), status: withoutNulls(fullStatus(host.status)) }))
      .join("---\n"),
  );
}

/**
 * `value` without its null fields. The status used to be written as a merge patch, where a null
 * removes the field; `replace` would store it, and the API responses test/fixtures/inventory-pull
 * records (and the unit tests replay) hold the merge patch's result.
 */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== null)
      .map(([key, field]) => [key, withoutNulls(field)]),
  );
}

/** A BareMetalHost's status with the fields the CRD requires that a snapshot may leave out. */
function fullStatus(status: unknown): Record<string, unknown> {
  const given = (status ?? {}) as Record<string, unknown>;
  return {
    errorCount: 0,
    errorMessage: "",
    operationalStatus: "OK",
    // A host the operator runs and has not switched off: `poweredOn: false` makes it unavailable (decision 0052).
    poweredOn: true,
    provisioningFailCount: 0,
    ...given,
    provisioning: { ID: "", state: "", ...(given.provisioning as Record<string, unknown> | undefined) },
  };
}

/**
 * Writes a BareMetalHost's status through the status subresource, as the baremetal-operator does,
 * with the fields the CRD requires that a snapshot may leave out.
 */
export async function writeStatus(kubectl: Kubectl, host: KubeObject, status: unknown): Promise<void> {
  const full = fullStatus(status);
  await must(kubectl, [
    "patch",
    "baremetalhost",
    host.metadata.name,
    "-n",
    host.metadata.namespace ?? "default",
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status: full }),
  ]);
}

/**
 * `kubectl apply` of a Provisioning whose master MAC matches no host of the example inventory (one
 * hex digit off r03-node-04's): what the webhook must deny with `mac-unknown`.
 */
export function applyUnknownMac(kubectl: Kubectl): Promise<Result> {
  return kubectl(
    ["apply", "-f", "-"],
    stringify({
      apiVersion: "bpa.akraino.org/v1alpha1",
      kind: "Provisioning",
      metadata: { name: "typo", namespace: "edge-a", labels: { cluster: "typo" } },
      spec: { masters: [{ "master-1": { "mac-address": "b8:ce:f6:79:e4:c0" } }] },
    }),
  );
}
