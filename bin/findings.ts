import { githubAnnotations, sarifLog } from "../gitops/report/annotations.ts";
import { formatIssues } from "../gitops/report/report.ts";
import type { Issue } from "../synth/issue.ts";
import { packageVersion, type FindingFormat } from "./common.ts";

// Apart from common.ts, which the CLI entry imports: `--help` loads neither the rule catalogue nor
// the report writers.

/** A command's findings in one of the {@link FindingFormat}s. */
export function findingsIn(issues: readonly Issue[], format: FindingFormat): string {
  if (format === "github") return githubAnnotations(issues);
  if (format === "sarif") return sarifLog(issues, packageVersion());
  return formatIssues(issues, format);
}
