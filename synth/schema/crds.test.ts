import { readFileSync } from "node:fs";
import { CustomResourceDefinition } from "kubernetes-models/apiextensions.k8s.io/v1";
import { describe, expect, it } from "vitest";
import { CRDS_FILE, crdsYaml } from "../../scripts/deploy-files.ts";
import { REPO } from "../../test/harness.ts";
import { customResourceDefinitions } from "./crds.ts";

/** Structural-schema rules of apiextensions.k8s.io/v1 that the API server enforces on create. */
function structuralProblems(node: unknown, path = "openAPIV3Schema"): string[] {
  if (typeof node !== "object" || node === null) return [];
  const schema = node as Record<string, unknown>;
  const problems: string[] = [];
  const typed =
    "type" in schema ||
    schema["x-kubernetes-int-or-string"] === true ||
    schema["x-kubernetes-preserve-unknown-fields"] === true;
  if (!typed) problems.push(`${path}: no type`);
  if ("properties" in schema && "additionalProperties" in schema)
    problems.push(`${path}: properties with additionalProperties`);
  for (const forbidden of ["anyOf", "oneOf", "allOf", "$ref", "propertyNames", "$schema"]) {
    if (forbidden in schema) problems.push(`${path}: ${forbidden}`);
  }
  for (const [key, child] of Object.entries(
    (schema.properties as Record<string, unknown> | undefined) ?? {},
  )) {
    problems.push(...structuralProblems(child, `${path}.${key}`));
  }
  for (const key of ["items", "additionalProperties"]) {
    if (typeof schema[key] === "object") problems.push(...structuralProblems(schema[key], `${path}.${key}`));
  }
  return problems;
}

describe("CRDs", () => {
  it("deploy/crds.yaml is up to date (run `npm run crds`)", () => {
    expect(readFileSync(`${REPO}/${CRDS_FILE}`, "utf8")).toBe(crdsYaml());
  });

  it.each(customResourceDefinitions().map((crd) => [(crd.metadata as { name: string }).name, crd]))(
    "%s validates as a CustomResourceDefinition with a structural schema",
    (_name, crd) => {
      expect(() => new CustomResourceDefinition(crd as never).validate()).not.toThrow();
      const version = (crd as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } }).spec
        .versions[0];
      expect(structuralProblems(version?.schema.openAPIV3Schema)).toEqual([]);
    },
  );

  it("publishes the anchored MAC pattern and the printer columns", () => {
    const yaml = crdsYaml();
    expect(yaml).toContain("pattern: ^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^[0-9A-Fa-f]{4}");
    expect(yaml).toContain("jsonPath: .metadata.labels.cluster");
    expect(yaml).toContain("jsonPath: .spec.nodes.ControlPlane.count.active");
  });
});
