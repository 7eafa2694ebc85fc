/**
 * docs/contract.md §4.2 and §9 on a real API server: every rendered cluster directory (the example site's and
 * each golden scenario's) applies cleanly under Flux and under Argo CD, onto BareMetalHosts made
 * with `kubectl apply`, `kubectl create` and a server-side apply, and applying changes the SIP
 * labels and nothing else: every BMH's spec and every label and annotation it had stay as they were,
 * and nothing is added. No agent creates a BareMetalHost, and one deleted after the inventory
 * snapshot fails only the label Job, naming the host (decision 0040).
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import {
  argoSync,
  fluxApply,
  kustomize,
  runJob,
  startAgentPlane,
  type ArgoApplication,
  type ArgoSyncResult,
} from "./support/agents.ts";
import type { ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  must,
  readObjects,
  registrable,
  type KubeObject,
  type Kubectl,
} from "./support/kube.ts";

/** A rendered tree and the inventory it was rendered from. */
interface RenderedSite {
  readonly name: string;
  readonly rendered: string;
  readonly inventory: readonly string[];
  /** Whether it labels hosts (has a `bmh-labels.yaml`). */
  readonly patchesHosts: boolean;
  /** The GitOps agents it renders for. */
  readonly targets: readonly string[];
}

/** The example site, and every golden scenario that renders a tree. */
function renderedSites(): RenderedSite[] {
  const site = (name: string, rendered: string, inventory: string[]): RenderedSite => {
    const files = readdirSync(rendered, { recursive: true, encoding: "utf8" });
    return {
      name,
      rendered,
      inventory,
      patchesHosts: files.some((file) => file.endsWith("bmh-labels.yaml")),
      targets: [
        ...(files.some((file) => file.startsWith("argocd")) ? ["argocd"] : []),
        ...(files.some((file) => file.startsWith("flux")) ? ["flux"] : []),
      ],
    };
  };
  const sites = [
    site("examples/site", path.join(REPO, "examples", "site", "rendered"), [
      path.join(REPO, "examples", "site", "inventory"),
    ]),
  ];
  const visit = (dir: string): void => {
    const manifest = path.join(dir, "scenario.yaml");
    if (existsSync(manifest)) {
      const scenario = parse(readFileSync(manifest, "utf8")) as { inventory: string[] };
      const rendered = path.join(dir, "expected");
      if (existsSync(path.join(rendered, "clusters"))) {
        sites.push(
          site(
            path.relative(REPO, dir),
            rendered,
            scenario.inventory.map((entry) => path.resolve(dir, entry)),
          ),
        );
      }
      return;
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) visit(path.join(dir, entry.name));
    }
  };
  visit(path.join(REPO, "test", "scenarios"));
  return sites;
}

/** The ways a BareMetalHost gets into a cluster. */
const CREATORS = {
  "kubectl apply": (kubectl: Kubectl, yaml: string) => must(kubectl, ["apply", "-f", "-"], yaml),
  "kubectl create": (kubectl: Kubectl, yaml: string) => must(kubectl, ["create", "-f", "-"], yaml),
  "server-side apply": (kubectl: Kubectl, yaml: string) =>
    must(kubectl, ["apply", "--server-side", "--field-manager=metal3-inventory", "-f", "-"], yaml),
} as const;

type Creator = keyof typeof CREATORS;

/** Every BareMetalHost's metadata and spec, by `namespace/name`. */
async function liveHosts(kubectl: Kubectl): Promise<Map<string, KubeObject>> {
  const list = JSON.parse(await must(kubectl, ["get", "baremetalhosts", "-A", "-o", "json"])) as {
    items: KubeObject[];
  };
  return new Map(list.items.map((host) => [`${host.metadata.namespace}/${host.metadata.name}`, host]));
}

const SIP_LABELS = [
  "metalsynth.io/cluster",
  "sip.airshipit.org/cluster-namespace",
  "sip.airshipit.org/cluster-name",
  "sip.airshipit.org/node-type",
];

/** Every kind of object the rendered directories hold, and BareMetalHosts. */
const RENDERED_KINDS =
  "baremetalhosts,jobs,configmaps,deployments,services,serviceaccounts,roles,rolebindings,issuers.cert-manager.io,certificates.cert-manager.io";
const AGENTS = ["flux", "argocd"] as const;
type Agent = (typeof AGENTS)[number];
/**
 * How long one case may take: an Argo CD sync starts its engine's cluster cache (a list and watch of
 * every resource type) and waits on each wave's Jobs, a few seconds per Application on this machine.
 */
const CASE_TIMEOUT: Record<Agent, number> = { flux: 120_000, argocd: 600_000 };
/** The Application's sync options, as the rendered ApplicationSet's template gives them. */
const ARGO_SYNC_OPTIONS = applicationSetSyncOptions();

function applicationSetSyncOptions(): string[] {
  const set = parse(
    readFileSync(path.join(REPO, "examples", "site", "rendered", "argocd", "applicationset.yaml"), "utf8"),
  ) as {
    spec: { template: { spec: { syncPolicy: { syncOptions?: string[] } } } };
  };
  return set.spec.template.spec.syncPolicy.syncOptions ?? [];
}

/**
 * The labels the label Jobs of `rendered` give each host (`undefined`: a release, no SIP labels),
 * read from their containers' arguments: `NAMESPACE HOST... -- LABEL...`.
 */
async function expectedLabels(rendered: string): Promise<Map<string, Record<string, string> | undefined>> {
  const expected = new Map<string, Record<string, string> | undefined>();
  const files = filesUnder(path.join(rendered, "clusters")).filter((file) =>
    file.endsWith("bmh-labels.yaml"),
  );
  for (const object of await readObjects(files)) {
    if (object.kind !== "Job") continue;
    const pod = (object.spec as { template: { spec: { containers: { args: string[] }[] } } }).template.spec;
    for (const { args } of pod.containers) {
      const [namespace, ...rest] = args;
      const hosts = rest.slice(0, rest.indexOf("--"));
      const labels = rest.slice(rest.indexOf("--") + 1);
      const set = labels.every((label) => label.includes("="))
        ? Object.fromEntries(labels.map((label) => label.split("=") as [string, string]))
        : undefined;
      for (const host of hosts) expected.set(`${namespace}/${host}`, set);
    }
  }
  return expected;
}

/** What applying did to one host, in the words of the promise. */
function changes(before: KubeObject, after: KubeObject): string[] {
  const found: string[] = [];
  if (stringify(after.spec) !== stringify(before.spec))
    found.push(`spec changed: ${stringify(after.spec ?? null)}`);
  for (const field of ["labels", "annotations"] as const) {
    const old = (before.metadata[field] ?? {}) as Record<string, string>;
    const now = (after.metadata[field] ?? {}) as Record<string, string>;
    for (const [name, value] of Object.entries(old)) {
      if (now[name] !== value && !SIP_LABELS.includes(name))
        found.push(`${field} ${name} changed to ${now[name]}`);
    }
    const allowed = field === "labels" ? SIP_LABELS : [];
    for (const name of Object.keys(now)) {
      if (!(name in old) && !allowed.includes(name)) found.push(`${field} ${name} added`);
    }
  }
  return found;
}

function sipLabels(host: KubeObject): Record<string, string> {
  const labels = (host.metadata.labels ?? {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(labels).filter(([name]) => SIP_LABELS.includes(name)));
}

describe("rendered/ applied by Flux and Argo CD on a real API server", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let scratch: string;

  beforeAll(async () => {
    ({ plane, kubectl } = await startAgentPlane(inject("e2eBinDir")));
    scratch = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-apply-"));
  });
  afterAll(async () => plane?.stop());

  const built = new Map<string, string>();
  async function kustomizeOnce(dir: string): Promise<string> {
    const manifests = built.get(dir) ?? (await kustomize(plane, dir));
    built.set(dir, manifests);
    return manifests;
  }

  /** An agent's state across syncs: Flux inventories, Argo CD Applications. */
  interface AgentState {
    readonly agent: Agent;
    readonly fluxInventories: string;
    readonly argoApps: Map<string, ArgoApplication>;
  }

  async function newAgentState(agent: Agent): Promise<AgentState> {
    return { agent, fluxInventories: await mkdtemp(path.join(scratch, `${agent}-`)), argoApps: new Map() };
  }

  /**
   * Syncs every cluster directory of `rendered` as its own Kustomization or Application (named
   * `<namespace>-<cluster>`, as the wiring names them); a directory synced before and gone now is
   * synced with nothing, which is what deleting its Kustomization or Application amounts to. Under
   * Flux, a label Job it created then runs as the kubelet would run it. Returns what failed: a
   * Flux-applied Job's log, or an Argo CD sync's phase and message with each failed resource's.
   */
  async function sync(state: AgentState, rendered: string): Promise<string[]> {
    const clusters = path.join(rendered, "clusters");
    const builds = new Map<string, string>();
    /** Each Application's destination namespace: its directory's parent, as the ApplicationSet says. */
    const destinations = new Map<string, string>();
    for (const file of filesUnder(clusters).filter((entry) => entry.endsWith("kustomization.yaml"))) {
      const dir = path.dirname(file);
      const relative = path.relative(clusters, dir);
      builds.set(relative.replace("/", "-"), await kustomizeOnce(dir));
      destinations.set(relative.replace("/", "-"), path.dirname(relative));
    }
    // A Kustomization whose path left Git is deleted and prunes what it applied. An Application
    // whose directory left Git is deleted by the ApplicationSet, which sets
    // `preserveResourcesOnDeletion`: nothing is pruned, so it is not synced at all.
    if (state.agent === "flux") {
      const known = (await readdir(state.fluxInventories)).map((file) => file.replace(/\.json$/, ""));
      for (const name of known) if (!builds.has(name)) builds.set(name, "");
    }

    const namespaces = new Set<string>();
    for (const manifests of builds.values()) {
      for (const object of objectsOf(manifests)) namespaces.add(object.metadata.namespace ?? "default");
    }
    await ensureNamespaces(kubectl, namespaces);
    const failures: string[] = [];
    for (const [name, manifests] of builds) {
      if (state.agent === "flux") {
        const report = await fluxApply(
          plane,
          name,
          manifests,
          path.join(state.fluxInventories, `${name}.json`),
        );
        // The label Jobs run as the kubelet would run them; the KUD and Software Jobs install
        // clusters over SSH and are not run here, as under Argo CD, where they are not hooks.
        const labelJobs = objectsOf(manifests).filter(
          (object) => object.kind === "Job" && object.metadata.name.startsWith("bmh-labels-"),
        );
        for (const job of labelJobs) {
          if (report[`Job/${job.metadata.namespace}/${job.metadata.name}`] !== "created") continue;
          const run = await runJob(plane, job);
          if (run.failed)
            failures.push(`Job ${job.metadata.namespace}/${job.metadata.name} failed: ${run.log}`);
        }
      } else {
        const app = state.argoApps.get(name) ?? {
          name,
          namespace: destinations.get(name) ?? "default",
          syncOptions: ARGO_SYNC_OPTIONS,
        };
        state.argoApps.set(name, app);
        const result = await argoSync(plane, app, manifests);
        if (result.phase !== "Succeeded") failures.push(argoFailure(result));
      }
    }
    return failures;
  }

  /** Removes what an earlier case left, and registers the site's BareMetalHosts by `creator`. */
  async function register(inventory: readonly string[], creator: Creator): Promise<Map<string, KubeObject>> {
    const namespaces = JSON.parse(await must(kubectl, ["get", "namespaces", "-o", "json"])) as {
      items: KubeObject[];
    };
    for (const namespace of namespaces.items.map((item) => item.metadata.name)) {
      if (namespace.startsWith("kube-")) continue;
      await must(kubectl, ["delete", RENDERED_KINDS, "--all", "-n", namespace, "--timeout=30s"]);
    }
    const files = inventory.flatMap((entry) => (/\.(ya?ml|json)$/.test(entry) ? [entry] : filesUnder(entry)));
    const hosts = (await readObjects(files)).filter((object) => object.kind === "BareMetalHost");
    await ensureNamespaces(
      kubectl,
      hosts.map((host) => host.metadata.namespace ?? "default"),
    );
    await CREATORS[creator](kubectl, hosts.map((host) => stringify(registrable(host))).join("---\n"));
    const live = await liveHosts(kubectl);
    expect(live.size).toBe(
      new Set(hosts.map((host) => `${host.metadata.namespace}/${host.metadata.name}`)).size,
    );
    return live;
  }

  /** Asserts the promise: against `before`, only SIP labels (as `rendered` wants them) changed. */
  async function expectOnlySipLabelsChanged(
    before: Map<string, KubeObject>,
    rendered: string,
  ): Promise<void> {
    const after = await liveHosts(kubectl);
    const labelled = await expectedLabels(rendered);
    for (const [id, host] of before) {
      const now = after.get(id);
      expect(now, `${id} still exists`).toBeDefined();
      expect(changes(host, now!), id).toEqual([]);
      const wanted = labelled.has(id) ? (labelled.get(id) ?? {}) : sipLabels(host);
      expect(sipLabels(now!), `${id} SIP labels`).toEqual(wanted);
    }
  }

  for (const agent of AGENTS) {
    for (const creator of Object.keys(CREATORS) as Creator[]) {
      // Both agents label hosts through the same label Job (`kubectl label`, a merge patch of labels
      // only; decision 0040), so how a host was made is proved against it under Flux for every way;
      // Argo CD's real engine, a minute a case, runs it onto hosts made the riskiest way (decision 0015).
      if (agent === "argocd" && creator !== "kubectl apply") continue;
      for (const site of renderedSites()) {
        // The way a host was made matters only where the site patches hosts; the target must be one
        // the site renders for.
        if (!site.patchesHosts && creator !== "kubectl apply") continue;
        if (!site.targets.includes(agent)) continue;
        it(
          `${site.name}: ${agent} onto BMHs made by ${creator}`,
          async () => {
            const before = await register(site.inventory, creator);
            expect(await sync(await newAgentState(agent), site.rendered)).toEqual([]);
            await expectOnlySipLabelsChanged(before, site.rendered);
          },
          CASE_TIMEOUT[agent],
        );
      }

      it(
        `${agent} onto BMHs made by ${creator}: a release removes exactly the SIP labels, and no BMH is ever deleted`,
        async () => {
          const example = path.join(REPO, "examples", "site");
          const retired = path.join(REPO, "test", "scenarios", "sip-retired", "expected");
          const before = await register([path.join(example, "inventory")], creator);
          const state = await newAgentState(agent);
          expect(await sync(state, path.join(example, "rendered"))).toEqual([]);
          // tenant-a deleted from specs/: its directory holds a label-removing Job for a generation…
          expect(await sync(state, retired)).toEqual([]);
          await expectOnlySipLabelsChanged(before, retired);
          // …then leaves Git: the agent prunes what it applied, never a BareMetalHost.
          const gone = await mkdtemp(path.join(scratch, "gone-"));
          await cp(retired, gone, { recursive: true });
          await rm(path.join(gone, "clusters", "edge-sip"), { recursive: true });
          expect(await sync(state, gone)).toEqual([]);
          await expectOnlySipLabelsChanged(before, retired);
        },
        CASE_TIMEOUT[agent],
      );
    }

    it(
      `${agent}: a host deleted after the inventory snapshot is not created, fails only the label Job, named, and the rest applies`,
      async () => {
        const example = path.join(REPO, "examples", "site");
        const rendered = path.join(example, "rendered");
        const before = await register([path.join(example, "inventory")], "kubectl apply");
        const deleted = "metal3/r01-node-02";
        await must(kubectl, ["delete", "baremetalhost", "-n", "metal3", "r01-node-02"]);
        before.delete(deleted);

        const failures = await sync(await newAgentState(agent), rendered);
        expect(failures).toHaveLength(1);
        // Flux: the Job failed; Argo CD's engine: the sync ended Failed on the PostSync hook, after
        // every Sync-phase wave was applied. Either names the Job and the host.
        expect(failures[0]).toMatch(
          agent === "flux"
            ? /^Job edge-sip\/bmh-labels-tenant-a-[0-9a-f]{8} failed/
            : /^sync Failed: one or more synchronization tasks completed unsuccessfully\nPostSync Job edge-sip\/bmh-labels-tenant-a-[0-9a-f]{8}: /,
        );
        expect(failures[0]).toContain(
          "BareMetalHost metal3/r01-node-02 not found: not labelled; deleted since the inventory snapshot?",
        );
        expect((await liveHosts(kubectl)).has(deleted)).toBe(false);
        await expectOnlySipLabelsChanged(before, rendered);
        // The cluster's load balancers and jump host were applied all the same.
        const services = await must(kubectl, ["get", "deployments,services", "-n", "edge-sip", "-o", "name"]);
        for (const name of [
          "jumphost-tenant-a",
          "loadbalancer-controlplane-tenant-a",
          "loadbalancer-worker-tenant-a",
        ]) {
          expect(services).toContain(`deployment.apps/${name}`);
          expect(services).toContain(`service/${name}`);
        }
      },
      CASE_TIMEOUT[agent],
    );
  }
});

/**
 * A sync that did not succeed, as Argo CD shows it: the operation's phase and message, each resource
 * whose sync or hook failed with its message, and the output of each Job that failed.
 */
function argoFailure(result: ArgoSyncResult): string {
  const resources = (result.resources ?? [])
    .filter((resource) => resource.status === "SyncFailed" || resource.hookPhase === "Failed")
    .map(
      (resource) =>
        `${resource.hookType ?? ""} ${resource.kind} ${resource.namespace}/${resource.name}: ${resource.message}`,
    );
  const jobs = (result.jobs ?? [])
    .filter((job) => !job.succeeded)
    .map((job) => `Job ${job.namespace}/${job.name} output: ${job.output}`);
  return [`sync ${result.phase}: ${result.message}`, ...resources, ...jobs].join("\n");
}

function objectsOf(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
}
