import type { SourceDocument } from "../documents.ts";
import type { Issue } from "../issue.ts";
import { SiteSettingsSchema, UNSET_SETTINGS, type ParsedSiteSettings } from "../schema/settings.ts";
import { extraSettingsDocument, schemaIssues } from "../rules/schema.ts";
import { secretInline } from "../rules/secrets.ts";
import { reporter } from "../rules/reporter.ts";

/**
 * Validates `metalsynth.yaml` like a CR. Invalid settings are reported and the defaults used, so the
 * rest of the site is still checked in the same run.
 */
export function readSettings(documents: readonly SourceDocument[]): {
  settings: ParsedSiteSettings;
  issues: Issue[];
} {
  const [document, ...extra] = documents;
  if (!document) return { settings: UNSET_SETTINGS, issues: [] };
  const report = reporter({ document, basePath: [], key: "SiteSettings/metalsynth.yaml" });
  const issues: Issue[] = extra.map((other) =>
    extraSettingsDocument(reporter({ document: other, basePath: [], key: "SiteSettings/metalsynth.yaml" })),
  );
  issues.push(...secretInline(document.value, report));
  const parsed = SiteSettingsSchema.safeParse(document.value);
  if (!parsed.success) {
    issues.push(
      ...parsed.error.issues.flatMap((zodIssue) =>
        schemaIssues(SiteSettingsSchema, document.value, zodIssue, report),
      ),
    );
    return { settings: UNSET_SETTINGS, issues };
  }
  return { settings: parsed.data, issues };
}
