/**
 * The webhook's resources, derived from what `npm run bench` measures (bench/webhook-memory.ts,
 * decision 0056): resident memory with `--from-cluster`, ready and idle, is about
 *
 *     MEMORY_BASE_MIB + hosts × MEMORY_PER_HOST_KIB + clusters × MEMORY_PER_CLUSTER_KIB
 *
 * and the Deployment requests that with {@link HEADROOM} for reviews and the churn of a re-list,
 * and limits it at twice the request. A pod far over its request is among the first a node under
 * memory pressure evicts; one at its request is not.
 */

/**
 * Measured: the process with its two review workers, extrapolated to nothing loaded (217 MiB on the
 * development machine, Node 24; three V8 isolates and the code each loads).
 */
export const MEMORY_BASE_MIB = 220;
/**
 * Measured: each BareMetalHost with its networkData Secret, 38 KiB (2k → 10k hosts at 200 clusters):
 * the informer's trimmed copy, the joined host, and each worker's copy of it and of the site's plan.
 */
export const MEMORY_PER_HOST_KIB = 40;
/**
 * Measured: each cluster, 94 KiB (200 → 1,000 clusters at 10k hosts): its CRs and Allocation, as
 * the informers and each worker hold them, and what each worker's snapshot plans of it.
 */
export const MEMORY_PER_CLUSTER_KIB = 96;
/** Over the measured idle figure: reviews, and a re-list holding two copies of a collection. */
export const HEADROOM = 1.25;

/** The site the default manifests are sized for: the measured hub. */
export const DEFAULT_SIZING = { hosts: 2000, clusters: 200 } as const;

/** What a site of `hosts` BareMetalHosts and `clusters` clusters needs, in MiB: request and limit. */
export function memoryFor(sizing: { readonly hosts: number; readonly clusters: number }): {
  readonly requestMiB: number;
  readonly limitMiB: number;
} {
  const idle =
    MEMORY_BASE_MIB + (sizing.hosts * MEMORY_PER_HOST_KIB + sizing.clusters * MEMORY_PER_CLUSTER_KIB) / 1024;
  // Rounded up to 64 MiB, so that small changes of the measurement move no manifest.
  const requestMiB = Math.ceil((idle * HEADROOM) / 64) * 64;
  return { requestMiB, limitMiB: 2 * requestMiB };
}
