/**
 * The two GitOps agents' apply, on a real API server:
 *
 * - Flux: test/e2e/go/flux-apply, which is kustomize-controller's apply and prune with its own
 *   library (fluxcd/pkg/ssa) and options.
 * - Argo CD: test/e2e/go-argo/argo-sync, one automated sync of an Application by Argo CD's own sync
 *   engine (gitops-engine) with the options the application controller passes (hooks, waves, prune,
 *   tracking annotation, the ApplicationSet's sync options). No kubelet runs: the tool runs a Job's
 *   kubectl containers as the Job's ServiceAccount and writes its status (decision 0046), and
 *   `argoSync` marks Deployments available while it runs (decision 0040).
 *
 * `runJob` is the same stand-in for a Job a test applies itself.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parse, stringify } from "yaml";
import { REPO } from "../../harness.ts";
import { startControlPlane, type ControlPlane } from "./control-plane.ts";
import {
  exec,
  installCrds,
  kubectlEnvironment,
  kubectlFor,
  must,
  type KubeObject,
  type Kubectl,
} from "./kube.ts";

/**
 * A control plane with the Metal3 CRDs installed, and stand-ins for cert-manager's (a SIPCluster's
 * auth service renders an Issuer and a Certificate), for the agents to apply onto, and its kubectl.
 */
export async function startAgentPlane(binDir: string): Promise<{ plane: ControlPlane; kubectl: Kubectl }> {
  const plane = await startControlPlane(binDir);
  const kubectl = kubectlFor(plane.kubeconfig);
  await installCrds(kubectl);
  await must(kubectl, ["apply", "--server-side", "-f", OPERATOR_CRDS]);
  await must(kubectl, ["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
  return { plane, kubectl };
}

/** Stand-ins for cert-manager's and prometheus-operator's CRDs: any content accepted, no controller. */
const OPERATOR_CRDS = path.join(REPO, "test", "e2e", "fixtures", "operator-crds.yaml");

/** `kubectl kustomize <dir>`: what both agents build from a cluster directory. */
export async function kustomize(plane: ControlPlane, directory: string): Promise<string> {
  return must(kubectlFor(plane.kubeconfig), ["kustomize", directory]);
}

/** What the agents use of a control plane: its admin kubeconfig and the tools' directory. */
export type AgentPlane = Pick<ControlPlane, "kubeconfig" | "binDir">;

/** One Flux Kustomization's apply (and prune, against `inventoryFile`). */
export async function fluxApply(
  plane: AgentPlane,
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
 * failed; the caller asserts. On the e2e node (`node: true`, test/e2e/node) the kubelet runs the Jobs
 * and the controllers make Deployments available: no stand-in does.
 */
export async function argoSync(
  plane: AgentPlane,
  app: ArgoApplication,
  manifests: string,
  options: { node?: boolean } = {},
): Promise<ArgoSyncResult> {
  const syncing = { done: !!options.node };
  const standIn = deploymentsBecomeAvailable(plane, syncing);
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
      ...(options.node ? ["--node"] : []),
    ],
    { input: manifests },
  ).finally(() => (syncing.done = true));
  await standIn;
  if (result.code !== 0) throw new Error(`argo-sync ${app.name} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as ArgoSyncResult;
}

/**
 * The deployment controller and kubelet, as far as Argo CD's health check sees them: until
 * `syncing.done`, every Deployment gets the status of one whose replicas are all available. Without
 * it a Deployment stays Progressing, and the engine never moves past its wave to later waves or
 * PostSync hooks (decision 0040).
 */
async function deploymentsBecomeAvailable(plane: AgentPlane, syncing: { done: boolean }): Promise<void> {
  const kubectl = kubectlFor(plane.kubeconfig);
  while (!syncing.done) {
    const list = JSON.parse(await must(kubectl, ["get", "deployments", "-A", "-o", "json"])) as {
      items: (KubeObject & { spec: { replicas?: number }; status?: { observedGeneration?: number } })[];
    };
    for (const deployment of list.items) {
      const generation = deployment.metadata.generation as number;
      if (deployment.status?.observedGeneration === generation) continue;
      const replicas = deployment.spec.replicas ?? 1;
      const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      const condition = (type: string, reason: string) => ({
        type,
        status: "True",
        reason,
        message: "stand-in for the deployment controller (e2e)",
        lastUpdateTime: now,
        lastTransitionTime: now,
      });
      const status = {
        observedGeneration: generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          condition("Available", "MinimumReplicasAvailable"),
          condition("Progressing", "NewReplicaSetAvailable"),
        ],
      };
      await kubectl([
        "patch",
        "deployment",
        deployment.metadata.name,
        "-n",
        deployment.metadata.namespace ?? "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status }),
      ]);
    }
    await sleep(250);
  }
}

/** How a Job's run ended: whether any container failed, and every container's output. */
export interface JobRun {
  readonly failed: boolean;
  readonly log: string;
}

/**
 * What a kubelet would do with a Job whose containers run kubectl, directly or from a `/bin/sh -c`
 * script: run each container once, in order, as the pod's ServiceAccount (impersonated through a
 * kubeconfig that says `as:`), with kubectl on PATH. Every container runs, as in a pod; the Job
 * failed when any did. Any other Job fails loudly.
 */
export async function runJob(plane: ControlPlane, job: KubeObject): Promise<JobRun> {
  if (job.kind !== "Job")
    throw new Error(
      `cannot run ${job.kind} ${job.metadata.namespace ?? "default"}/${job.metadata.name}: only Jobs run here`,
    );
  const pod = (job.spec as { template: { spec: PodSpec } }).template.spec;
  const identity = `system:serviceaccount:${job.metadata.namespace ?? "default"}:${pod.serviceAccountName ?? "default"}`;
  const env = kubectlEnvironment(await impersonating(plane.kubeconfig, identity));
  let failed = false;
  const log: string[] = [];
  for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
    const [command = "", ...rest] = container.command ?? [];
    const shell = command === "/bin/sh" && rest[0] === "-c";
    if (command !== "kubectl" && !shell)
      throw new Error(`cannot run container ${container.name}: neither kubectl nor /bin/sh -c`);
    const result = await exec(command, [...rest, ...(container.args ?? [])], { env });
    log.push(`${container.name}: ${result.stdout}${result.stderr}`);
    failed ||= result.code !== 0;
  }
  return { failed, log: log.join("\n") };
}

/** A copy of `kubeconfig` whose users act as `identity`, as a pod's ServiceAccount token would. */
async function impersonating(kubeconfig: string, identity: string): Promise<string> {
  const config = parse(await readFile(kubeconfig, "utf8")) as { users: { user: Record<string, unknown> }[] };
  for (const entry of config.users) entry.user.as = identity;
  const file = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-job-")), "kubeconfig");
  await writeFile(file, stringify(config));
  return file;
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
