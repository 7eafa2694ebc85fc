/**
 * `name-clash` (docs/contract.md §2): two clusters of the site whose rendered objects or files would share a
 * kind, namespace and name (or a path). The names come from `synth/names.ts`, as the charts' do, so
 * the rule sees exactly what synth would write. They are injective for each kind of object, so
 * what is left to refuse is a contract-fixed BPA name meeting a contract-fixed SIP name, and two names
 * shortened to the same hash (decision 0033).
 */
import type { DnsLabel } from "../checked.ts";
import { clusterKey, type ClusterKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import {
  authObjectNames,
  bpaObjectNames,
  clusterDirectoryName,
  labelJobName,
  labelRoleName,
  SERVICE_NAME_PREFIXES,
  serviceObjectName,
} from "../names.ts";
import type { SiteModel } from "../model/site.ts";
import { reporter } from "./reporter.ts";
import type { AnyResource } from "../model/resource.ts";

/** The CR a rendered name comes from, and the field that names its cluster. */
export interface NameSource {
  readonly resource: AnyResource;
  readonly cluster: ClusterKey;
  readonly path: FieldPath;
}

/** One thing a cluster renders, as the message names it. */
export interface RenderedName {
  /** `Kind namespace/name`, or the file or BareMetalHost-namespace objects it stands for. */
  readonly what: string;
  readonly source: NameSource;
}

/**
 * `name-clash`: one finding per pair of CRs whose clusters would render a shared object or file,
 * on the CR of the later cluster (by `namespace/name`), naming the earlier CR and every object the
 * two would share. CRs of one cluster (a Provisioning and a SIPCluster of one name) share its
 * directory and wiring by design, and their own names never meet.
 */
export function nameClashes(model: SiteModel): Issue[] {
  const byWhat = new Map<string, NameSource[]>();
  for (const { what, source } of renderedNames(model)) {
    const sources = byWhat.get(what);
    if (!sources) byWhat.set(what, [source]);
    else if (!sources.some((known) => known.cluster === source.cluster)) sources.push(source);
  }
  const pairs = new Map<string, { first: NameSource; later: NameSource; what: string[] }>();
  for (const [what, sources] of byWhat) {
    if (sources.length < 2) continue;
    const [first, ...later] = [...sources].sort(
      (a, b) => compareText(a.cluster, b.cluster) || compareText(a.resource.key, b.resource.key),
    );
    for (const source of later) {
      const key = `${source.resource.key}\n${first!.resource.key}`;
      const pair = pairs.get(key) ?? { first: first!, later: source, what: [] };
      pair.what.push(what);
      pairs.set(key, pair);
    }
  }
  return [...pairs.values()].map(({ first, later, what }) =>
    reporter(later.resource, later.cluster)(
      "name-clash",
      later.path,
      `cluster ${later.cluster} would render ${what.sort(compareText).join(", ")}, which ${first.resource.kind} ${first.resource.namespace}/${first.resource.name} (cluster ${first.cluster}) renders too: one would overwrite the other; rename one of the clusters`,
    ),
  );
}

/**
 * Every name the site's clusters would render, by the CR that makes it: a supported Provisioning
 * with a cluster label, a Software of a cluster that has one (of any cluster, with `everySoftware`:
 * what the webhook's snapshot needs to relate a Software to the CRs it could clash with before its
 * Provisioning is among them), every SIPCluster.
 */
export function renderedNames(model: SiteModel, everySoftware = false): RenderedName[] {
  const names: RenderedName[] = [];
  const add = (source: NameSource, what: string) => names.push({ what, source });
  const clusterLabel: FieldPath = ["metadata", "labels", "cluster"];
  const provisioned = new Set<ClusterKey>();
  for (const { resource, cluster, supported } of model.provisionings) {
    if (cluster === undefined || !supported) continue;
    const source = { resource, cluster: clusterKey(resource.namespace, cluster), path: clusterLabel };
    provisioned.add(source.cluster);
    const objects = bpaObjectNames(cluster);
    for (const configMap of [objects.addressBook, objects.hostsIni, objects.kubeconfigKustomization])
      add(source, `ConfigMap ${resource.namespace}/${configMap}`);
    for (const kind of ["ServiceAccount", "Role", "RoleBinding"])
      add(source, `${kind} ${resource.namespace}/${objects.installer}`);
    addDirectory(source, resource.namespace, cluster, add);
  }
  for (const { resource, cluster } of model.softwares) {
    if (cluster === undefined) continue;
    if (!everySoftware && !provisioned.has(clusterKey(resource.namespace, cluster))) continue;
    const source = { resource, cluster: clusterKey(resource.namespace, cluster), path: clusterLabel };
    add(source, `ConfigMap ${resource.namespace}/${bpaObjectNames(cluster).software}`);
  }
  for (const { resource, name, services } of model.sips) {
    const { namespace } = resource;
    const source = { resource, cluster: clusterKey(namespace, name), path: ["metadata", "name"] };
    for (const field of ["loadBalancerControlPlane", "loadBalancerWorker", "jumpHost", "auth"] as const) {
      (services[field] ?? []).forEach((_, index) => {
        const object = serviceObjectName(SERVICE_NAME_PREFIXES[field], name, index);
        for (const kind of ["ConfigMap", "Deployment", "Service"])
          add(source, `${kind} ${namespace}/${object}`);
      });
    }
    for (const auth of services.auth ?? []) {
      const objects = authObjectNames(name);
      for (const configMap of [objects.authenticationConfig, objects.tenantRbac])
        add(source, `ConfigMap ${namespace}/${configMap}`);
      if ("caSecret" in auth.serving) {
        for (const kind of ["Issuer", "Certificate"]) add(source, `${kind} ${namespace}/${objects.service}`);
        add(source, `Secret ${namespace}/${objects.tls}`);
      }
    }
    add(source, `ServiceAccount ${namespace}/${labelJobName(name)}`);
    add(source, `Role and RoleBinding ${labelRoleName(namespace, name)} in each BareMetalHost namespace`);
    addDirectory(source, namespace, name, add);
  }
  return names;
}

/**
 * A cluster directory's wiring: its Flux Kustomization, the file that holds it and its Argo CD
 * Application share one name. The directory itself is `clusters/<namespace>/<cluster>`, unique.
 */
function addDirectory(
  source: NameSource,
  namespace: DnsLabel,
  cluster: DnsLabel,
  add: (source: NameSource, what: string) => void,
): void {
  const name = clusterDirectoryName(namespace, cluster);
  add(source, `rendered/flux/${name}.yaml (Flux Kustomization and Argo CD Application ${name})`);
}
