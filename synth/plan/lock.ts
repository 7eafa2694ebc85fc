import { hash8 } from "../content-hash.ts";
import { orderedNics } from "../inventory/canonical.ts";
import type { Host } from "../inventory/host.ts";
import type { Lock } from "../model/lock.ts";
import { LOCK_API_VERSION, LOCK_KIND } from "../rules/lock.ts";

export { LOCK_FILE } from "./lock-file.ts";

/**
 * What a released entry records of its host (`snapshot`): a hash of the facts the inventory gives
 * about it, labels included, but not where it was read. An unchanged snapshot gives the same hash, so
 * running synth again with the same inputs keeps the release (decision 0034). The facts are named
 * one by one, so a field `Host` gains later does not end every pending release on upgrade.
 */
export function hostSnapshot(host: Host): string {
  return hash8([
    host.id,
    host.labels,
    host.sipOwner,
    host.bootMac,
    // In the snapshot's order: an inspection that lists the same NICs in another order is the same
    // host. The NIC's facts named too: its speed, read since (decision 0065), is not in the hash.
    orderedNics(host).map(({ name, mac, ipv4, ipv6 }) => ({ name, mac, ipv4, ipv6 })),
    host.cpus,
    host.memoryBytes,
    host.provisioningState,
    host.networks,
    host.networkData,
    host.bmc,
  ]);
}

/** The lock file's content for a plan (written by synth, read back by the next run). */
export function lockDocument(lock: Lock): Record<string, unknown> {
  return {
    apiVersion: LOCK_API_VERSION,
    kind: LOCK_KIND,
    hosts: lock.entries.map((entry) => ({ ...entry })),
  };
}
