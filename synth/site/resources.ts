import type { SourceDocument } from "../documents.ts";
import type { FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import { DEFAULT_NAMESPACE, isRecord } from "../inventory/raw.ts";
import type { AnyResource, InvalidResource } from "../model/resource.ts";
import { kindFor } from "../schema/kinds.ts";
import { reporter } from "../rules/reporter.ts";
import { crMetadata, crNames, notAnObject, schemaIssues, unknownKind } from "../rules/schema.ts";
import { secretInline } from "../rules/secrets.ts";

/** The `Kind/namespace/name` key of an object. */
export function resourceKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/**
 * Classifies the documents of the site's `specs/`: unwraps `kind: List`, refuses unknown kinds (typo
 * protection), validates each CR against its schema, its names and its labels and annotations
 * against the API server's grammar, and scans it for inline secrets. Objects with any of these errors
 * are reported and left out, so later rules (and `specs.yaml`) only ever see well-typed input.
 */
export function readResources(documents: readonly SourceDocument[]): {
  resources: AnyResource[];
  invalid: InvalidResource[];
  issues: Issue[];
} {
  const resources: AnyResource[] = [];
  const invalid: InvalidResource[] = [];
  const issues: Issue[] = [];
  for (const document of documents) {
    const value = document.value;
    if (isRecord(value) && value.kind === "List" && Array.isArray(value.items)) {
      value.items.forEach((item, index) => read(document, item, ["items", index]));
    } else {
      read(document, value, []);
    }
  }
  return { resources: resources.sort((a, b) => compareText(a.key, b.key)), invalid, issues };

  function read(document: SourceDocument, value: unknown, basePath: FieldPath): void {
    const metadata = isRecord(value) && isRecord(value.metadata) ? value.metadata : {};
    const name = typeof metadata.name === "string" ? metadata.name : "";
    const namespace = typeof metadata.namespace === "string" ? metadata.namespace : DEFAULT_NAMESPACE;
    const kind = isRecord(value) ? value.kind : undefined;
    const key = resourceKey(typeof kind === "string" ? kind : "?", namespace, name);
    const report = reporter({ document, basePath, key });
    if (!isRecord(value)) {
      issues.push(notAnObject(value, report));
      return;
    }
    const definition = kindFor(value.apiVersion, kind);
    if (!definition) {
      issues.push(unknownKind(value.apiVersion, kind, report));
      return;
    }
    issues.push(...secretInline(value, report));
    const parsed = definition.schema.safeParse(value);
    if (!parsed.success) {
      issues.push(
        ...parsed.error.issues.flatMap((zodIssue) =>
          schemaIssues(definition.schema, value, zodIssue, report),
        ),
      );
    }
    // A missing or non-string name is the schema's finding; any other is checked, schema error or not.
    const names = name === "" ? [] : crNames(definition.kind, namespace, name, report);
    if (Array.isArray(names)) issues.push(...names);
    // Labels and annotations likewise: every finding in one go, and no unchecked one reaches specs.yaml.
    const checkedMetadata = crMetadata(metadata, report);
    if (Array.isArray(checkedMetadata)) issues.push(...checkedMetadata);
    if (!parsed.success || Array.isArray(names) || Array.isArray(checkedMetadata)) {
      const cluster = isRecord(metadata.labels) ? metadata.labels.cluster : undefined;
      invalid.push({
        kind: definition.kind,
        namespace,
        name,
        ...(typeof cluster === "string" ? { cluster } : {}),
      });
      return;
    }
    // safeParse succeeded against this kind's schema, so the data has that kind's type.
    resources.push({
      kind: definition.kind,
      namespace: names.namespace,
      name: names.name,
      labels: checkedMetadata.labels,
      annotations: checkedMetadata.annotations,
      key,
      object: parsed.data,
      document,
      basePath,
    } as AnyResource);
  }
}
