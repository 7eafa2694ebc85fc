/** Allocations (`metalsynth.io/v1alpha1`, one per cluster) for the webhook's tests. */
import { ALLOCATION_API_VERSION, ALLOCATION_KIND } from "../../synth/schema/allocation.ts";

/** One Allocation as the API server lists it: the lock's entries of one cluster, without cluster and kind. */
export function allocation(
  namespace: string,
  name: string,
  kind: "bpa" | "sip",
  hosts: readonly Record<string, unknown>[],
) {
  return {
    apiVersion: ALLOCATION_API_VERSION,
    kind: ALLOCATION_KIND,
    metadata: { name, namespace, resourceVersion: "7", uid: `uid-${name}` },
    spec: { kind, hosts },
  };
}
