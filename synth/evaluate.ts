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
export interface Evaluation {
  readonly model: SiteModel;
  readonly plan: SitePlan;
  /** Every finding, sorted (docs/contract.md §7). */
  readonly issues: readonly Issue[];
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
  const { model, issues: modelIssues } = siteModel(resources, invalid);
  const { plan, issues: planIssues } = planSite({ model, inventory, lock });
  const clashes = addressClashes(renderedAddresses(plan));
  return { model, plan, issues: [...modelIssues, ...planIssues, ...clashes].sort(compareIssues) };
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
  const { resources, invalid, issues } = readResources(documents);
  const evaluation = evaluateResources(resources, inventory, lock, invalid);
  return { ...evaluation, issues: [...issues, ...evaluation.issues].sort(compareIssues), invalid };
}
