import { evaluateFromSite } from "../../gitops/render-site.ts";
import { formatIssues } from "../../gitops/report/report.ts";
import { hasErrors } from "../../synth/issue.ts";
import { EXIT, outputFormat, parseSiteArgs, siteLocation, summary, type Console } from "../common.ts";

/** `metalsynth validate`: every diagnostic of the site; exit 1 when any is an error. */
export async function validate(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseSiteArgs(argv);
  const format = outputFormat(values.format);
  const { issues } = await evaluateFromSite(siteLocation(values));
  io.out(formatIssues(issues, format));
  if (format === "text") io.err(`${summary(issues)}\n`);
  return hasErrors(issues) ? EXIT.invalid : EXIT.ok;
}
