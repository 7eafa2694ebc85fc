/**
 * kubectl against an e2e control plane, and the objects every e2e test starts from: the Metal3 CRDs
 * (copied from the upstream project), metalsynth's CRDs and BareMetalHosts made from a site's
 * inventory snapshot.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseAllDocuments } from "yaml";
import { REPO } from "../../harness.ts";

/** What a command printed and how it ended. */
export interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command args…` with `input` on standard input; never throws for a non-zero exit. */
export function exec(
  command: string,
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    // A command that exits before it reads its input (kubectl refusing its arguments, a run the
    // machine's load made slow to start) closes the pipe; its exit code and stderr are the answer.
    child.stdin.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") reject(error);
    });
    child.stdin.end(options.input ?? "");
  });
}

/** kubectl with a kubeconfig: one call, its result. */
export type Kubectl = (args: readonly string[], input?: string) => Promise<Result>;

/**
 * A {@link Kubectl} bound to `kubeconfig`, passed as `KUBECONFIG` (the kubectl on this machine
 * refuses global flags before the subcommand).
 */
export function kubectlFor(kubeconfig: string): Kubectl {
  const env = kubectlEnvironment(kubeconfig);
  return (args, input) => exec("kubectl", args, input === undefined ? { env } : { env, input });
}

/**
 * The environment for kubectl against the control plane of `kubeconfig`: its own discovery cache,
 * since a control plane of an earlier run may have had the same port and other resources.
 */
export function kubectlEnvironment(kubeconfig: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    KUBECONFIG: kubeconfig,
    KUBECACHEDIR: path.join(path.dirname(kubeconfig), "kube-cache"),
  };
}

/** Like {@link Kubectl} but throws with kubectl's message on a non-zero exit; resolves to stdout. */
export async function must(kubectl: Kubectl, args: readonly string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(" ")} failed: ${result.stderr || result.stdout}`);
  return result.stdout;
}

/** Polls `check` until it resolves true, or fails after `timeoutMs`. */
export async function eventually(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(100);
  }
}

/** The upstream Metal3 CRDs (BareMetalHost, HardwareData), copied from ../shared/anchors/metal3. */
export const METAL3_CRDS = ["metal3.io_baremetalhosts.yaml", "metal3.io_hardwaredata.yaml"].map((file) =>
  path.join(REPO, "test", "e2e", "fixtures", file),
);

/** Installs the Metal3 CRDs and metalsynth's (deploy/crds.yaml) and waits until they serve. */
export async function installCrds(kubectl: Kubectl): Promise<void> {
  for (const file of [...METAL3_CRDS, path.join(REPO, "deploy", "crds.yaml")]) {
    await must(kubectl, ["apply", "--server-side", "-f", file]);
  }
  await must(kubectl, ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
}

/** Creates each namespace that does not exist yet. */
export async function ensureNamespaces(kubectl: Kubectl, namespaces: Iterable<string>): Promise<void> {
  for (const namespace of new Set(namespaces)) {
    const found = await kubectl(["get", "namespace", namespace]);
    if (found.code !== 0) await must(kubectl, ["create", "namespace", namespace]);
  }
}

/** A Kubernetes object as parsed from YAML. */
export type KubeObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
};

/** Every object in the YAML or JSON files of `dir` (recursively listed by the caller), Lists unwrapped. */
export async function readObjects(files: readonly string[]): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const file of files) {
    const text = await readFile(file, "utf8");
    const values = file.endsWith(".json")
      ? [JSON.parse(text) as unknown]
      : parseAllDocuments(text).map((document) => document.toJS() as unknown);
    for (const value of values) {
      if (!value || typeof value !== "object") continue;
      const record = value as Record<string, unknown>;
      if (Array.isArray(record.items)) objects.push(...(record.items as KubeObject[]));
      else objects.push(record as KubeObject);
    }
  }
  return objects;
}

/**
 * A snapshot object as a user would register it: no status, none of the fields the API server owns,
 * and no finalizers (no operator runs here to remove them). The status is written separately,
 * through the status subresource, as the operator does.
 */
export function registrable(object: KubeObject): KubeObject {
  const serverOwned = [
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "managedFields",
    "ownerReferences",
    "finalizers",
  ];
  const metadata = Object.fromEntries(
    Object.entries(object.metadata).filter(([key]) => !serverOwned.includes(key)),
  );
  const fields = Object.entries(object).filter(([key]) => key !== "status" && key !== "metadata");
  return { ...Object.fromEntries(fields), metadata } as KubeObject;
}
