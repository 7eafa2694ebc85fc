import type { Issue } from "../issue.ts";
import type { SiteModel } from "../model/site.ts";
import { normalizeClusterGlue, normalizeProvisioning, normalizeSoftware } from "./bpa.ts";
import type { ClusterGlue, Provisioning, Software } from "../model/bpa.ts";
import type { AnyResource, InvalidResource } from "../model/resource.ts";
import { clusterReferences, duplicateObjects } from "../rules/site.ts";
import { nameClashes } from "../rules/names.ts";
import { nodePortClashes } from "../rules/sip.ts";
import { normalizeSipCluster } from "./sip.ts";
import type { SipCluster } from "../model/sip.ts";

/**
 * Normalises schema-valid resources into the site model and runs the checks that look across CRs
 * but not at the inventory (`synth/rules/site.ts`, `synth/rules/sip.ts`): duplicate objects, one
 * Provisioning/Software per cluster, Cluster glue references, NodePorts used twice, rendered names
 * two clusters would share. A reference to an `invalid` CR (one that failed its schema, already
 * reported) is not reported again as a reference to nothing.
 */
export function siteModel(
  resources: readonly AnyResource[],
  invalid: readonly InvalidResource[] = [],
): { model: SiteModel; issues: Issue[] } {
  const { unique, issues } = duplicateObjects(resources);

  const model: {
    provisionings: Provisioning[];
    softwares: Software[];
    glues: ClusterGlue[];
    sips: SipCluster[];
  } = { provisionings: [], softwares: [], glues: [], sips: [] };
  for (const resource of unique) {
    switch (resource.kind) {
      case "Provisioning": {
        const result = normalizeProvisioning(resource);
        model.provisionings.push(result.provisioning);
        issues.push(...result.issues);
        break;
      }
      case "Software": {
        const result = normalizeSoftware(resource);
        model.softwares.push(result.software);
        issues.push(...result.issues);
        break;
      }
      case "Cluster": {
        const result = normalizeClusterGlue(resource);
        model.glues.push(result.glue);
        issues.push(...result.issues);
        break;
      }
      case "SIPCluster": {
        const result = normalizeSipCluster(resource);
        if (result.sip) model.sips.push(result.sip);
        issues.push(...result.issues);
        break;
      }
    }
  }

  issues.push(...clusterReferences(model, invalid), ...nodePortClashes(model.sips), ...nameClashes(model));
  return { model, issues };
}
