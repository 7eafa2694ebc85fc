import { evaluateSite } from "../synth/evaluate.ts";
import { hasErrors, type Issue } from "../synth/issue.ts";
import type { SitePlan } from "../synth/plan/model.ts";
import { renderSite, type RenderedCluster } from "./render.ts";
import { readSite, type SiteInput, type SiteLocation } from "./site-reader.ts";

/** A site read and judged by every rule: what `validate` reports and `explain` explains. */
export interface SiteEvaluation {
  readonly input: SiteInput;
  /** The planner's decisions; `explain` reads them even when `issues` has errors. */
  readonly plan: SitePlan;
  /** Reading and evaluation findings, errors and warnings. */
  readonly issues: readonly Issue[];
}

/** A site read, judged by every rule and, when no rule found an error, rendered in memory. */
export interface SiteRender {
  readonly input: SiteInput;
  /** Reading and evaluation findings, errors and warnings. */
  readonly issues: readonly Issue[];
  /** The tree synth would write; undefined when `issues` has errors (nothing may be written then). */
  readonly rendered?: { readonly files: Map<string, string>; readonly clusters: RenderedCluster[] };
}

/** Reads a site and runs the whole rule catalogue and the planner on it. */
export async function evaluateFromSite(location: SiteLocation): Promise<SiteEvaluation> {
  const input = await readSite(location);
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  return { input, plan: evaluation.plan, issues: [...input.issues, ...evaluation.issues] };
}

/** The synth pipeline up to, not including, the write: what `diff` compares and `commit` writes. */
export async function renderFromSite(location: SiteLocation): Promise<SiteRender> {
  const { input, plan, issues } = await evaluateFromSite(location);
  if (hasErrors(issues)) return { input, issues };
  return { input, issues, rendered: renderSite(plan, input.settings) };
}
