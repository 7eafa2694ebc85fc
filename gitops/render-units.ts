/**
 * What a `rendered/` tree is made of, without rendering it (no cdk8s here, so a synth that renders
 * nothing never loads it): the units a render writes (each cluster directory with its Flux
 * Kustomization, and the site's Argo CD wiring), the digest of each unit's inputs and of its files,
 * and the header that records both at the top of the unit's first file (decision 0057).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { ClusterKey } from "../synth/cluster-key.ts";
import { canonicalJson } from "../synth/content-hash.ts";
import type { Host } from "../synth/inventory/host.ts";
import { clusterDirectoryName } from "../synth/names.ts";
import type { RetiredSipCluster } from "../synth/plan/model.ts";
import type { ClusterRender, RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";

/** What synth wrote for one cluster, for the CLI's summary. */
export interface RenderedCluster {
  readonly cluster: string;
  readonly directory: string;
  /** Per role (`master`, `worker`; `ControlPlane`, `Worker` for SIP), its hosts in plan order. */
  readonly roles: readonly { readonly role: string; readonly hosts: readonly string[] }[];
  readonly objects: number;
}

/** Whole cluster directories of a plan: rendered on their own, they give what the whole plan gives. */
export type PlanShare = Pick<RenderPlan, "clusters" | "retired" | "allocations" | "specs">;

/** The kustomization of every cluster directory, which carries the directory's header. */
export const KUSTOMIZATION_FILE = "kustomization.yaml";

/** The site's Argo CD wiring, which carries its own header. */
export const APPLICATION_SET_FILE = "argocd/applicationset.yaml";

/**
 * The plan's cluster directories in plan order, each as the share of the plan that renders it: the
 * plans of each (a BPA cluster and a SIPCluster of one name share one), then each retired
 * SIPCluster's.
 */
export function planDirectories(plan: RenderPlan): PlanShare[] {
  const directories = new Map<string, ClusterRender[]>();
  for (const cluster of plan.clusters) {
    const plans = directories.get(cluster.key);
    if (plans) plans.push(cluster);
    else directories.set(cluster.key, [cluster]);
  }
  const allocations = new Map(plan.allocations.map((allocation) => [allocation.key, allocation]));
  const specs = new Map(plan.specs.map((cluster) => [cluster.key, cluster]));
  const of = (key: ClusterKey) => ({
    allocations: [allocations.get(key)].filter((found) => found !== undefined),
    specs: [specs.get(key)].filter((found) => found !== undefined),
  });
  return [
    ...[...directories.values()].map((clusters) => ({ clusters, retired: [], ...of(clusters[0]!.key) })),
    ...plan.retired.map((retired) => ({ clusters: [], retired: [retired], ...of(retired.key) })),
  ];
}

/**
 * A plan's cluster directories as a render takes them: each directory's cluster key, in plan order,
 * its share asked for only when the directory is rendered (a kept plan reads it back then, decision
 * 0071), and the lock file's text.
 */
export interface PlanShares {
  readonly lock: string;
  readonly keys: readonly ClusterKey[];
  share(index: number): PlanShare;
}

/** The key of the cluster a share's directory renders: every plan of one directory has it. */
export function shareKey(share: PlanShare): ClusterKey {
  const identity = share.clusters[0] ?? share.retired[0];
  if (identity === undefined) throw new Error("shareKey: a share of no cluster (planDirectories gives none)");
  return identity.key;
}

/** Where one cluster directory's files go, and what it renders for the summary. */
export interface DirectoryPlace {
  readonly key: string;
  /** `clusters/<namespace>/<cluster>`, relative to `rendered/`. */
  readonly directory: string;
  /** Its Flux Kustomization's path in `rendered/`, when the site asks for Flux. */
  readonly flux?: string;
  /** Its hosts per role, as the summary prints them. */
  readonly roles: RenderedCluster["roles"];
}

/**
 * Where the directory of a share of one directory goes. Undefined for a share without a plan or a
 * retired SIPCluster (the render plan has none).
 */
export function directoryPlace(share: PlanShare, settings: SiteSettings): DirectoryPlace | undefined {
  const identity = share.clusters[0] ?? share.retired[0];
  if (identity === undefined) return undefined;
  const { key, namespace, name } = identity;
  const retired = share.retired[0];
  return {
    key,
    directory: `clusters/${namespace}/${name}`,
    ...(settings.gitops.targets.includes("flux") && {
      flux: `flux/${clusterDirectoryName(namespace, name)}.yaml`,
    }),
    roles: retired
      ? [{ role: "released", hosts: retired.released.map((host) => host.id) }]
      : share.clusters.flatMap(roleSummary),
  };
}

/** The hosts of each role, `label=host` for BPA nodes and `host (standby)` for SIP standbys. */
function roleSummary(cluster: ClusterRender): RenderedCluster["roles"] {
  if (cluster.kind === "sip") {
    const roles = [...new Set(cluster.members.map((member) => member.role))];
    return roles.map((role) => ({
      role,
      hosts: cluster.members
        .filter((member) => member.role === role)
        .map((member) => `${member.host.id}${member.standby ? " (standby)" : ""}`),
    }));
  }
  const describe = (node: { label: string; host: { id: string } }) => `${node.label}=${node.host.id}`;
  return [
    { role: "master", hosts: cluster.masters.map(describe) },
    { role: "worker", hosts: cluster.workers.map(describe) },
  ];
}

/**
 * What shapes the files a render writes besides the plan: metalsynth's version and those of the
 * libraries that write them, read once from their package files. A new version renders every unit
 * once (its headers change with it), so a changed chart never leaves an old file in place.
 */
export interface Renderer {
  /** metalsynth's version, which the headers show. */
  readonly version: string;
  /** The version and those of cdk8s, cdk8s-plus-27, constructs and yaml, which the digests cover. */
  readonly versions: string;
}

let renderer: Renderer | undefined;

/** This metalsynth as a {@link Renderer}. */
export function thisRenderer(): Renderer {
  renderer ??= readRenderer();
  return renderer;
}

function readRenderer(): Renderer {
  const require = createRequire(import.meta.url);
  const versionOf = (file: string): string => {
    const parsed: unknown = JSON.parse(readFileSync(require.resolve(file), "utf8"));
    const version: unknown =
      typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, "version") : "";
    return String(version);
  };
  // From gitops/ beside the sources, dist/gitops/ once compiled: the package's own package.json.
  // (A worker thread running the sources through tsx sees a query after the module's name.)
  const own = new URL(import.meta.url).pathname.endsWith(".ts") ? "../package.json" : "../../package.json";
  const version = versionOf(own);
  const libraries = ["cdk8s", "cdk8s-plus-27", "constructs", "yaml"].map(
    (name) => `${name} ${versionOf(`${name}/package.json`)}`,
  );
  return { version, versions: [`metalsynth ${version}`, ...libraries].join(", ") };
}

/**
 * The settings a cluster directory's files depend on: all but those only the site's wiring, the
 * inventory pull or the commit read. A setting added later is covered until it is left out here,
 * so a new one can cost a render, never leave a stale file.
 */
function directorySettings(settings: SiteSettings): unknown {
  // Canonical JSON leaves undefined members out.
  return {
    ...settings,
    inventory: undefined,
    git: undefined,
    gitops: { ...settings.gitops, argocd: undefined },
  };
}

/** The settings the site's Argo CD wiring depends on. */
function wiringSettings(settings: SiteSettings): unknown {
  return { ...settings.gitops, flux: undefined };
}

/**
 * The digest of everything a cluster directory's files are rendered from (decision 0057): its
 * plans (its CRs as the planner read them and the facts of the hosts it holds or releases), its
 * Allocation and CRs, the settings that shape its files ({@link directorySettings}) and the renderer.
 * Left out, as they shape no file: where a host is in the inventory files (an edit above it would
 * otherwise render every cluster again), and why the planner chose a SIP member. SHA-256 of canonical JSON, so key order never counts.
 */
export function directoryInputsDigest(share: PlanShare, settings: SiteSettings, by: Renderer): string {
  const inputs = {
    renderer: by.versions,
    settings: directorySettings(settings),
    clusters: share.clusters.map(withoutPositions),
    retired: share.retired.map(retiredWithoutPositions),
    allocations: share.allocations,
    specs: share.specs,
  };
  return sha256(canonicalJson(inputs));
}

/** The digest of what the site's Argo CD wiring is rendered from: its settings and the renderer. */
export function wiringInputsDigest(settings: SiteSettings, by: Renderer): string {
  return sha256(canonicalJson({ renderer: by.versions, settings: wiringSettings(settings) }));
}

function withoutPositions(cluster: ClusterRender): unknown {
  if (cluster.kind === "bpa") {
    const nodes = (list: typeof cluster.masters) =>
      list.map((node) => ({ ...node, host: hostFacts(node.host) }));
    return { ...cluster, masters: nodes(cluster.masters), workers: nodes(cluster.workers) };
  }
  // Why the planner chose a member (kept from the lock, chosen by label) shapes no file, and it
  // changes from the first render to the second, which must write nothing.
  const members = cluster.members.map((member) => ({
    ...member,
    reason: undefined,
    host: hostFacts(member.host),
  }));
  return { ...cluster, members, released: cluster.released.map(hostFacts) };
}

function retiredWithoutPositions(retired: RetiredSipCluster): unknown {
  return { ...retired, released: retired.released.map(hostFacts) };
}

/** A host without where its inventory file has it (left out of canonical JSON as undefined). */
function hostFacts(host: Host): unknown {
  return { ...host, source: undefined };
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * The digest of a unit's files: SHA-256 over each file's path, length and bytes, in path order, the
 * header-carrying file without its header. Fed file by file, from rendered text or from disk.
 */
export class FilesDigest {
  readonly #files: { readonly path: string; readonly content: string | Buffer }[] = [];

  add(path: string, content: string | Buffer): this {
    this.#files.push({ path, content });
    return this;
  }

  digest(): string {
    const hash = createHash("sha256");
    const files = this.#files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const { path, content } of files) {
      const bytes = typeof content === "string" ? Buffer.byteLength(content) : content.length;
      hash.update(`${path}\0${bytes}\0`);
      hash.update(content);
    }
    return hash.digest("hex");
  }
}

/** A unit's header: which metalsynth rendered it, from which inputs, into which files. */
export interface UnitHeader {
  readonly version: string;
  readonly inputs: string;
  readonly files: string;
}

const HEADER_LINES = 2;

/**
 * The two comment lines at the top of a unit's first file (`kustomization.yaml`, or the
 * ApplicationSet): reviewable in Git (a change of inputs shows as a change of one line), ignored
 * by kustomize, kubectl and the agents, never a timestamp. `what` is "directory" or "file".
 */
export function unitHeader(header: UnitHeader, what: string): string {
  return (
    `# Rendered by metalsynth ${header.version}, again only when this ${what}'s inputs or files change:\n` +
    `# inputs sha256:${header.inputs} files sha256:${header.files}\n`
  );
}

const HEADER =
  /^# Rendered by metalsynth (\S+), again only when this \w+'s inputs or files change:\n# inputs sha256:([0-9a-f]{64}) files sha256:([0-9a-f]{64})\n/;

/**
 * The header of a unit's first file and the bytes after it; undefined when the file has none (a
 * tree rendered before decision 0057, or a header edited by hand).
 */
export function readUnitHeader(content: Buffer): { header: UnitHeader; body: Buffer } | undefined {
  // The header is ASCII: its lines end within the first few hundred bytes.
  let end = -1;
  for (let line = 0; line < HEADER_LINES; line++) {
    end = content.indexOf(0x0a, end + 1);
    if (end < 0) return undefined;
  }
  const match = HEADER.exec(content.subarray(0, end + 1).toString("latin1"));
  if (!match) return undefined;
  const [, version = "", inputs = "", files = ""] = match;
  return { header: { version, inputs, files }, body: content.subarray(end + 1) };
}
