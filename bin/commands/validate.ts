import { parseArgs } from "node:util";
import { formatIssues } from "../../gitops/report.ts";
import { readSite } from "../../gitops/site-reader.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import { hasErrors } from "../../synth/issue.ts";
import { EXIT, outputFormat, SITE_OPTIONS, siteLocation, summary, type Console } from "../common.ts";

/** `metalsynth validate`: every diagnostic of the site; exit 1 when any is an error. */
export async function validate(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: SITE_OPTIONS, strict: true });
  const format = outputFormat(values.format);
  const input = await readSite(siteLocation(values));
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  io.out(formatIssues(issues, format));
  if (format === "text") io.err(`${summary(issues)}\n`);
  return hasErrors(issues) ? EXIT.invalid : EXIT.ok;
}
