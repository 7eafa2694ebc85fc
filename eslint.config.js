// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * Imports point inward: bin → gitops → charts → synth, webhook → synth (docs/style.md).
 * Each layer lists the layers it must never reach. test/ and bench/ sit outside: production code
 * reaches neither (test support lives in test/support/, not beside the code it tests).
 */
const forbiddenLayers = {
  synth: ["charts", "gitops", "webhook", "bin", "test", "bench"],
  charts: ["gitops", "webhook", "bin", "test", "bench"],
  gitops: ["webhook", "bin", "test", "bench"],
  webhook: ["charts", "gitops", "bin", "test", "bench"],
  bin: ["test", "bench"],
};

/**
 * What a unit test (`*.test.ts` beside its code) may use of test/: the support layer, the fixture
 * builders and the harness. Negations re-include a folder, not a file under an excluded folder
 * (gitignore semantics), so `test/*` is matched one level deep and never `test` itself.
 */
const testSupport = ["!**/test/support", "!**/test/builders", "!**/test/harness.ts"];

/**
 * synth/ is pure: no file system, processes, network or clock from Node either. Hashing
 * (`node:crypto`'s createHash) is a pure function and stays allowed.
 */
const synthNodeImports = {
  group: ["node:*", "!node:crypto"],
  message: "synth/ is pure: no I/O from Node's modules; pass values in (see docs/style.md).",
};

/**
 * synth/'s inner order (decision 0049), first to last. A module imports from its own tier and earlier
 * ones, never a later one, and `import type` counts (no-restricted-imports's default): the vocabulary
 * every tier reports with (field paths, checked values, issues, the rule catalogue); the readers of
 * YAML and of the inventory; the CR schemas; model/, the types the rest share; the rules; site/, which
 * normalises CRs with them; plan/; and what is made of a plan. A top-level module not named here is
 * vocabulary. `synth/import-graph.test.ts` keeps the graph free of cycles inside a tier too.
 */
const synthTiers = [
  { name: "synth/'s vocabulary", files: ["synth/*.ts"] },
  { name: "the readers", files: ["synth/documents.ts", "synth/codec/**/*.ts", "synth/inventory/**/*.ts"] },
  { name: "schema/", files: ["synth/schema/**/*.ts"] },
  { name: "model/", files: ["synth/model/**/*.ts"] },
  { name: "rules/", files: ["synth/rules/**/*.ts"] },
  { name: "site/", files: ["synth/site/**/*.ts"] },
  {
    name: "plan/",
    files: ["synth/plan/**/*.ts"],
    also: [
      {
        group: ["**/rules/filters.ts"],
        importNames: ["rejection", "rejections"],
        message:
          "plan/ judges hosts with PlanningContext.rejection, so each turn records the facts its filters read (decision 0051).",
      },
    ],
  },
  {
    name: "the outputs of a plan",
    files: ["synth/evaluate.ts", "synth/explain.ts", "synth/snapshot.ts", "synth/map/**/*.ts"],
  },
  { name: "status/", files: ["synth/status/**/*.ts"] },
];

/** What synth/'s tier at `index` must not import: the outer layers, Node's I/O, later tiers. */
const tierPatterns = (index) => {
  const { name, also } = synthTiers[index];
  return [
    ...layerPatterns("synth", forbiddenLayers.synth),
    synthNodeImports,
    ...(also ?? []),
    ...synthTiers.slice(index + 1).map((later) => ({
      group: later.files.map(importPattern),
      message: `${name} must not import ${later.name}, a later tier of synth/ (decision 0049).`,
    })),
  ];
};

/**
 * The placement rules (decision 0067): they read like the spec and call the engine
 * (`synth/plan/engine/`: the recording view, candidates, re-planning) only through
 * `PlanningContext`. rules/ is an earlier tier than plan/, so only plan/'s two need saying so.
 */
const placementRules = ["synth/plan/bpa-placement.ts", "synth/plan/sip-placement.ts", "synth/rules/**/*.ts"];

// How an import names a tier's files: a folder's as "**/plan/*", a module as "**/explain.ts".
const importPattern = (glob) => glob.replace(/^synth\//, "**/").replace(/\/\*\*\/\*\.ts$/, "/*");

/** The import patterns `layer` must not use; its tests may use {@link testSupport}. */
const layerPatterns = (layer, forbidden, tests = false) =>
  forbidden.map((target) => ({
    group: tests && target === "test" ? ["**/test/*", ...testSupport] : [`**/${target}/*`, `**/${target}`],
    message:
      tests && target === "test"
        ? `${layer}/'s tests may import test/support/, test/builders/ and test/harness.ts only.`
        : `${layer}/ must not import ${target}/ (imports point inward, see docs/style.md).`,
  }));

const layerRules = [
  ...Object.entries(forbiddenLayers).flatMap(([layer, forbidden]) => [
    {
      files: [`${layer}/**/*.ts`],
      ignores: [`${layer}/**/*.test.ts`],
      rules: { "no-restricted-imports": ["error", { patterns: layerPatterns(layer, forbidden) }] },
    },
    {
      files: [`${layer}/**/*.test.ts`],
      rules: { "no-restricted-imports": ["error", { patterns: layerPatterns(layer, forbidden, true) }] },
    },
  ]),
  {
    // gitops/report/ is the pure part of gitops/: diffs and reports of values; the edges (files,
    // git) are the modules beside it. A later rule replaces, not merges, so the layer patterns repeat.
    files: ["gitops/report/**/*.ts"],
    ignores: ["gitops/report/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            ...layerPatterns("gitops", forbiddenLayers.gitops),
            {
              group: ["node:fs", "node:fs/*", "node:child_process", "simple-git", "../*.ts"],
              message: "gitops/report/ is pure: reading and writing files and git are gitops/'s edges.",
            },
          ],
        },
      ],
    },
  },
  // Tests may read fixtures; synth's code may not, nor reach a later tier of its own (synthTiers).
  ...synthTiers.map(({ files }, index) => ({
    files,
    ignores: ["synth/**/*.test.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: tierPatterns(index) }] },
  })),
  {
    // A later rule replaces, not merges, so plan/'s tier patterns repeat.
    files: placementRules.filter((glob) => glob.startsWith("synth/plan/")),
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            ...tierPatterns(synthTiers.findIndex((tier) => tier.name === "plan/")),
            {
              group: ["**/engine/*"],
              message:
                "placement rules reach the engine only through PlanningContext, never plan/engine/ (decision 0067).",
            },
          ],
        },
      ],
    },
  },
];

const noEnums = {
  selector: "TSEnumDeclaration",
  message: "Use a string-literal union or an `as const` object.",
};

/**
 * No state kept between calls at module level in the placement rules: no `let`, no WeakMap, and a
 * Map or Set only as a constant table (typed ReadonlyMap / ReadonlySet). A value worth keeping is
 * a `Derived` the plan's cache keeps (decision 0067).
 */
const moduleLevel = ":matches(Program, ExportNamedDeclaration) > VariableDeclaration";
const noModuleState = [
  {
    selector: `${moduleLevel}[kind!="const"]`,
    message:
      "Placement rules keep no module-level state: pass it in, or derive it through the PlanCache (decision 0067).",
  },
  {
    selector: `${moduleLevel} > VariableDeclarator > NewExpression[callee.name=/^Weak(Map|Set|Ref)$/]`,
    message:
      "Placement rules keep no module-level cache: declare a Derived and ask the PlanCache (decision 0067).",
  },
  {
    selector: `${moduleLevel} > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly(Map|Set)$/]) > NewExpression[callee.name=/^(Map|Set)$/]`,
    message:
      "A module-level Map or Set in a placement rule is a constant table: type it ReadonlyMap / ReadonlySet (decision 0067).",
  },
];

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "coverage/", "examples/", "deploy/", ".scratch/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "no-restricted-syntax": ["error", noEnums],
    },
  },
  {
    files: ["**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  ...layerRules,
  {
    files: ["synth/**/*.ts"],
    ignores: ["synth/**/*.test.ts"],
    rules: {
      "no-restricted-globals": ["error", { name: "process", message: "synth/ is pure: pass values in." }],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "synth/ is pure: no clocks." },
        { object: "Math", property: "random", message: "synth/ is deterministic: no randomness." },
      ],
    },
  },
  {
    // rules/schema.ts words schema findings, no placement: its structural schemas, kept per schema
    // of its own, are left to a later step (decision 0067).
    files: placementRules,
    ignores: ["synth/**/*.test.ts", "synth/rules/schema.ts"],
    rules: { "no-restricted-syntax": ["error", noEnums, ...noModuleState] },
  },
  {
    // The shared vocabulary: interfaces, type aliases and the `as const` tables a type is made of.
    files: ["synth/model/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        noEnums,
        {
          selector: ":function, ClassDeclaration",
          message: "synth/model/ holds types only (decision 0049): logic lives in the tier that uses it.",
        },
      ],
    },
  },
);
