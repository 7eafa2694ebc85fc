/**
 * The two GitOps agents' apply, on a real API server:
 *
 * - Flux: test/e2e/go/flux-apply, which is kustomize-controller's apply and prune with its own
 *   library (fluxcd/pkg/ssa) and options.
 * - Argo CD: its sync of one Application as its documentation describes it and gitops-engine does
 *   it: hooks (`Skip` manifests are left out; a Sync hook Job is created and its containers run in
 *   its wave, a PostSync hook Job after every wave), sync waves, the tracking annotation,
 *   client-side apply by default and server-side apply as `argocd-controller` with
 *   `--force-conflicts` where `ServerSideApply=true`, preceded by the client-side-apply migration
 *   unless the Application says `ClientSideApplyMigration=false`, and pruning unless `Prune=false`.
 *   A failed Sync hook ends the sync before the later waves; a failed PostSync hook ends it Failed
 *   with everything applied. Argo CD applies through kubectl's own apply code, so this runs kubectl.
 *   No kubelet runs here: a Job's containers (`kubectl …`, or `/bin/sh -c SCRIPT NAME` with
 *   arguments) run on this machine with the Job's ServiceAccount identity (impersonation), which is
 *   what the pod would do.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse, parseAllDocuments, stringify } from "yaml";
import type { ControlPlane } from "./control-plane.ts";
import { exec, kubectlEnvironment, kubectlFor, must, type KubeObject } from "./kube.ts";

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
  /** `spec.syncPolicy.syncOptions` */
  readonly syncOptions: readonly string[];
  /** The objects it applied last time, for pruning: kept here between syncs. */
  previous?: KubeObject[];
}

const SYNC_OPTIONS = "argocd.argoproj.io/sync-options";
const HOOK = "argocd.argoproj.io/hook";

function annotation(object: KubeObject, key: string): string | undefined {
  const annotations = object.metadata.annotations as Record<string, string> | undefined;
  return annotations?.[key];
}

function hasOption(options: readonly string[], object: KubeObject | undefined, option: string): boolean {
  const own =
    (object &&
      annotation(object, SYNC_OPTIONS)
        ?.split(",")
        .map((entry) => entry.trim())) ??
    [];
  return (
    own.includes(option) || (options.includes(option) && !own.includes(option.replace("=true", "=false")))
  );
}

function wave(object: KubeObject): number {
  return Number(annotation(object, "argocd.argoproj.io/sync-wave") ?? "0");
}

function key(object: KubeObject): string {
  const group = object.apiVersion.includes("/") ? object.apiVersion.split("/")[0] : "";
  return `${group}/${object.kind}:${object.metadata.namespace ?? ""}/${object.metadata.name}`;
}

/** One sync of `app` to the objects in `manifests` (a kustomize build). Throws when the sync fails. */
export async function argoSync(plane: ControlPlane, app: ArgoApplication, manifests: string): Promise<void> {
  const kubectl = kubectlFor(plane.kubeconfig);
  const objects = parseAllDocuments(manifests)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null)
    .filter((object) => annotation(object, HOOK) !== "Skip");
  const hooks = objects.filter((object) => annotation(object, HOOK) !== undefined);
  const resources = objects
    .filter((object) => annotation(object, HOOK) === undefined)
    .map((object) => ({
      ...object,
      metadata: {
        ...object.metadata,
        annotations: {
          ...(object.metadata.annotations as Record<string, string> | undefined),
          "argocd.argoproj.io/tracking-id": `${app.name}:${key(object)}`,
        },
      },
    }));

  // Prune: what the last sync applied and this one does not, unless the live object says Prune=false.
  const current = new Set(resources.map(key));
  for (const stale of (app.previous ?? []).filter((object) => !current.has(key(object)))) {
    const target = [
      stale.kind,
      stale.metadata.name,
      ...(stale.metadata.namespace ? ["-n", stale.metadata.namespace] : []),
    ];
    const live = await kubectl(["get", ...target, "-o", "json"]);
    if (live.code !== 0) continue;
    if (hasOption([], JSON.parse(live.stdout) as KubeObject, "Prune=false")) continue;
    await must(kubectl, ["delete", ...target, "--wait=false"]);
  }

  const syncHooks = hooks.filter((hook) => annotation(hook, HOOK) !== "PostSync");
  const waves = [...new Set([...resources, ...syncHooks].map(wave))].sort((a, b) => a - b);
  for (const step of waves) {
    await argoApply(
      plane,
      app,
      resources.filter((candidate) => wave(candidate) === step),
    );
    for (const hook of syncHooks.filter((candidate) => wave(candidate) === step)) {
      const run = await runHook(plane, hook);
      if (run.failed) throw new Error(`sync Failed: Sync hook ${key(hook)} failed: ${run.log}`);
    }
  }
  app.previous = resources;
  const postSync = hooks.filter((hook) => annotation(hook, HOOK) === "PostSync");
  const failed: string[] = [];
  for (const hook of postSync.sort((a, b) => wave(a) - wave(b))) {
    const run = await runHook(plane, hook);
    if (run.failed) failed.push(`PostSync hook ${key(hook)} failed: ${run.log}`);
  }
  if (failed.length > 0) throw new Error(`sync Failed: ${failed.join("; ")}`);
}

/**
 * Applies one wave's resources: client-side, or server-side where `ServerSideApply=true`, each group
 * in one kubectl call (Argo CD applies them one by one; the outcome per object is the same).
 */
async function argoApply(
  plane: ControlPlane,
  app: ArgoApplication,
  objects: readonly KubeObject[],
): Promise<void> {
  const kubectl = kubectlFor(plane.kubeconfig);
  const groups = new Map<string, KubeObject[]>();
  for (const object of objects) {
    const serverSide = hasOption(app.syncOptions, object, "ServerSideApply=true");
    const validate = !hasOption(app.syncOptions, object, "Validate=false");
    const group = `${serverSide ? "server" : "client"} ${validate}`;
    groups.set(group, [...(groups.get(group) ?? []), object]);
  }
  for (const [group, members] of groups) {
    const [side, validate] = group.split(" ");
    const flags = validate === "true" ? [] : ["--validate=false"];
    if (side === "client") {
      await must(
        kubectl,
        ["apply", ...flags, "-f", "-"],
        members.map((object) => stringify(object)).join("---\n"),
      );
      continue;
    }
    if (!app.syncOptions.includes("ClientSideApplyMigration=false")) {
      for (const object of members) {
        const target = [
          object.kind,
          object.metadata.name,
          ...(object.metadata.namespace ? ["-n", object.metadata.namespace] : []),
        ];
        const live = await kubectl(["get", ...target, "-o", "json"]);
        const managers =
          live.code === 0
            ? ((JSON.parse(live.stdout) as KubeObject).metadata.managedFields as { manager: string }[])
            : [];
        if ((managers ?? []).some((entry) => entry.manager === "kubectl-client-side-apply")) {
          await must(
            kubectl,
            ["apply", ...flags, "--field-manager=kubectl-client-side-apply", "-f", "-"],
            stringify(object),
          );
        }
      }
    }
    await must(
      kubectl,
      [
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=argocd-controller",
        ...flags,
        "-f",
        "-",
      ],
      members.map((object) => stringify(object)).join("---\n"),
    );
  }
}

/** A hook: deleted first when `BeforeHookCreation`, created, run, and deleted if it succeeded and says `HookSucceeded`. */
async function runHook(plane: ControlPlane, hook: KubeObject): Promise<JobRun> {
  const kubectl = kubectlFor(plane.kubeconfig);
  const namespace = hook.metadata.namespace ?? "default";
  const policy = annotation(hook, "argocd.argoproj.io/hook-delete-policy") ?? "";
  const target = [hook.kind, hook.metadata.name, "-n", namespace, "--ignore-not-found"];
  if (policy.includes("BeforeHookCreation")) await kubectl(["delete", ...target]);
  await must(kubectl, ["create", "-f", "-"], stringify(hook));
  const run = await runJob(plane, hook);
  if (!run.failed && policy.includes("HookSucceeded")) await kubectl(["delete", ...target]);
  return run;
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
  if (job.kind !== "Job") throw new Error(`cannot run ${key(job)}: only Jobs run here`);
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
