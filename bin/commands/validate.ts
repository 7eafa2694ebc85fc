import { readSite } from "../../gitops/site-reader.ts";
import { withStagedSite } from "../../gitops/staged-site.ts";
import { evaluateSite } from "../../synth/evaluate.ts";
import { hasErrors } from "../../synth/issue.ts";
import { checkLockTree, EXIT, siteLocation, summary, type Command } from "../common.ts";
import { findingsIn } from "../findings.ts";

/**
 * `metalsynth validate`: every diagnostic of the site (text, json, GitHub annotations or SARIF);
 * exit 1 when any is an error. With `--staged`, of the site as the Git index holds it.
 */
export const validate: Command<"validate"> = async ({ values }, io) => {
  const format = values.format ?? "text";
  const location = siteLocation(values);
  // Without the lock, its findings would be missing: a mistyped --out is said, not left silent.
  if (!values.staged) await checkLockTree(values.out);
  // readSite and evaluateSite, not render-site's evaluateFromSite: that module renders too, and
  // importing it would load cdk8s into a command that renders nothing (decision 0018).
  const input = values.staged ? await withStagedSite(location, "lock", readSite) : await readSite(location);
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  io.out(findingsIn(issues, format));
  // JSON and SARIF are documents on stdout; the count is for whoever reads a log.
  if (format === "text" || format === "github") io.err(`${summary(issues)}\n`);
  return hasErrors(issues) ? EXIT.invalid : EXIT.ok;
};
