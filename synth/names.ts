/**
 * The names metalsynth gives what it renders from the names of clusters and namespaces (issue #21,
 * docs/contract.md §2 "Derived names are injective"): a BPA cluster's objects, a SIPCluster's services and label
 * Job, and the Flux Kustomization and Argo CD Application of a cluster directory. Kept here, not in
 * `charts/`, because the `name-clash` rule computes the same names from the site model (decision
 * 0033). Jobs named after their content (`hashedJob` in `charts/metadata.ts`) are not here: their
 * hash covers the cluster's name.
 *
 * Two properties hold for every name below, over valid parts (namespaces and cluster names are
 * DNS-1123 labels):
 * - injective: different parts give different names, except where a name must be shortened to fit
 *   Kubernetes' limits, when a hash of the whole name decides (see {@link boundedName});
 * - bounded: each stays within the limit of what it names.
 */
import { createHash } from "node:crypto";
import type { DnsLabel } from "./checked.ts";

/** Longest label value and DNS label; also the longest name that is copied into a label value. */
export const MAX_LABEL_NAME = 63;

/** Hex digits of the hash a shortened name ends in. */
const HASH_LENGTH = 8;

/**
 * `wanted` if it is shorter than `max`; otherwise exactly `max` characters: its start, `-`, and the
 * first {@link HASH_LENGTH} hex digits of its SHA-256. A shortened name is always `max` long and a
 * kept one never is, so the two kinds never meet; two shortened names meet only when their wanted
 * names share a start and a hash, which the `name-clash` rule refuses. The hash is of the plain
 * text, so the Argo CD ApplicationSet's go template (sprig's `sha256sum`) computes the same name.
 * A start that ends in the `.` between two labels ends in `-` instead, so the name stays a DNS
 * subdomain.
 */
export function boundedName(wanted: string, max: number): string {
  if (wanted.length < max) return wanted;
  const start = wanted.slice(0, max - HASH_LENGTH - 1).replace(/\.$/, "-");
  return `${start}-${nameHash(wanted)}`;
}

/** The first {@link HASH_LENGTH} hex digits of the SHA-256 of `text`. */
function nameHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, HASH_LENGTH);
}

/**
 * What joins a namespace to a name in a flat space of names: `-` when the namespace has no dash
 * (`default`, where upstream BPA kept every CR, `metal3`), since the namespace then ends at the
 * first dash of the whole, as metalsynth has always named these; `.` for a namespace with a dash,
 * which neither part can contain. Either way the pair can be read back from the name.
 */
function namespaceJoint(namespace: string): "-" | "." {
  return namespace.includes("-") ? "." : "-";
}

/**
 * The name of cluster directory `<namespace>/<cluster>` among all of a site's: its Flux
 * Kustomization, the file that holds it (`rendered/flux/<name>.yaml`) and its Argo CD Application
 * (docs/contract.md §4): `default-cluster-xyz` for `default/cluster-xyz`, `edge-a.cluster-east` for
 * `edge-a/cluster-east`, `edge-a-cluster-east` for `edge/a-cluster-east`. At most 63 characters:
 * Flux copies a Kustomization's name into a label of every object it applies, and Argo CD's label
 * tracking does the same with an Application's name.
 * `charts/gitops-wiring.ts` spells the same function as a go template.
 */
export function clusterDirectoryName(namespace: DnsLabel, cluster: DnsLabel): string {
  return boundedName(`${namespace}${namespaceJoint(namespace)}${cluster}`, MAX_LABEL_NAME);
}

/**
 * The ServiceAccount of SIPCluster `cluster`'s label Job, in the cluster's namespace:
 * `bmh-labels-<cluster>`. The Job itself is named after its content (`hashedJob`, decision 0040).
 * At most 63 characters, like the Job names it once gave.
 */
export function labelJobName(cluster: DnsLabel): string {
  return boundedName(`bmh-labels-${cluster}`, MAX_LABEL_NAME);
}

/**
 * The Role and RoleBinding that let the label Job of `<namespace>/<cluster>` patch its hosts, in
 * each BareMetalHost namespace: {@link labelJobName} and the cluster's namespace, joined as in
 * {@link clusterDirectoryName} (one BareMetalHost namespace serves SIPClusters of many namespaces,
 * and `edge-sip/tenant-a` and `a-edge-sip/tenant` must not share one). RBAC names may be long.
 */
export function labelRoleName(namespace: DnsLabel, cluster: DnsLabel): string {
  return `${labelJobName(cluster)}${namespaceJoint(namespace)}${namespace}`;
}

/** The names of a BPA cluster's objects in its namespace (docs/contract.md §4.1). */
export interface BpaObjectNames {
  /** The address book ConfigMap `<cluster>-configmap`, a name upstream BPA published. */
  readonly addressBook: string;
  /** The ConfigMap holding hosts.ini. */
  readonly hostsIni: string;
  /** The ConfigMap of the KUD Job's kubeconfig step (decision 0006). */
  readonly kubeconfigKustomization: string;
  /** The ConfigMap of the Software CR's package lists. */
  readonly software: string;
  /** The KUD Job's ServiceAccount, Role and RoleBinding. */
  readonly installer: string;
}

/**
 * {@link BpaObjectNames} of cluster `cluster`: the cluster name and a suffix (a prefix for the
 * installer's identity). No suffix ends another, so the names of two clusters of one namespace
 * never meet; a SIPCluster's service names can meet them (`loadbalancer-controlplane-x` +
 * `-configmap` = `loadbalancer-controlplane-` + `x-configmap`), which the contract fixes on both sides, so
 * `name-clash` refuses that pair.
 */
export function bpaObjectNames(cluster: DnsLabel): BpaObjectNames {
  return {
    addressBook: `${cluster}-configmap`,
    hostsIni: `${cluster}-hosts-ini`,
    kubeconfigKustomization: `${cluster}-kubeconfig-kustomization`,
    software: `${cluster}-software`,
    installer: `kud-${cluster}`,
  };
}

/** The prefix of each SIP service's object names (docs/contract.md §4.2), by the `spec.services` field asking for it. */
export const SERVICE_NAME_PREFIXES = {
  loadBalancerControlPlane: "loadbalancer-controlplane",
  loadBalancerWorker: "loadbalancer-worker",
  jumpHost: "jumphost",
  auth: "auth",
} as const;

/** A DNS-1035 label: what a Service's name must be. */
/** What the objects of a SIP service kind are named after. */
export type ServiceNamePrefix = (typeof SERVICE_NAME_PREFIXES)[keyof typeof SERVICE_NAME_PREFIXES];

/**
 * `<prefix>-<cluster>` for the first service of a kind (docs/contract.md §4.2), `<prefix><index>-<cluster>` for
 * the service at `index` > 0 (`loadbalancer-controlplane1-x` for `loadbalancerControlPlane[1]`): the
 * name of its ConfigMap, Deployment and Service. The index goes before the cluster name because a
 * cluster name may end in `-1` itself: with `<prefix>-<cluster>-<index>`, the second service of
 * SIPCluster `x` and the first of SIPCluster `x-1` in the same namespace would be one object. A
 * first-service name continues the prefix with `-`, a further one with a digit, so the two forms
 * never meet.
 *
 * The Service of that name must be a DNS-1035 label of at most 63 characters: a prefix starts with a
 * letter and the cluster name is a DNS-1123 label, so only the length can be wrong, and a longer name
 * is shortened by {@link boundedName}.
 */
export function serviceObjectName(prefix: ServiceNamePrefix, cluster: DnsLabel, index: number): string {
  return boundedName(`${index === 0 ? prefix : `${prefix}${index}`}-${cluster}`, MAX_LABEL_NAME);
}

/**
 * The objects of a SIPCluster's `auth` service besides its ConfigMap, Deployment and Service
 * (`auth-<cluster>`, {@link serviceObjectName}), in the cluster's namespace (docs/contract.md §4.2,
 * decision 0058):
 * - `tls`: the Secret of its serving certificate when cert-manager issues it, `auth-<cluster>-tls`
 *   (a fixed suffix after an injective name stays injective);
 * - `authenticationConfig`: the ConfigMap holding the tenant API server's AuthenticationConfiguration;
 * - `tenantRbac`: the ConfigMap holding the tenant cluster's RBAC bindings.
 * No prefix of a SIP object name, followed by its `-`, starts another (`auth-` is not the start of
 * `authentication-config-`, whose fifth character is `e`), so no two SIPClusters share a name.
 */
export function authObjectNames(cluster: DnsLabel): {
  readonly service: string;
  readonly tls: string;
  readonly authenticationConfig: string;
  readonly tenantRbac: string;
} {
  const service = serviceObjectName(SERVICE_NAME_PREFIXES.auth, cluster, 0);
  return {
    service,
    tls: `${service}-tls`,
    authenticationConfig: `authentication-config-${cluster}`,
    tenantRbac: `tenant-rbac-${cluster}`,
  };
}
