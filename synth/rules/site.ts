/**
 * The rules that look across a site's CRs but not at the inventory (docs/contract.md §2): `duplicate-object`
 * and `cluster-ref` (one Provisioning/Software/glue per cluster, Cluster glue references, Software
 * without a Provisioning). NodePorts used twice are in `synth/rules/sip.ts`.
 */
import { clusterKey, type ClusterKey } from "../cluster-key.ts";
import { compareText, type Issue } from "../issue.ts";
import type { SiteModel } from "../model/site.ts";
import { reporter } from "./reporter.ts";
import type { AnyResource, InvalidResource } from "../model/resource.ts";

/** `duplicate-object`: the same kind/namespace/name twice; only the first one is read. */
export function duplicateObjects(resources: readonly AnyResource[]): {
  unique: AnyResource[];
  issues: Issue[];
} {
  const issues: Issue[] = [];
  const seen = new Map<string, AnyResource>();
  const unique: AnyResource[] = [];
  for (const resource of resources) {
    const earlier = seen.get(resource.key);
    if (earlier) {
      const where = earlier.document.position(earlier.basePath);
      issues.push(
        reporter(resource)(
          "duplicate-object",
          ["metadata", "name"],
          `${resource.key} is already defined at ${where.file}:${where.line}`,
        ),
      );
      continue;
    }
    seen.set(resource.key, resource);
    unique.push(resource);
  }
  return { unique, issues };
}

/**
 * `cluster-ref`: one Provisioning, Software and glue per cluster, glue references that fit, and no
 * Software without a Provisioning. A reference to an `invalid` CR (one that failed its schema,
 * already reported) is not reported again as a reference to nothing.
 */
export function clusterReferences(model: SiteModel, invalid: readonly InvalidResource[]): Issue[] {
  const invalidProvisionings = invalid.filter((resource) => resource.kind === "Provisioning");
  const invalidSoftwares = invalid.filter((resource) => resource.kind === "Software");
  return [
    ...onePerCluster(model.provisionings),
    ...onePerCluster(model.softwares),
    ...onePerCluster(model.glues),
    ...glueReferences(model, [...invalidProvisionings, ...invalidSoftwares]),
    ...softwareWithoutProvisioning(model, invalidProvisionings),
  ];
}

type ClusterMember = { readonly resource: AnyResource; readonly cluster?: string };

/** A cluster has one Provisioning (one hosts.ini), one Software, one glue. */
function onePerCluster(members: readonly ClusterMember[]): Issue[] {
  const first = new Map<string, ClusterMember>();
  const issues: Issue[] = [];
  for (const member of members) {
    if (!member.cluster) continue;
    const key = clusterKey(member.resource.namespace, member.cluster);
    const earlier = first.get(key);
    if (!earlier) first.set(key, member);
    else {
      issues.push(
        reporter(member.resource, key)(
          "cluster-ref",
          ["metadata", "labels", "cluster"],
          `cluster ${key} already has ${earlier.resource.kind} ${earlier.resource.name}; a cluster has one ${member.resource.kind}`,
        ),
      );
    }
  }
  return issues;
}

/** `namespace/name` → member, so each glue reference is one lookup (the webhook re-checks the site per request). */
function byName(members: readonly ClusterMember[]): Map<string, ClusterMember> {
  const index = new Map<string, ClusterMember>();
  for (const member of members) {
    const key = `${member.resource.namespace}/${member.resource.name}`;
    if (!index.has(key)) index.set(key, member);
  }
  return index;
}

function glueReferences(model: SiteModel, invalid: readonly InvalidResource[]): Issue[] {
  if (model.glues.length === 0) return [];
  const provisionings = byName(model.provisionings);
  const softwares = byName(model.softwares);
  const invalidKeys = new Set(
    invalid.map((resource) => `${resource.kind}/${resource.namespace}/${resource.name}`),
  );
  return model.glues.flatMap((glue) => {
    const report = reporter(glue.resource, glue.cluster && clusterKey(glue.resource.namespace, glue.cluster));
    const check = (
      field: "provisioningCR" | "softwareCR",
      candidates: ReadonlyMap<string, ClusterMember>,
      kind: string,
    ): Issue[] => {
      const name = glue[field];
      if (name === undefined) return [];
      const target = candidates.get(`${glue.resource.namespace}/${name}`);
      if (!target && invalidKeys.has(`${kind}/${glue.resource.namespace}/${name}`)) return [];
      if (!target) {
        const known = [...candidates.values()]
          .filter((candidate) => candidate.resource.namespace === glue.resource.namespace)
          .map((candidate) => candidate.resource.name)
          .sort(compareText);
        return [
          report(
            "cluster-ref",
            ["spec", field],
            `no ${kind} "${name}" in namespace ${glue.resource.namespace}${known.length > 0 ? ` (found: ${known.join(", ")})` : ""}`,
          ),
        ];
      }
      if (glue.cluster && target.cluster !== glue.cluster) {
        return [
          report(
            "cluster-ref",
            ["spec", field],
            `${kind} "${name}" belongs to cluster "${target.cluster ?? "?"}", not "${glue.cluster}"`,
          ),
        ];
      }
      return [];
    };
    return [
      ...check("provisioningCR", provisionings, "Provisioning"),
      ...check("softwareCR", softwares, "Software"),
    ];
  });
}

function softwareWithoutProvisioning(model: SiteModel, invalid: readonly InvalidResource[]): Issue[] {
  const clusters = new Set<ClusterKey>();
  for (const provisioning of model.provisionings) {
    if (provisioning.cluster) clusters.add(clusterKey(provisioning.resource.namespace, provisioning.cluster));
  }
  for (const provisioning of invalid) {
    if (provisioning.cluster) clusters.add(clusterKey(provisioning.namespace, provisioning.cluster));
  }
  return model.softwares.flatMap((software) => {
    if (!software.cluster) return [];
    const key = clusterKey(software.resource.namespace, software.cluster);
    if (clusters.has(key)) return [];
    return [
      reporter(software.resource, key)(
        "cluster-ref",
        ["metadata", "labels", "cluster"],
        `no Provisioning for cluster ${key}: Software installs on a cluster's hosts, so the cluster must be provisioned here`,
      ),
    ];
  });
}
