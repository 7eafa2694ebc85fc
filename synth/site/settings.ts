import type { SourceDocument } from "../documents.ts";
import type { Issue } from "../issue.ts";
import { DEFAULT_SETTINGS, SiteSettingsSchema, type SiteSettings } from "../schema/settings.ts";
import { reporter, schemaIssues } from "./resources.ts";
import { secretFindings } from "../secrets.ts";

/**
 * Validates `metalsynth.yaml` like a CR. Invalid settings are reported and the defaults used, so the
 * rest of the site is still checked in the same run.
 */
export function readSettings(documents: readonly SourceDocument[]): {
  settings: SiteSettings;
  issues: Issue[];
} {
  const [document, ...extra] = documents;
  if (!document) return { settings: DEFAULT_SETTINGS, issues: [] };
  const report = reporter({ document, basePath: [], key: "SiteSettings/metalsynth.yaml" });
  const issues: Issue[] = extra.map((other) =>
    reporter({ document: other, basePath: [], key: "SiteSettings/metalsynth.yaml" })(
      "schema",
      [],
      "metalsynth.yaml holds one document",
    ),
  );
  issues.push(
    ...secretFindings(document.value).map((finding) =>
      report("secret-inline", finding.path, finding.message),
    ),
  );
  const parsed = SiteSettingsSchema.safeParse(document.value);
  if (!parsed.success) {
    issues.push(
      ...parsed.error.issues.flatMap((zodIssue) =>
        schemaIssues(SiteSettingsSchema, document.value, zodIssue, report),
      ),
    );
    return { settings: DEFAULT_SETTINGS, issues };
  }
  return { settings: parsed.data, issues };
}
