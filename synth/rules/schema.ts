/**
 * The rules of reading a CR against its schema (docs/contract.md §2): `schema` (unknown field, wrong type, with
 * a "did you mean" for near field names) and `unknown-kind`. `synth/site/resources.ts` and the
 * settings reader call them; `secret-inline` is in `synth/rules/secrets.ts`.
 */
import type { z } from "zod";
import { EXPECTED, parseDnsLabel, parseDnsSubdomain, type DnsLabel, type DnsSubdomain } from "../checked.ts";
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
