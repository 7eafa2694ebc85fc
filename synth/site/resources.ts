import type { DnsLabel, DnsSubdomain } from "../checked.ts";
import type { SourceDocument } from "../documents.ts";
import { formatPath, type FieldPath } from "../field-path.ts";
import { compareText, issue, type Issue, type RuleId } from "../issue.ts";
import { DEFAULT_NAMESPACE, isRecord } from "../inventory/raw.ts";
import { kindFor, type CrKind } from "../schema/kinds.ts";
import type { ClusterSpec } from "../schema/cluster.ts";
import type { ProvisioningSpec } from "../schema/provisioning.ts";
import type { SipClusterSpec } from "../schema/sipcluster.ts";
import type { SoftwareSpec } from "../schema/software.ts";
import { crNames, notAnObject, schemaIssues, unknownKind } from "../rules/schema.ts";
import { secretInline } from "../rules/secrets.ts";

/** The typed object of each kind, after schema validation. */
interface SpecByKind {
  Provisioning: ProvisioningSpec;
  Software: SoftwareSpec;
  Cluster: ClusterSpec;
  SIPCluster: SipClusterSpec;
}

/** A schema-valid CR with the way back to its source lines. */
export interface Resource<K extends CrKind = CrKind> {
  readonly kind: K;
  /** Checked (`name-invalid`): it becomes the namespace of every object rendered for the CR. */
  readonly namespace: DnsLabel;
  /** Checked (`name-invalid`): it reaches object names and rendered/'s paths. */
  readonly name: DnsSubdomain;
  /** `Kind/namespace/name`: identity for "the object under review replaces the known one". */
  readonly key: string;
  readonly object: SpecByKind[K];
  readonly document: SourceDocument;
  /** Where the object sits in its document (`["items", 3]` inside a `kind: List`). */
  readonly basePath: FieldPath;
}

/**
 * A CR of a known kind that failed its schema: left out of the model, but remembered so that a CR
 * referring to it is not also told that it does not exist (one mistake, one finding).
 */
export interface InvalidResource {
  /** One of the {@link CrKind}s. */
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** `metadata.labels.cluster`, when it is a string. */
  readonly cluster?: string;
}

/** Any of the four kinds, discriminated by `kind`. */
export type AnyResource = { [K in CrKind]: Resource<K> }[CrKind];

/** The `Kind/namespace/name` key of an object. */
export function resourceKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** Builds one issue about a resource (see {@link reporter}). */
export type Reporter = (rule: RuleId, path: FieldPath, message: string) => Issue;

/**
 * Builds issues about a resource: resolves the field path to a line and column and tags the issue
 * with the object it is about.
 */
export function reporter(
  resource: Pick<Resource, "document" | "basePath" | "key">,
  cluster?: string,
): Reporter {
  const { basePath } = resource;
  return (rule, path, message) =>
    issue(rule, formatPath(path), message, {
      // The path as given when the CR is a document of its own: the document remembers the position
      // of each path it was asked about, and a review asks about the same paths again (decision 0042).
      source: resource.document.position(basePath.length === 0 ? path : [...basePath, ...path]),
      object: resource.key,
      ...(cluster === undefined ? {} : { cluster }),
    });
}

/**
 * Classifies the documents of the site's `specs/`: unwraps `kind: List`, refuses unknown kinds (typo
 * protection), validates each CR against its schema and scans it for inline secrets. Objects with
 * schema errors are reported and left out, so later rules only ever see well-typed input.
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
    if (!parsed.success || Array.isArray(names)) {
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
      key,
      object: parsed.data,
      document,
      basePath,
    } as AnyResource);
  }
}
