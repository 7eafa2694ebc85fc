import { evaluateSite } from "../synth/evaluate.ts";
import { hasErrors, type Issue } from "../synth/issue.ts";
import { renderSite, type RenderedCluster } from "./render.ts";
import { readSite, type SiteInput, type SiteLocation } from "./site-reader.ts";

/** A site read, judged by every rule and, when no rule found an error, rendered in memory. */
export interface SiteRender {
  readonly input: SiteInput;
  /** Reading and evaluation findings, errors and warnings. */
  readonly issues: readonly Issue[];
  /** The tree synth would write; undefined when `issues` has errors (nothing may be written then). */
  readonly rendered?: { readonly files: Map<string, string>; readonly clusters: RenderedCluster[] };
}

/** The synth pipeline up to, not including, the write: what `diff` compares and `commit` writes. */
export async function renderFromSite(location: SiteLocation): Promise<SiteRender> {
  const input = await readSite(location);
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  if (hasErrors(issues)) return { input, issues };
  return { input, issues, rendered: renderSite(evaluation.plan, input.settings) };
}
