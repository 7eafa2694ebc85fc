/**
 * The two GitOps agents' apply, on a real API server:
 *
 * - Flux: test/e2e/go/flux-apply, which is kustomize-controller's apply and prune with its own
 *   library (fluxcd/pkg/ssa) and options.
 * - Argo CD: test/e2e/go-argo/argo-sync, one automated sync of an Application by Argo CD's own sync
 *   engine (gitops-engine) with the options the application controller passes (hooks, waves, prune,
 *   tracking annotation, the ApplicationSet's sync options). No kubelet runs: the tool runs a Job's
 *   kubectl containers as the Job's ServiceAccount and writes its status (decision 0046).
 *
 * `runJob` is the same stand-in for a Job a test applies itself.
 */
import path from "node:path";
import { startControlPlane, type ControlPlane } from "./control-plane.ts";
import { exec, installCrds, kubectlFor, must, type KubeObject, type Kubectl } from "./kube.ts";

/** A control plane with the Metal3 CRDs installed, for the agents to apply onto, and its kubectl. */
export async function startAgentPlane(binDir: string): Promise<{ plane: ControlPlane; kubectl: Kubectl }> {
  const plane = await startControlPlane(binDir);
  const kubectl = kubectlFor(plane.kubeconfig);
  await installCrds(kubectl);
  return { plane, kubectl };
}

/** `kubectl kustomize <dir>`: what both agents build from a cluster directory. */
export async function kustomize(plane: ControlPlane, directory: string): Promise<string> {
  return must(kubectlFor(plane.kubeconfig), ["kustomize", directory]);
}

/** One Flux Kustomization's apply (and prune, against `inventoryFile`). */
export async function fluxApply(
  plane: ControlPlane,
  kustomization: string,
  manifests: string,
  inventoryFile: string,
): Promise<Record<string, string>> {
  const result = await exec(
    path.join(plane.binDir, "flux-apply"),
    ["--kubeconfig", plane.kubeconfig, "--name", kustomization, "--inventory", inventoryFile],
    { input: manifests },
  );
  if (result.code !== 0) throw new Error(`flux-apply ${kustomization} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, string>;
}

/** An Argo CD Application as far as its sync is concerned. */
export interface ArgoApplication {
  readonly name: string;
  /** `spec.destination.namespace` */
  readonly namespace: string;
  /** `spec.syncPolicy.syncOptions` */
  readonly syncOptions: readonly string[];
}

/** One entry of an operation's `syncResult.resources`, as Argo CD records it. */
export interface ArgoResourceResult {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** `Synced`, `SyncFailed`, `Pruned`, `PruneSkipped` */
  readonly status: string;
  readonly message: string;
  readonly hookType?: string;
  readonly hookPhase?: string;
  readonly syncPhase: string;
}

/** The outcome of one automated sync: the operation's end state, and what the kubelet stand-in ran. */
export interface ArgoSyncResult {
  /** False when the Application was already Synced, so an automated sync started no operation. */
  readonly operation: boolean;
  /** `Succeeded`, `Failed` or `Error` */
  readonly phase: string;
  readonly message: string;
  readonly resources: readonly ArgoResourceResult[] | null;
  readonly jobs:
    readonly { namespace: string; name: string; ran: boolean; succeeded: boolean; output: string }[] | null;
}

/**
 * One automated sync of `app` to the objects in `manifests` (a kustomize build) by Argo CD's own
 * sync engine (test/e2e/go-argo/argo-sync). Resolves with the outcome whether the sync succeeded or
 * failed; the caller asserts.
 */
export async function argoSync(
  plane: ControlPlane,
  app: ArgoApplication,
  manifests: string,
): Promise<ArgoSyncResult> {
  const result = await exec(
    path.join(plane.binDir, "argo-sync"),
    [
      "--kubeconfig",
      plane.kubeconfig,
      "--app",
      app.name,
      "--namespace",
      app.namespace,
      "--sync-options",
      app.syncOptions.join(","),
    ],
    { input: manifests },
  );
  if (result.code !== 0) throw new Error(`argo-sync ${app.name} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as ArgoSyncResult;
}

/**
 * What a kubelet would do with a Job whose containers run kubectl: run each container's command,
 * in order, as the pod's ServiceAccount (impersonated). Any other Job fails loudly.
 */
export async function runJob(plane: ControlPlane, job: KubeObject): Promise<void> {
  const kubectl = kubectlFor(plane.kubeconfig);
  const name = `${job.kind} ${job.metadata.namespace ?? "default"}/${job.metadata.name}`;
  if (job.kind !== "Job") throw new Error(`cannot run ${name}: only Jobs run here`);
  const pod = (job.spec as { template: { spec: PodSpec } }).template.spec;
  const identity = `system:serviceaccount:${job.metadata.namespace ?? "default"}:${pod.serviceAccountName ?? "default"}`;
  for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
    if (container.command?.[0] !== "kubectl")
      throw new Error(`cannot run container ${container.name}: not kubectl`);
    const args = [...container.command.slice(1), ...(container.args ?? [])];
    const result = await kubectl([...args, `--as=${identity}`]);
    if (result.code !== 0) throw new Error(`${name} container ${container.name} failed: ${result.stderr}`);
  }
}

interface PodSpec {
  serviceAccountName?: string;
  initContainers?: Container[];
  containers: Container[];
}

interface Container {
  name: string;
  command?: string[];
  args?: string[];
}
