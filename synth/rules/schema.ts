/**
 * The rules of reading a CR against its schema (docs/contract.md §2): `schema` (unknown field, wrong type, with
 * a "did you mean" for near field names), `unknown-kind`, and the API server's own grammar for what a
 * CR carries to it (`name-invalid`, `metadata-invalid`). `synth/site/resources.ts` and the settings
 * reader call them; `secret-inline` is in `synth/rules/secrets.ts`.
 */
import type { z } from "zod";
import {
  EXPECTED,
  MAX_ANNOTATION_BYTES,
  annotationsSize,
  parseAnnotations,
  parseDnsLabel,
  parseDnsSubdomain,
  parseLabels,
  parseLabelValue,
  qualifiedNameProblem,
  type Annotations,
  type DnsLabel,
  type DnsSubdomain,
  type Labels,
} from "../checked.ts";
import type { FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import { describe, isRecord } from "../inventory/raw.ts";
import { editDistance } from "../mac.ts";
import { KINDS, apiVersionOf } from "../schema/kinds.ts";
import { structuralSchema } from "../schema/openapi.ts";
import type { Reporter } from "../model/resource.ts";

/** `schema`: a document of specs/ that is not an object at all. */
export function notAnObject(value: unknown, report: Reporter): Issue {
  return report("schema", [], `expected a Kubernetes object, found ${describe(value)}`);
}

/**
 * `name-invalid`: a CR's namespace and name reach object namespaces, object names and rendered/'s
 * paths, so they must be Kubernetes names: the namespace a DNS-1123 label, the name a DNS-1123
 * subdomain (a SIPCluster's length, as a label value, is `sip-cluster-name`'s). The checked names, or
 * the findings.
 */
export function crNames(
  kind: string,
  namespace: string,
  name: string,
  report: Reporter,
): { namespace: DnsLabel; name: DnsSubdomain } | Issue[] {
  const checkedNamespace = parseDnsLabel(namespace);
  const checkedName = parseDnsSubdomain(name);
  if (checkedNamespace !== undefined && checkedName !== undefined) {
    return { namespace: checkedNamespace, name: checkedName };
  }
  const issues: Issue[] = [];
  if (checkedNamespace === undefined) {
    const found = JSON.stringify(namespace);
    const message = `${found} is not a namespace: expected ${EXPECTED.dnsLabel}`;
    issues.push(report("name-invalid", ["metadata", "namespace"], message));
  }
  if (checkedName === undefined) {
    const message = `${JSON.stringify(name)} is not a ${kind} name: expected ${EXPECTED.dnsSubdomain}`;
    issues.push(report("name-invalid", ["metadata", "name"], message));
  }
  return issues;
}

/**
 * `metadata-invalid`: a CR's own labels and annotations reach the API server in its cluster's
 * `specs.yaml` (docs/contract.md §4), which refuses the object, and Flux or Argo CD the whole
 * directory, when a label key is not a qualified name, a label value not a label value, an annotation
 * key not a qualified name (lowercased first, as the server checks it) or the annotations are over
 * 256 KiB. One finding per entry, at `metadata.labels["bad key"]`; values of another type than string
 * are `schema`'s. The checked maps, or the findings (none when only `schema` refused them).
 *
 * The size is `too-large`'s in a spec file, whose document is refused before it is read as a CR; the
 * check here keeps {@link Annotations} true to its type for CRs that come another way (the webhook's).
 */
export function crMetadata(
  metadata: Readonly<Record<string, unknown>>,
  report: Reporter,
): { labels: Labels; annotations: Annotations } | Issue[] {
  const labels = stringEntries(metadata.labels);
  const annotations = stringEntries(metadata.annotations);
  const issues: Issue[] = [];
  for (const [key, value] of Object.entries(isRecord(metadata.labels) ? metadata.labels : {})) {
    const problems: string[] = [];
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem !== undefined)
      problems.push(
        `label key ${JSON.stringify(key)} is not a qualified name (${keyProblem}): expected ${EXPECTED.qualifiedName}`,
      );
    if (typeof value === "string" && parseLabelValue(value) === undefined) {
      const fix = labelValueFix(value);
      const hint = fix === undefined ? "" : ` (did you mean ${JSON.stringify(fix)}?)`;
      problems.push(
        `label ${JSON.stringify(key)} has value ${JSON.stringify(value)}, expected ${EXPECTED.labelValue}${hint}`,
      );
    }
    if (problems.length > 0)
      issues.push(report("metadata-invalid", ["metadata", "labels", key], problems.join("; ")));
  }
  for (const key of Object.keys(isRecord(metadata.annotations) ? metadata.annotations : {})) {
    const problem = qualifiedNameProblem(key.toLowerCase());
    if (problem === undefined) continue;
    issues.push(
      report(
        "metadata-invalid",
        ["metadata", "annotations", key],
        `annotation key ${JSON.stringify(key)} is not a qualified name (${problem}): expected ${EXPECTED.qualifiedName}; the value may be any text`,
      ),
    );
  }
  const size = annotations === undefined ? 0 : annotationsSize(annotations);
  if (size > MAX_ANNOTATION_BYTES) {
    issues.push(
      report(
        "metadata-invalid",
        ["metadata", "annotations"],
        `annotations total ${size} bytes, over the Kubernetes limit of ${MAX_ANNOTATION_BYTES} (256 KiB of keys and values)`,
      ),
    );
  }
  const checkedLabels = labels && parseLabels(labels);
  const checkedAnnotations = annotations && parseAnnotations(annotations);
  if (issues.length > 0 || checkedLabels === undefined || checkedAnnotations === undefined) return issues;
  return { labels: checkedLabels, annotations: checkedAnnotations };
}

/**
 * `value` as a map of strings (`{}` when absent), `undefined` when it is something else or holds a
 * value of another type: the schema's finding.
 */
function stringEntries(value: unknown): Readonly<Record<string, string>> | undefined {
  if (value === undefined) return {};
  if (!isRecord(value)) return undefined;
  for (const entry of Object.values(value)) if (typeof entry !== "string") return undefined;
  return value as Readonly<Record<string, string>>;
}

/** The label value nearest `value` (runs of other characters as '-'), when that one is valid. */
function labelValueFix(value: string): string | undefined {
  const fix = value
    .replace(/[^-A-Za-z0-9_.]+/g, "-")
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "")
    .slice(0, 63)
    .replace(/[^A-Za-z0-9]+$/, "");
  return fix !== "" && parseLabelValue(fix) !== undefined ? fix : undefined;
}

/** `schema`: `metalsynth.yaml` with more than one document; only the first is read. */
export function extraSettingsDocument(report: Reporter): Issue {
  return report("schema", [], "metalsynth.yaml holds one document");
}

/** `unknown-kind`: the right apiVersion for a known kind, a near kind, or the kinds there are. */
export function unknownKind(apiVersion: unknown, kind: unknown, report: Reporter): Issue {
  return report(
    "unknown-kind",
    typeof kind === "string" ? ["kind"] : [],
    unknownKindMessage(apiVersion, kind),
  );
}

function unknownKindMessage(apiVersion: unknown, kind: unknown): string {
  const known = Object.values(KINDS).map((definition) => `${apiVersionOf(definition)} ${definition.kind}`);
  if (typeof kind === "string") {
    const sameKind = Object.values(KINDS).find((definition) => definition.kind === kind);
    if (sameKind) {
      return `${kind} must have apiVersion ${apiVersionOf(sameKind)}, found ${describe(apiVersion)}`;
    }
    const close = Object.values(KINDS).find(
      (definition) => editDistance(definition.kind.toLowerCase(), kind.toLowerCase()) <= 2,
    );
    if (close) return `unknown kind "${kind}" (did you mean ${close.kind}?)`;
    return `unknown kind "${kind}" in specs/ (expected one of: ${known.join(", ")})`;
  }
  return `document has no kind (expected one of: ${known.join(", ")})`;
}

/** `schema`: a zod issue as metalsynth issues, with the field path and a readable message. */
export function schemaIssues(
  schema: z.ZodType,
  object: unknown,
  zodIssue: z.core.$ZodIssue,
  report: Reporter,
): Issue[] {
  const path: FieldPath = zodIssue.path.map((segment) =>
    typeof segment === "number" ? segment : String(segment),
  );
  const found = valueAt(object, path);
  switch (zodIssue.code) {
    case "unrecognized_keys":
      return zodIssue.keys.map((key) => {
        const known = knownFields(schema, path);
        const close = known.filter((name) => editDistance(name.toLowerCase(), key.toLowerCase()) <= 2);
        const hint =
          close.length > 0
            ? ` (did you mean ${close.join(" or ")}?)`
            : known.length > 0
              ? ` (expected one of: ${known.join(", ")})`
              : "";
        return report("schema", [...path, key], `unknown field "${key}"${hint}`);
      });
    case "invalid_type":
      return [
        report(
          "schema",
          path,
          found === undefined
            ? `required field is missing (expected ${zodIssue.expected})`
            : `expected ${zodIssue.expected}, found ${describe(found)}`,
        ),
      ];
    case "invalid_value":
      return [
        report(
          "schema",
          path,
          `expected ${zodIssue.values.map((value) => JSON.stringify(value)).join(" or ")}, found ${describe(found)}`,
        ),
      ];
    case "invalid_union":
      return [report("schema", path, unionMessage(path, found))];
    case "too_small":
    case "too_big":
      return [
        report("schema", path, `${describe(found)}: ${zodIssue.message.replace(/^Too (small|big): /, "")}`),
      ];
    default:
      return [report("schema", path, zodIssue.message)];
  }
}

function unionMessage(path: FieldPath, found: unknown): string {
  if (path.at(-1) === "memory") {
    // A fraction below 1024 is a size in GiB written without its unit, as with bare numbers (0014).
    const fix = typeof found === "number" && found > 0 && found < 1024 ? ` (did you mean "${found}Gi"?)` : "";
    return `expected a quantity such as "64Gi" or "4096Mi", or a whole number of bytes, found ${describe(found)}${fix}`;
  }
  return `${describe(found)} matches none of the allowed shapes (${unionHint(path)})`;
}

function unionHint(path: FieldPath): string {
  const field = path.find((segment) => segment === "masterSoftware" || segment === "workerSoftware");
  if (field) return "a package name, or `<name>: {version: <debian version>}`";
  return "see the CRD schema";
}

const structuralCache = new WeakMap<z.ZodType, unknown>();

/** Field names the schema allows at `path`, for "did you mean" hints. */
function knownFields(schema: z.ZodType, path: FieldPath): string[] {
  let node = structuralCache.get(schema);
  if (node === undefined) structuralCache.set(schema, (node = structuralSchema(schema)));
  for (const segment of path) {
    if (!isRecord(node)) return [];
    if (typeof segment === "number") node = node.items;
    else if (isRecord(node.properties) && segment in node.properties) node = node.properties[segment];
    else node = node.additionalProperties;
  }
  return isRecord(node) && isRecord(node.properties) ? Object.keys(node.properties) : [];
}

/** The value at `path` in a plain object, `undefined` if absent. */
export function valueAt(value: unknown, path: FieldPath): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === "number") current = current[segment];
    else if (isRecord(current) && typeof segment === "string") current = current[segment];
    else return undefined;
  }
  return current;
}
