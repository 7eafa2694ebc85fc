import { formatPath } from "./field-path.ts";
import { compareIssues, compareText, issueText, oneLine, type Issue } from "./issue.ts";
import type { InvalidResource } from "./model/resource.ts";
import type { ClusterPlan, Decision, SitePlan } from "./plan/model.ts";
import { fitHistogram, rejectionText } from "./rules/filters.ts";
import { resourceKey } from "./site/resources.ts";

/** One decision, explained: the chosen hosts and every rejected host with its reason. */
export interface ExplainedDecision {
  readonly subject: string;
  readonly path: string;
  readonly chosen: readonly { readonly host: string; readonly reason: string }[];
  readonly rejected: readonly { readonly host: string; readonly reason: string }[];
  /** The same histogram `no-fit` prints, over the rejected hosts. */
  readonly summary: string;
  /** Why nothing was chosen when the entry itself is at fault: `<rule>: <message>`. */
  readonly problem?: string;
}

/** `metalsynth explain` for one cluster (docs/contract.md §3.3). */
export interface Explanation {
  readonly cluster: string;
  readonly kind: "Provisioning" | "SIPCluster";
  readonly decisions: readonly ExplainedDecision[];
}

/**
 * The clusters of a plan matching `name` (`cluster` or `namespace/cluster`): one BPA and one SIP
 * plan may share an identity, so both are explained.
 */
export function explainCluster(plan: SitePlan, name: string, hostCount: number): Explanation[] {
  return plan.clusters
    .filter((cluster) => cluster.key === name || cluster.name === name)
    .map((cluster) => explain(cluster, hostCount));
}

function explain(cluster: ClusterPlan, hostCount: number): Explanation {
  return {
    cluster: cluster.key,
    kind: cluster.kind === "bpa" ? "Provisioning" : "SIPCluster",
    decisions: cluster.decisions.map((decision) => explainDecision(decision, hostCount)),
  };
}

/** One decision of a site of `hostCount` hosts, explained (`explain`, and the map's unplaced nodes). */
export function explainDecision(decision: Decision, hostCount: number): ExplainedDecision {
  const rejected = [...decision.rejected()].sort((a, b) => compareText(a.host, b.host));
  return {
    subject: decision.subject,
    path: formatPath(decision.path),
    chosen: decision.chosen,
    rejected: rejected.map(({ host, rejection }) => ({ host, reason: rejectionText(rejection) })),
    summary: fitHistogram(
      hostCount,
      decision.chosen.length,
      rejected.map((found) => found.rejection),
    ),
    ...(decision.problem === undefined ? {} : { problem: decision.problem }),
  };
}

/**
 * Human-readable explanation: chosen hosts, the histogram, then each rejected host. One line per
 * item whatever a node label or a problem's message holds (see {@link oneLine}).
 */
export function explanationText(
  explanations: readonly Explanation[],
  /**
   * Rejected hosts listed per decision; the rest are counted (the summary line already says why).
   * A region's cluster explained host by host is tens of thousands of lines no one reads.
   * @default every one
   */
  rejectedShown = Number.POSITIVE_INFINITY,
): string {
  const lines: string[] = [];
  for (const explanation of explanations) {
    lines.push(`${explanation.kind} ${explanation.cluster}`);
    for (const decision of explanation.decisions) {
      lines.push(`  ${decision.subject}  (${decision.path})`);
      if (decision.chosen.length === 0) lines.push("    chosen:   none");
      if (decision.problem !== undefined) lines.push(`    problem:  ${decision.problem}`);
      for (const chosen of decision.chosen) lines.push(`    chosen:   ${chosen.host}  ${chosen.reason}`);
      if (decision.rejected.length > 0) {
        lines.push(`    ${decision.summary}`);
        for (const rejected of decision.rejected.slice(0, rejectedShown))
          lines.push(`    rejected: ${rejected.host}  ${rejected.reason}`);
        const more = decision.rejected.length - rejectedShown;
        if (more > 0) lines.push(`    … and ${more} more rejected (--all lists every host)`);
      }
    }
  }
  return `${lines.map(oneLine).join("\n")}\n`;
}

/**
 * A cluster the site names that has no plan: CRs of it failed their schema or names, so the planner
 * never saw it (docs/contract.md §3.3). Explain says so, with the findings, instead of claiming the
 * cluster does not exist.
 */
export interface FailedCluster {
  /** `namespace/name`. */
  readonly cluster: string;
  /** `Kind/namespace/name` of each CR of the cluster that failed, sorted. */
  readonly failed: readonly string[];
  /** The findings about those CRs, sorted as validate reports them. */
  readonly issues: readonly Issue[];
}

/**
 * The clusters matching `name` (`cluster` or `namespace/cluster`) among the CRs that failed their
 * rules (`invalid`, from evaluateSite), with their findings out of `issues`. A BPA CR belongs to
 * the cluster of its `cluster` label (one without is in no cluster), a SIPCluster to its name.
 */
export function failedClusters(
  invalid: readonly InvalidResource[],
  issues: readonly Issue[],
  name: string,
): FailedCluster[] {
  const clusters = new Map<string, Set<string>>();
  for (const resource of invalid) {
    const cluster = resource.kind === "SIPCluster" ? resource.name : resource.cluster;
    if (cluster === undefined) continue;
    const key = `${resource.namespace}/${cluster}`;
    if (key !== name && cluster !== name) continue;
    const failed = clusters.get(key) ?? new Set();
    clusters.set(key, failed.add(resourceKey(resource.kind, resource.namespace, resource.name)));
  }
  return [...clusters]
    .sort(([a], [b]) => compareText(a, b))
    .map(([cluster, failed]) => ({
      cluster,
      failed: [...failed].sort(compareText),
      issues: issues
        .filter((found) => found.object !== undefined && failed.has(found.object))
        .sort(compareIssues),
    }));
}

/** Each failed cluster, its CRs, then their findings one per line as validate prints them. */
export function failedClustersText(clusters: readonly FailedCluster[]): string {
  return clusters
    .map(({ cluster, failed, issues }) => {
      const crs =
        failed.length === 1
          ? `its CR ${failed[0]} failed its rules`
          : `its CRs ${failed.join(", ")} failed their rules`;
      const lines = [`${cluster}: nothing is planned, because ${crs}:`, ...issues.map(issueText)];
      return `${lines.map(oneLine).join("\n")}\n`;
    })
    .join("");
}
