import { availableParallelism } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { App } from "cdk8s";
import { objectsOf } from "../charts/index.ts";
import { addSiteWiringCharts, clusterDirectoryCharts } from "../charts/site.ts";
import { compareText } from "../synth/issue.ts";
import { LOCK_FILE } from "../synth/plan/lock-file.ts";
import type { RenderPlan } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { toYaml, toYamlStream } from "../synth/codec/yaml-output.ts";
import { lockText } from "./render-incremental.ts";
import {
  APPLICATION_SET_FILE,
  directoryInputsDigest,
  directoryPlace,
  FilesDigest,
  KUSTOMIZATION_FILE,
  planDirectories,
  thisRenderer,
  unitHeader,
  wiringInputsDigest,
  type PlanShare,
  type RenderedCluster,
} from "./render-units.ts";

export type { PlanShare, RenderedCluster } from "./render-units.ts";
// What of rendered/ is metalsynth's lives beside the writer, which needs no cdk8s (decision 0057).
export { checkOutput, writeRendered, type WriteRenderedOptions } from "./render-write.ts";
export { isRenderedFile } from "./rendered-file.ts";

/** A site's `rendered/` tree in memory, and what it holds per cluster directory. */
export interface RenderedSite {
  /** Relative path → file content. */
  readonly files: Map<string, string>;
  readonly clusters: RenderedCluster[];
}

/** Options of {@link renderSite}. */
export interface RenderOptions {
  /**
   * How many worker threads render cluster directories besides this one; with 0 this thread renders
   * them all. The output is the same either way.
   * @default one per core but one on a machine with more than one, for a plan of at least
   *   {@link PARALLEL_FROM} directories; otherwise 0
   */
  readonly workers?: number;
  /**
   * How many cluster directories a thread takes at a time: enough that messages cost little, few
   * enough that the threads finish together and a worker's heap holds only that many directories.
   * @default 100
   */
  readonly shareSize?: number;
}

/**
 * Cluster directories below which worker threads are not worth starting. Each takes most of a
 * second to load cdk8s-plus before it renders anything, and a heap of its own: at 10,000
 * directories one worker cost 8 s of CPU and 115 MiB of peak RSS more than this thread rendering
 * alone (12 s of CPU), which put a region's first render over 1 GiB. This thread renders about two
 * thousand directories a second since decision 0057, so a region is rendered here, and the
 * workers are for sites larger than any measured (decision 0019's 2,000 raised by 0057).
 */
export const PARALLEL_FROM = 50_000;

/**
 * The complete `rendered/` tree of a plan (docs/contract.md §4) as relative path → file content: the lock; per
 * cluster its component files plus a `kustomization.yaml` listing them in sorted order; and the Argo
 * CD and Flux wiring the site's settings ask for. A large plan is rendered by this thread and worker
 * threads together, in shares of whole cluster directories, put together in plan order (decision
 * 0019).
 */
export async function renderSite(
  plan: RenderPlan,
  settings: SiteSettings,
  options: RenderOptions = {},
): Promise<RenderedSite> {
  const rendered = await renderDirectories(planDirectories(plan), settings, options);
  const files = new Map([[LOCK_FILE, lockText(plan)]]);
  for (const [file, content] of renderSiteWiring(settings)) files.set(file, content);
  for (const share of rendered) for (const [file, content] of share.wiring) files.set(file, content);
  for (const share of rendered) for (const [file, content] of share.files) files.set(file, content);
  return { files, clusters: rendered.flatMap((share) => share.clusters) };
}

/**
 * Renders whole cluster directories (each a share of one directory, in plan order) on this thread,
 * or with worker threads for many of them; the results keep their order.
 */
export async function renderDirectories(
  directories: readonly PlanShare[],
  settings: SiteSettings,
  options: RenderOptions = {},
): Promise<RenderedShare[]> {
  const workers = options.workers ?? defaultWorkers(directories.length);
  const shares = planShares(directories, workers > 0 ? (options.shareSize ?? 100) : directories.length);
  if (workers > 0) return renderInWorkers(shares, settings, workers);
  return shares.map((share) => renderShare(share, settings));
}

/**
 * The site's own wiring files (the Argo CD ApplicationSet, when the site asks for Argo CD), each
 * with its header (decision 0057).
 */
export function renderSiteWiring(settings: SiteSettings): Map<string, string> {
  const files = new Map<string, string>();
  const app = new App({ recordConstructMetadata: false });
  for (const [file, chart] of addSiteWiringCharts(app, settings)) {
    const body = toYamlStream(objectsOf(chart));
    const header = file === APPLICATION_SET_FILE ? applicationSetHeader(body, settings) : "";
    files.set(file, `${header}${body}`);
  }
  return files;
}

function applicationSetHeader(body: string, settings: SiteSettings): string {
  const renderer = thisRenderer();
  const inputs = wiringInputsDigest(settings, renderer);
  const files = new FilesDigest().add(APPLICATION_SET_FILE, body).digest();
  return unitHeader({ version: renderer.version, inputs, files }, "file");
}

/** What a {@link PlanShare} renders to, each list in plan order; plain data, so it can cross threads. */
export interface RenderedShare {
  /** The directories' Flux Kustomizations: path in `rendered/` and content. */
  readonly wiring: readonly (readonly [string, string])[];
  /** The directories' files: path in `rendered/` and content. */
  readonly files: readonly (readonly [string, string])[];
  readonly clusters: readonly RenderedCluster[];
}

/**
 * Renders the cluster directories of a share. Each directory gets an App of its own and is serialised
 * before the next is built, so only one directory's construct tree is alive at a time.
 */
export function renderShare(share: PlanShare, settings: SiteSettings): RenderedShare {
  const wiring: [string, string][] = [];
  const files: [string, string][] = [];
  const clusters: RenderedCluster[] = [];
  const renderer = thisRenderer();
  const allocations = new Map<string, PlanShare["allocations"][number]>(
    share.allocations.map((allocation) => [allocation.key, allocation]),
  );
  const specs = new Map<string, PlanShare["specs"][number]>(
    share.specs.map((cluster) => [cluster.key, cluster]),
  );
  const directories = clusterDirectoryCharts(
    share,
    settings,
    () => new App({ recordConstructMetadata: false }),
  );
  for (const cluster of directories) {
    const digest = new FilesDigest();
    for (const [file, chart] of cluster.wiring) {
      const content = toYamlStream(objectsOf(chart));
      wiring.push([file, content]);
      digest.add(file, content);
    }
    const resources = [...cluster.files.keys()].sort(compareText);
    let objects = 0;
    for (const name of resources) {
      const content = objectsOf(cluster.files.get(name)!);
      objects += content.length;
      const file = `${cluster.directory}/${name}`;
      const text = toYamlStream(content);
      files.push([file, text]);
      digest.add(file, text);
    }
    const kustomization = `${cluster.directory}/${KUSTOMIZATION_FILE}`;
    const body = toYaml({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources });
    // The directory alone, as the next synth reads it back (render-incremental.ts).
    const own = {
      clusters: cluster.plans,
      retired: cluster.retired ? [cluster.retired] : [],
      allocations: [allocations.get(cluster.key)].filter((found) => found !== undefined),
      specs: [specs.get(cluster.key)].filter((found) => found !== undefined),
    };
    const header = {
      version: renderer.version,
      inputs: directoryInputsDigest(own, settings, renderer),
      files: digest.add(kustomization, body).digest(),
    };
    files.push([kustomization, `${unitHeader(header, "directory")}${body}`]);
    const place = directoryPlace(own, settings);
    clusters.push({ cluster: cluster.key, directory: cluster.directory, roles: place?.roles ?? [], objects });
  }
  return { wiring, files, clusters };
}

/** Directories joined into shares of `size`, in order. */
function planShares(directories: readonly PlanShare[], size: number): PlanShare[] {
  const shares: PlanShare[] = [];
  for (let start = 0; start < directories.length; start += size) {
    const slice = directories.slice(start, start + size);
    shares.push({
      clusters: slice.flatMap((directory) => directory.clusters),
      retired: slice.flatMap((directory) => directory.retired),
      allocations: slice.flatMap((directory) => directory.allocations),
      specs: slice.flatMap((directory) => directory.specs),
    });
  }
  return shares;
}

/** One worker per core but this thread's, which renders too. */
function defaultWorkers(directories: number): number {
  const cores = availableParallelism();
  return cores > 1 && directories >= PARALLEL_FROM ? cores - 1 : 0;
}

/**
 * Renders the shares on `count` worker threads and this one, each taking the next share when it is
 * done with one; the results keep the shares' order, whoever finishes first. This thread renders a
 * share at a time between taking the workers' answers, so each worker is sent two shares ahead and is
 * never left waiting for it. Rendering here rather than on one more worker saves that worker's start
 * (most of a second) and its compiler's warm-up (decision 0019).
 */
async function renderInWorkers(
  shares: readonly PlanShare[],
  settings: SiteSettings,
  count: number,
): Promise<RenderedShare[]> {
  const results: RenderedShare[] = [];
  let next = 0;
  const take = (): number | undefined => (next < shares.length ? next++ : undefined);
  const feed = async (worker: RenderWorker): Promise<void> => {
    const sent: Promise<void>[] = [];
    const send = (): void => {
      const index = take();
      if (index !== undefined)
        sent.push(worker.render(shares[index]!).then((share) => void (results[index] = share)));
    };
    send();
    send();
    try {
      for (let answer = sent.shift(); answer; answer = sent.shift()) {
        await answer;
        send();
      }
    } finally {
      // After a failure the share still out fails the same way; settled here, it is not left unhandled.
      await Promise.allSettled(sent);
    }
  };
  const workers = Array.from({ length: Math.min(count, shares.length) }, () => new RenderWorker(settings));
  let failure: { error: unknown } | undefined;
  try {
    const fed = Promise.all(workers.map(feed)).catch((error: unknown) => void (failure ??= { error }));
    for (let index = take(); index !== undefined && !failure; index = take()) {
      results[index] = renderShare(shares[index]!, settings);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await fed;
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  if (failure) throw failure.error;
  return results;
}

/** The module a render worker runs: `render-worker.js` beside the compiled code, `.ts` beside the sources. */
const WORKER_MODULE = new URL(
  `./render-worker${path.extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

/** One worker thread running {@link renderShare}: it answers the shares it is sent in order. */
class RenderWorker {
  readonly #worker: Worker;
  readonly #pending: { resolve: (share: RenderedShare) => void; reject: (error: unknown) => void }[] = [];
  /** Why the worker is gone, once it is: a share sent after that would never be answered. */
  #failure?: unknown;

  constructor(settings: SiteSettings) {
    this.#worker = new Worker(workerEntry(), { workerData: settings });
    this.#worker.on("message", (share: RenderedShare) => this.#pending.shift()?.resolve(share));
    this.#worker.on("error", (error) => this.#fail(error));
    this.#worker.on("exit", (code) => this.#fail(new Error(`a render worker exited (code ${code})`)));
  }

  render(share: PlanShare): Promise<RenderedShare> {
    return new Promise((resolve, reject) => {
      if (this.#failure !== undefined) return reject(this.#failure);
      this.#pending.push({ resolve, reject });
      this.#worker.postMessage(share);
    });
  }

  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }

  #fail(error: unknown): void {
    this.#failure ??= error;
    for (const pending of this.#pending.splice(0)) pending.reject(this.#failure);
  }
}

/**
 * Where a worker starts. Compiled JavaScript runs as it is. From the TypeScript sources (tsx, tests) a
 * worker thread inherits no loader hooks on Node 20, so it imports the module through tsx's API.
 */
function workerEntry(): URL {
  if (!WORKER_MODULE.pathname.endsWith(".ts")) return WORKER_MODULE;
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const code = `const { tsImport } = await import(${tsx}); await tsImport(${JSON.stringify(WORKER_MODULE.href)}, import.meta.url);`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
