import { z } from "zod";

/** A JSON value as JSON Schema / OpenAPI generators produce it. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/**
 * The CRD `openAPIV3Schema` for a zod schema: zod's OpenAPI 3.0 output made *structural* as
 * apiextensions.k8s.io/v1 requires (every node typed, no `additionalProperties: false` beside
 * `properties`, unions expressed with the Kubernetes extensions).
 */
export function structuralSchema(schema: z.ZodType): JsonObject {
  const generated: unknown = z.toJSONSchema(schema, {
    target: "openapi-3.0",
    io: "input",
    reused: "inline",
    unrepresentable: "any",
  });
  return structural(toJson(generated));
}

function structural(node: JsonObject): JsonObject {
  const anyOf = node.anyOf;
  if (Array.isArray(anyOf)) {
    const types = anyOf.map((member) => (isObject(member) ? member.type : undefined));
    const rest = omit(node, ["anyOf"]);
    // int-or-string is the one scalar union Kubernetes models natively (quantities, ports).
    if (types.length === 2 && types.includes("string") && types.includes("integer")) {
      return { ...rest, "x-kubernetes-int-or-string": true };
    }
    // Other unions (a package is a name or a one-key map) can't be structural: keep the value as
    // written and let metalsynth's validator, which runs in the webhook, check its shape.
    return { ...rest, "x-kubernetes-preserve-unknown-fields": true };
  }
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (
      key === "propertyNames" ||
      key === "$schema" ||
      (key === "required" && Array.isArray(value) && value.length === 0)
    )
      continue;
    if (key === "additionalProperties" && value === false) continue; // pruning does this in Kubernetes
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue; // zod's int() bounds are noise
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === "properties" && isObject(value)) {
      result[key] = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [name, isObject(child) ? structural(child) : child]),
      );
    } else if ((key === "items" || key === "additionalProperties") && isObject(value)) {
      result[key] = structural(value);
    } else {
      result[key] = value;
    }
  }
  if (
    Object.keys(result).length === 0 ||
    (result.type === undefined && !("x-kubernetes-preserve-unknown-fields" in result))
  ) {
    return { ...result, "x-kubernetes-preserve-unknown-fields": true };
  }
  return result;
}

function toJson(value: unknown): JsonObject {
  const parsed: unknown = JSON.parse(JSON.stringify(value));
  if (!isObject(parsed)) throw new Error("zod produced a non-object JSON schema");
  return parsed;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function omit(node: JsonObject, keys: readonly string[]): JsonObject {
  return Object.fromEntries(Object.entries(node).filter(([key]) => !keys.includes(key)));
}
