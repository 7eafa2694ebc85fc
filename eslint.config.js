// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * Imports point inward: bin → gitops → charts → synth, webhook → synth (STYLE.md).
 * Each layer lists the layers it must never reach.
 */
const forbiddenLayers = {
  synth: ["charts", "gitops", "webhook", "bin"],
  charts: ["gitops", "webhook", "bin"],
  gitops: ["webhook", "bin"],
  webhook: ["charts", "gitops", "bin"],
};

/**
 * synth/ is pure: no file system, processes, network or clock from Node either. Hashing
 * (`node:crypto`'s createHash) is a pure function and stays allowed.
 */
const synthNodeImports = {
  group: ["node:*", "!node:crypto"],
  message: "synth/ is pure: no I/O from Node's modules; pass values in (see STYLE.md).",
};

/** The import patterns `layer` must not use. */
const layerPatterns = (layer, forbidden) =>
  forbidden.map((target) => ({
    group: [`**/${target}/*`, `**/${target}`],
    message: `${layer}/ must not import ${target}/ (imports point inward, see STYLE.md).`,
  }));

const layerRules = [
  ...Object.entries(forbiddenLayers).map(([layer, forbidden]) => ({
    files: [`${layer}/**/*.ts`],
    rules: { "no-restricted-imports": ["error", { patterns: layerPatterns(layer, forbidden) }] },
  })),
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
  // Tests may read fixtures; synth's code may not.
  {
    files: ["synth/**/*.ts"],
    ignores: ["synth/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [...layerPatterns("synth", forbiddenLayers.synth), synthNodeImports] },
      ],
    },
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
      "no-restricted-syntax": [
        "error",
        { selector: "TSEnumDeclaration", message: "Use a string-literal union or an `as const` object." },
      ],
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
);
