import type { SourceDocument } from "./documents.ts";
import { compareIssues, type Issue } from "./issue.ts";
import type { Inventory } from "./inventory/inventory.ts";
import type { Lock } from "./model/lock.ts";
import type { SitePlan } from "./plan/model.ts";
import type { SiteModel } from "./model/site.ts";
import { planSite } from "./plan/plan-site.ts";
import { renderedAddresses } from "./plan/rendered-addresses.ts";
import { addressClashes } from "./rules/addresses.ts";
import { siteModel } from "./site/model.ts";
import { readResources } from "./site/resources.ts";
import type { AnyResource, InvalidResource } from "./model/resource.ts";

/** The outcome of running every rule on a site: the plan (even with errors, for `explain`) and all issues. */
export interface Evaluation<P = SitePlan> {
  readonly model: SiteModel;
  readonly plan: P;
  /** Every finding, sorted (docs/contract.md §7). */
  readonly issues: readonly Issue[];
  /** The planner's findings, then the address clashes, unsorted: what a kept plan keeps (decision 0070). */
  readonly planIssues: readonly Issue[];
}

/** Plans `model`: the plan and the planner's findings, then the address clashes its addresses make. */
export type Planner<P> = (model: SiteModel) => { readonly plan: P; readonly issues: readonly Issue[] };

/** The planner of a site read from `inventory` and `lock`. */
function sitePlanner(inventory: Inventory, lock: Lock): Planner<SitePlan> {
  return (model) => {
    const { plan, issues } = planSite({ model, inventory, lock });
    return { plan, issues: [...issues, ...addressClashes(renderedAddresses(plan))] };
  };
}

/**
 * Runs the whole rule catalogue on already-read resources (the webhook's entry point); `invalid` are
 * the CRs that failed their schema, so references to them are not reported twice.
 */
export function evaluateResources(
  resources: readonly AnyResource[],
  inventory: Inventory,
  lock: Lock,
  invalid: readonly InvalidResource[] = [],
): Evaluation {
  return evaluateResourcesBy(resources, sitePlanner(inventory, lock), invalid);
}

function evaluateResourcesBy<P>(
  resources: readonly AnyResource[],
  planner: Planner<P>,
  invalid: readonly InvalidResource[],
): Evaluation<P> {
  const { model, issues: modelIssues } = siteModel(resources, invalid);
  const { plan, issues: planIssues } = planner(model);
  return { model, plan, planIssues, issues: [...modelIssues, ...planIssues].sort(compareIssues) };
}

/**
 * Runs the whole rule catalogue on the documents of a site's specs (validate and synth); `invalid`
 * are the CRs that failed their schema or names, which the plan leaves out (explain names them).
 */
export function evaluateSite(
  documents: readonly SourceDocument[],
  inventory: Inventory,
  lock: Lock,
): Evaluation & { readonly invalid: readonly InvalidResource[] } {
  return evaluateSiteBy(documents, sitePlanner(inventory, lock));
}

/** {@link evaluateSite} with the plan `planner` gives (a plan kept from an earlier run, decision 0070). */
export function evaluateSiteBy<P>(
  documents: readonly SourceDocument[],
  planner: Planner<P>,
): Evaluation<P> & { readonly invalid: readonly InvalidResource[] } {
  const { resources, invalid, issues } = readResources(documents);
  const evaluation = evaluateResourcesBy(resources, planner, invalid);
  return { ...evaluation, issues: [...issues, ...evaluation.issues].sort(compareIssues), invalid };
}
