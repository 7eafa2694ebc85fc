import { parseDnsLabel, type DnsLabel } from "./checked.ts";

declare const clusterKeyBrand: unique symbol;

/**
 * `namespace/name`: a cluster's identity (docs/contract.md §1.2), `namespace/<cluster label>` for the BPA kinds
 * and `namespace/<metadata.name>` for a SIPCluster, so CRs of different kinds naming the same cluster
 * in one namespace share a key. Made only by {@link clusterKey} and {@link parseClusterKey}.
 */
export type ClusterKey = string & { readonly [clusterKeyBrand]: true };

/** The key of cluster `name` in `namespace`. */
export function clusterKey(namespace: string, name: string): ClusterKey {
  return `${namespace}/${name}` as ClusterKey;
}

/** A SIPCluster's key: its namespace and name, as its lock entries and SIP labels name it. */
export function sipKey(resource: { readonly namespace: string; readonly name: string }): ClusterKey {
  return clusterKey(resource.namespace, resource.name);
}

/** A key read from outside (the lock, SIP labels, a path): `undefined` unless it is `namespace/name`. */
export function parseClusterKey(text: string): ClusterKey | undefined {
  const [namespace, name, ...rest] = text.split("/");
  return namespace && name && rest.length === 0 ? clusterKey(namespace, name) : undefined;
}

/** The namespace and name a key is made of. */
export function clusterKeyParts(key: ClusterKey): { readonly namespace: string; readonly name: string } {
  const slash = key.indexOf("/");
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The namespace and name of `key` as the DNS-1123 labels every cluster's derived object names are
 * made of, or `undefined` when either is not one (a key read from a lock or labels, unchecked).
 */
export function checkedClusterKeyParts(
  key: ClusterKey,
): { readonly namespace: DnsLabel; readonly name: DnsLabel } | undefined {
  const parts = clusterKeyParts(key);
  const namespace = parseDnsLabel(parts.namespace);
  const name = parseDnsLabel(parts.name);
  return namespace === undefined || name === undefined ? undefined : { namespace, name };
}
