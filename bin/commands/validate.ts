import { formatIssues } from "../../gitops/report/report.ts";
import { readSite } from "../../gitops/site-reader.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import { hasErrors } from "../../synth/issue.ts";
import { EXIT, outputFormat, parseSiteArgs, siteLocation, summary, type Console } from "../common.ts";

/** `metalsynth validate`: every diagnostic of the site; exit 1 when any is an error. */
export async function validate(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseSiteArgs(argv);
  const format = outputFormat(values.format);
  // readSite and evaluateSite, not render-site's evaluateFromSite: that module renders too, and
  // importing it would load cdk8s into a command that renders nothing (decision 0018).
  const input = await readSite(siteLocation(values));
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  io.out(formatIssues(issues, format));
  if (format === "text") io.err(`${summary(issues)}\n`);
  return hasErrors(issues) ? EXIT.invalid : EXIT.ok;
}
