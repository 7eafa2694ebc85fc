/**
 * What the node tier's tests do with the rendered workloads: give every image the manifests name its
 * local stand-in (containerd's image store holds it under that name; nothing is pulled), apply a
 * cluster directory through Flux's apply or Argo CD's engine with a real kubelet, and read how Jobs
 * ended and what their pods printed, through the API server as anyone would.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { argoSync, fluxApply, type AgentPlane, type ArgoSyncResult } from "../../support/agents.ts";
import { must, type KubeObject, type Kubectl } from "../../support/kube.ts";
import { ctr, type NodeInfo, type StandIn } from "./node.ts";

/** The GitOps agents the node runs what they apply for. */
export const AGENTS = ["flux", "argocd"] as const;
export type Agent = (typeof AGENTS)[number];

/** The node's control plane as the agents' helpers take it. */
export function planeOf(info: NodeInfo): AgentPlane {
  return { kubeconfig: info.kubeconfig, binDir: info.binDir };
}

/**
 * The stand-in for a container of the rendered manifests, by the container's name (each rendered
 * container has one purpose, whatever image a site picks for it).
 */
function standInFor(container: string): StandIn | undefined {
  if (/^label-\d+$/.test(container) || container === "store-kubeconfig") return "kubectl";
  if (container === "kud-installer" || container === "install-packages") return "installer";
  if (container === "haproxy") return "haproxy";
  if (container === "jumphost") return "jump-host";
  if (container === "dex") return "dex";
  return undefined;
}

/** `haproxy:2.3.2` → `docker.io/library/haproxy:2.3.2`, as containerd's CRI names what it pulls. */
export function normalisedImage(image: string): string {
  const [first, ...rest] = image.split("/");
  const domain = rest.length > 0 && /[.:]|^localhost$/.test(first ?? "") ? first : undefined;
  const remainder = domain ? rest.join("/") : image;
  const qualified = `${domain ?? "docker.io"}/${!domain && !remainder.includes("/") ? "library/" : ""}${remainder}`;
  return /:[^/]+$|@/.test(remainder) ? qualified : `${qualified}:latest`;
}

/** Every pod template's containers in `objects` (Deployments and Jobs). */
function containersOf(object: KubeObject): { name: string; image: string }[] {
  const spec = (object.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template?.spec;
  if (!spec) return [];
  return [...((spec.initContainers as never[]) ?? []), ...((spec.containers as never[]) ?? [])];
}

/**
 * Tags each stand-in in containerd's image store with the name the rendered containers of `objects`
 * run; fails for a container no stand-in is made for.
 */
export function provideImages(info: NodeInfo, objects: readonly KubeObject[]): void {
  for (const object of objects) {
    for (const container of containersOf(object)) {
      const role = standInFor(container.name);
      if (!role)
        throw new Error(
          `no stand-in image for container ${container.name} (${container.image}) of ${object.kind} ${object.metadata.name}`,
        );
      const tagged = ctr(info.containerd, [
        "images",
        "tag",
        "--force",
        info.setup.images[role],
        normalisedImage(container.image),
      ]);
      if (!tagged.ok) throw new Error(`ctr images tag ${container.image}: ${tagged.output}`);
    }
  }
}

/** Applies `manifests` (a kustomize build) as the agent does; Argo CD's outcome, or Flux's report. */
export async function applyAs(
  agent: Agent,
  info: NodeInfo,
  app: { name: string; namespace: string; syncOptions: readonly string[]; fluxInventory: string },
  manifests: string,
): Promise<{ argo?: ArgoSyncResult; flux?: Record<string, string> }> {
  const plane = planeOf(info);
  if (agent === "flux") return { flux: await fluxApply(plane, app.name, manifests, app.fluxInventory) };
  return { argo: await argoSync(plane, app, manifests, { node: true }) };
}

/** How a Job ended, as the Job controller wrote it, and what its pods printed. */
export interface JobOutcome {
  /** `Complete` or `Failed` */
  readonly condition: "Complete" | "Failed";
  readonly reason: string;
  readonly message: string;
  /** How many pods the Job controller made. */
  readonly pods: number;
  /** What every started container of every pod printed, each line prefixed `[pod/<pod>/<container>]`. */
  readonly logs: string;
}

/** Waits until the Job has a Complete or Failed condition; its outcome. */
export async function jobOutcome(
  kubectl: Kubectl,
  namespace: string,
  name: string,
  timeoutMs = 180_000,
): Promise<JobOutcome> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await kubectl(["get", "job", name, "-n", namespace, "-o", "json"]);
    if (found.code === 0) {
      const job = JSON.parse(found.stdout) as {
        status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
      };
      const ended = job.status?.conditions?.find(
        (condition) =>
          (condition.type === "Complete" || condition.type === "Failed") && condition.status === "True",
      );
      if (ended) {
        const pods = (
          await must(kubectl, [
            "get",
            "pods",
            "-n",
            namespace,
            "-l",
            `batch.kubernetes.io/job-name=${name}`,
            "-o",
            "name",
          ])
        )
          .split("\n")
          .filter(Boolean);
        const logs: string[] = [];
        for (const pod of pods) logs.push(await podLogs(kubectl, namespace, pod));
        return {
          condition: ended.type as "Complete" | "Failed",
          reason: ended.reason ?? "",
          message: ended.message ?? "",
          pods: pods.length,
          logs: logs.join(""),
        };
      }
    }
    if (Date.now() > deadline) {
      const described = await kubectl(["describe", "job,pods", "-n", namespace]);
      throw new Error(
        `Job ${namespace}/${name} did not end within ${timeoutMs / 1000} s:\n${described.stdout}`,
      );
    }
    await sleep(500);
  }
}

/**
 * What each container of `pod` (`pod/<name>`) that started printed, init containers first, each line
 * prefixed `[<pod>/<container>]`.
 */
async function podLogs(kubectl: Kubectl, namespace: string, pod: string): Promise<string> {
  const status = JSON.parse(await must(kubectl, ["get", pod, "-n", namespace, "-o", "json"])) as {
    status?: Record<string, { name: string; state?: Record<string, unknown> }[] | undefined>;
  };
  const started = [
    ...(status.status?.initContainerStatuses ?? []),
    ...(status.status?.containerStatuses ?? []),
  ].filter((container) => !container.state?.waiting);
  const out: string[] = [];
  for (const { name } of started) {
    const log = await kubectl(["logs", pod, "-n", namespace, "-c", name]);
    for (const line of `${log.stdout}${log.stderr}`.split("\n").filter(Boolean))
      out.push(`[${pod}/${name}] ${line}\n`);
  }
  return out.join("");
}

/** Waits until the Deployment's replicas are all available, as the deployment controller says. */
export async function available(
  kubectl: Kubectl,
  namespace: string,
  name: string,
  timeoutMs = 120_000,
): Promise<void> {
  const result = await kubectl([
    "wait",
    "--for=condition=Available",
    `--timeout=${Math.round(timeoutMs / 1000)}s`,
    "deployment",
    name,
    "-n",
    namespace,
  ]);
  if (result.code !== 0) {
    const described = await kubectl(["describe", "deployment,pods", "-n", namespace]);
    throw new Error(`Deployment ${namespace}/${name} not available: ${result.stderr}\n${described.stdout}`);
  }
}

/** Deletes a namespace and waits until it is gone (the namespace controller deletes all in it). */
export async function deleteNamespace(kubectl: Kubectl, namespace: string): Promise<void> {
  await kubectl(["delete", "namespace", namespace, "--ignore-not-found", "--timeout=120s"]);
}

/** One write to a BareMetalHost, from kube-apiserver's audit log. */
export interface HostWrite {
  readonly user: string;
  readonly verb: string;
  readonly host: string;
  readonly code: number;
}

/** Reads the audit log from `offset` (a size {@link auditOffset} returned) on. */
export function hostWrites(info: NodeInfo, offset: number): HostWrite[] {
  const text = readFileSync(info.auditLog).subarray(offset).toString("utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as {
          stage: string;
          verb: string;
          user: { username: string };
          objectRef?: { resource?: string; namespace?: string; name?: string };
          responseStatus?: { code?: number };
        },
    )
    .filter((event) => event.stage === "ResponseComplete" && event.objectRef?.resource === "baremetalhosts")
    .map((event) => ({
      user: event.user.username,
      verb: event.verb,
      host: `${event.objectRef?.namespace}/${event.objectRef?.name}`,
      code: event.responseStatus?.code ?? 0,
    }));
}

/** Where the audit log ends now. */
export function auditOffset(info: NodeInfo): number {
  try {
    return statSync(info.auditLog).size;
  } catch {
    return 0;
  }
}

/** A fresh file for a Flux Kustomization's inventory. */
export function fluxInventory(dir: string, name: string): string {
  return path.join(dir, `${name}-${Date.now()}.json`);
}
