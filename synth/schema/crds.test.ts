import { readFileSync } from "node:fs";
import { CustomResourceDefinition } from "kubernetes-models/apiextensions.k8s.io/v1";
import { describe, expect, it } from "vitest";
import { CRDS_FILE, crdsYaml } from "../../scripts/deploy-files.ts";
import { REPO } from "../../test/harness.ts";
import { normalizeMac } from "../mac.ts";
import { customResourceDefinition, customResourceDefinitions } from "./crds.ts";
import { KINDS } from "./kinds.ts";
import { ConditionSchema } from "./status.ts";
import { RULES } from "../rule-catalogue.ts";
import { hasFormat } from "./formats.ts";
import { SipClusterSpecSchema } from "./sipcluster.ts";

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
    expect(yaml).toContain(
      "pattern: ^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$|^[0-9A-Fa-f]{2}(-[0-9A-Fa-f]{2}){5}$|",
    );
    expect(yaml).toContain("jsonPath: .metadata.labels.cluster");
  });

  it.each(Object.values(KINDS).map((definition) => [definition.kind, definition] as const))(
    "%s: READY, HOSTS, REASON and AGE from the status reporter's status, its message with -o wide (decision 0059)",
    (kind, definition) => {
      const [version] = (customResourceDefinition(definition) as { spec: { versions: Version[] } }).spec
        .versions;
      const columns = version?.additionalPrinterColumns.map((column) => [
        column.name,
        column.jsonPath,
        column.priority,
      ]);
      expect(columns).toEqual([
        ...(kind === "SIPCluster" ? [] : [["Cluster", ".metadata.labels.cluster", undefined]]),
        ["Ready", '.status.conditions[?(@.type=="Ready")].status', undefined],
        ["Hosts", ".status.hostSummary", undefined],
        ["Reason", '.status.conditions[?(@.type=="Ready")].reason', undefined],
        ["Age", ".metadata.creationTimestamp", undefined],
        ["Message", '.status.conditions[?(@.type=="Ready")].message', 1],
      ]);
      // A status of another shape is refused by the API server: no unknown fields kept.
      const status = version?.schema.openAPIV3Schema.properties.status;
      expect(status?.["x-kubernetes-preserve-unknown-fields"]).toBeUndefined();
      expect(Object.keys(status?.properties ?? {})).toEqual([
        "observedGeneration",
        "conditions",
        "hostSummary",
        "hosts",
        "gitops",
        "jobs",
      ]);
      expect(status?.properties?.conditions).toMatchObject({
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      });
    },
  );
});

interface Version {
  additionalPrinterColumns: { name: string; jsonPath: string; priority?: number }[];
  schema: {
    openAPIV3Schema: {
      properties: {
        spec?: unknown;
        status?: Record<string, unknown> & { properties?: Record<string, unknown> };
      };
    };
  };
}

/**
 * Every list, map and string under `node` the API server would take at any size: a list without
 * `maxItems`, a map without `maxProperties`, a string without `maxLength`, `enum` or a pattern that
 * fixes its length (no `*`, `+` or open `{n,}`).
 */
function unbounded(node: unknown, path: string): string[] {
  if (typeof node !== "object" || node === null) return [];
  const schema = node as Record<string, unknown>;
  const found: string[] = [];
  const fixedPattern = typeof schema.pattern === "string" && !/[*+]|\{\d+,\}/.test(schema.pattern);
  if (schema.type === "array" && schema.maxItems === undefined) found.push(`${path}: a list`);
  if (schema.type === "object" && schema.additionalProperties && schema.maxProperties === undefined)
    found.push(`${path}: a map`);
  if (schema.type === "string" && schema.maxLength === undefined && !schema.enum && !fixedPattern)
    found.push(`${path}: a string`);
  for (const [key, child] of Object.entries((schema.properties as Record<string, unknown> | undefined) ?? {}))
    found.push(...unbounded(child, `${path}.${key}`));
  found.push(...unbounded(schema.items, `${path}[]`));
  found.push(...unbounded(schema.additionalProperties, `${path}.*`));
  return found;
}

describe("the CRDs' bounds (decision 0056)", () => {
  it.each(customResourceDefinitions().map((crd) => [(crd.metadata as { name: string }).name, crd]))(
    "%s bounds every list, map and string of its spec, so the API server refuses a huge object before any webhook",
    (_name, crd) => {
      const [version] = (crd as { spec: { versions: Version[] } }).spec.versions;
      expect(unbounded(version?.schema.openAPIV3Schema.properties.spec, "spec")).toEqual([]);
    },
  );

  it.each([
    [
      "clients",
      { clients: Array.from({ length: 65 }, (_, index) => ({ id: `c${index}`, redirectURIs: [] })) },
    ],
    [
      "clients.0.redirectURIs.0",
      { clients: [{ id: "kubectl", redirectURIs: [`https://a.example/${"x".repeat(2048)}`] }] },
    ],
    [
      "connectors.0.config",
      {
        connectors: [
          {
            type: "oidc",
            id: "corp",
            name: "Corp",
            config: Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`f${index}`, 1])),
          },
        ],
      },
    ],
    [
      "staticUsers.0.groups",
      {
        staticUsers: [
          {
            email: "a@example.com",
            passwordHash: { name: "s", key: "k" },
            groups: Array.from({ length: 257 }, (_, index) => `g${index}`),
          },
        ],
      },
    ],
    [
      "roleBindings",
      { roleBindings: Array.from({ length: 1001 }, () => ({ group: "g", clusterRole: "view" })) },
    ],
    ["certificateAuthority", { certificateAuthority: "x".repeat(64 * 1024 + 1) }],
  ])(
    "the tenant's identity provider: over the bound at auth[0].%s, metalsynth's schema refuses it too",
    (path, auth) => {
      const spec = { nodes: {}, services: { auth: [{ nodePort: 30556, ...auth }] } };
      const result = SipClusterSpecSchema.safeParse(spec);
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((issue) => issue.path.join("."))).toEqual([`services.auth.0.${path}`]);
    },
  );
});

describe("the status's published reason", () => {
  it("admits every rule id, which a condition's reason is when a rule's finding is why (decision 0059)", () => {
    const pattern = new RegExp(String(ConditionSchema.shape.reason.meta()?.pattern));
    for (const rule of Object.keys(RULES)) expect(pattern.test(rule), rule).toBe(true);
    expect(pattern.test("JobFailed")).toBe(true);
    expect(pattern.test("-leading-dash")).toBe(false);
  });
});

describe("the Allocation's CRD", () => {
  it("keeps any status: nothing writes one", () => {
    const allocation = customResourceDefinitions().at(-1) as { spec: { versions: Version[] } };
    expect(allocation.spec.versions[0]?.schema.openAPIV3Schema.properties.status).toEqual({
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });
});

/** Every `pattern` a CRD publishes, by the name of the property that carries it (`items` use the list's name). */
function publishedPatterns(node: unknown, name = "", found = new Map<string, Set<string>>()) {
  if (typeof node !== "object" || node === null) return found;
  const schema = node as Record<string, unknown>;
  if (typeof schema.pattern === "string") {
    const patterns = found.get(name) ?? new Set<string>();
    found.set(name, patterns.add(schema.pattern));
  }
  for (const [key, child] of Object.entries((schema.properties as Record<string, unknown> | undefined) ?? {}))
    publishedPatterns(child, key, found);
  for (const key of ["items", "additionalProperties"]) publishedPatterns(schema[key], name, found);
  return found;
}

/**
 * The rule that checks each published format at runtime (what `validate` and the webhook run), with
 * values on both sides of the line. The API server runs the CRD pattern; the two must agree on each.
 */
const FORMAT_RULES: Record<string, { accepts: (text: string) => boolean; values: string[] }> = {
  "mac-address": {
    accepts: (text) => normalizeMac(text) !== undefined,
    values: [
      "00:c6:14:04:61:b3",
      "00:C6:14:04:61:B3",
      "00-c6-14-04-61-b3",
      "00c6.1404.61b3",
      "00C6.1404.61B3",
      "00:c6:14:04:61:b3 ",
      " 00:c6:14:04:61:b3",
      "00:c6:14:04:61:b3\n",
      "00:c6-14:04:61:b3",
      "00-c6:14:04:61:b3",
      "00:c6:14:04:61",
      "00:c6:14:04:61:b3:00",
      "00:c6:14:04:61:zz",
      "00c614.0461b3",
      "00c6.1404.61b3.0000",
      "00.c6.14.04.61.b3",
      "00c6141461b3",
      "",
    ],
  },
  KUDPlugins: {
    accepts: (text) => hasFormat("plugin", text),
    values: ["multus", "ovn4nfv", "sriov-network", "0-day", "Multus", "multus_cni", "-multus", "multus ", ""],
  },
};

describe("CRD patterns and the runtime rules", () => {
  const patterns = new Map<string, Set<string>>();
  for (const crd of customResourceDefinitions()) {
    const version = (crd as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } }).spec
      .versions[0];
    // The spec's: what a person writes, checked by the rules too. The status is the reporter's.
    const spec = (version?.schema.openAPIV3Schema as { properties: { spec: unknown } } | undefined)
      ?.properties.spec;
    for (const [name, found] of publishedPatterns(spec)) {
      patterns.set(name, new Set([...(patterns.get(name) ?? []), ...found]));
    }
  }

  it("has a table for every published pattern", () => {
    expect([...patterns.keys()].sort()).toEqual(Object.keys(FORMAT_RULES).sort());
  });

  it.each(Object.entries(FORMAT_RULES).flatMap(([name, rule]) => rule.values.map((value) => [name, value])))(
    "%s %j: the CRD pattern and the rule agree",
    (name, value) => {
      const rule = FORMAT_RULES[name];
      for (const pattern of patterns.get(name) ?? []) {
        // The API server's regular expressions (RE2) share this subset with ECMAScript: no lookaround,
        // no backreferences, no lazy quantifiers, no flags.
        expect(pattern).not.toMatch(/\(\?|\\[1-9bBk]|[*+?}]\?/);
        expect(new RegExp(pattern).test(value), pattern).toBe(rule?.accepts(value));
      }
    },
  );
});
