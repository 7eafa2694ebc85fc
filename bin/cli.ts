import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../gitops/errors.ts";
import { formatIssues, type OutputFormat } from "../gitops/report.ts";
import { renderSite } from "../gitops/render.ts";
import { readSite } from "../gitops/site-reader.ts";
import { writeTree } from "../gitops/tree-writer.ts";
import { evaluateSite } from "../synth/evaluate.ts";
import { explainCluster, explanationText } from "../synth/explain.ts";
import { hasErrors } from "../synth/issue.ts";

/** Exit codes (SPEC §7). */
export const EXIT = { ok: 0, invalid: 1, usage: 2, internal: 3 } as const;

const USAGE = `usage: metalsynth <command> [options]

commands:
  validate [--site DIR] [--specs PATH…] [--inventory PATH…] [--format text|json]
      check the site's CRs against the rules and the inventory; exit 1 on errors

  synth [--site DIR] [--specs PATH…] [--inventory PATH…] [--out DIR] [--format text|json]
      validate, plan and write the rendered/ tree (atomically; untouched when the input has errors)
  explain <cluster> [--site DIR] [--format text|json]
      show, per role, the chosen hosts and why every other host was rejected

options:
  --site DIR        site directory (default .)
  --specs PATH      spec files, directories or globs (default <site>/specs); repeatable
  --inventory PATH  inventory files or directories (default <site>/inventory); repeatable
  --out DIR         output directory of synth (default <site>/rendered)
  --format FORMAT   text (default) or json
`;

const SITE_OPTIONS = {
  site: { type: "string" },
  specs: { type: "string", multiple: true },
  inventory: { type: "string", multiple: true },
  format: { type: "string" },
  out: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

/** Where the CLI writes; injected so tests can capture output without touching process streams. */
export interface Console {
  out(text: string): void;
  err(text: string): void;
}

const processConsole: Console = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** Runs one CLI invocation and returns its exit code. Never throws. */
export async function main(argv: readonly string[], io: Console = processConsole): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "validate":
        return await validate(rest, io);
      case "explain":
        return await explain(rest, io);
      case "synth":
        return await synth(rest, io);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.err(`metalsynth: ${(error as Error).message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    io.err(
      `metalsynth: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.internal;
  }
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS");
}

function outputFormat(value: string | undefined): OutputFormat {
  if (value === undefined || value === "text" || value === "json") return value ?? "text";
  throw new UsageError(`--format must be text or json, not "${value}"`);
}

async function validate(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: SITE_OPTIONS, strict: true });
  if (values.help) {
    io.out(USAGE);
    return EXIT.ok;
  }
  const format = outputFormat(values.format);
  const input = await readSite(siteLocation(values));
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  io.out(formatIssues(issues, format));
  if (format === "text") io.err(`${summary(issues)}\n`);
  return hasErrors(issues) ? EXIT.invalid : EXIT.ok;
}

async function synth(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: SITE_OPTIONS, strict: true });
  const format = outputFormat(values.format);
  const input = await readSite({
    ...siteLocation(values),
    ...(values.out === undefined ? {} : { out: values.out }),
  });
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const issues = [...input.issues, ...evaluation.issues];
  if (hasErrors(issues)) {
    io.out(formatIssues(issues, format));
    io.err(`${summary(issues)}; ${input.out} left unchanged\n`);
    return EXIT.invalid;
  }
  const rendered = renderSite(evaluation.plan, input.settings);
  const change = await writeTree(input.out, rendered.files);
  if (format === "json") {
    io.out(
      `${JSON.stringify({ out: input.out, clusters: rendered.clusters, change, diagnostics: issues }, null, 2)}\n`,
    );
    return EXIT.ok;
  }
  if (issues.length > 0) io.err(formatIssues(issues, "text"));
  for (const cluster of rendered.clusters) {
    io.out(
      `${cluster.cluster}: ${cluster.masters.length} master(s) [${cluster.masters.join(", ")}], ${cluster.workers.length} worker(s) [${cluster.workers.join(", ")}], ${cluster.objects} objects in ${cluster.directory}\n`,
    );
  }
  const counts = `${change.added.length} added, ${change.changed.length} changed, ${change.removed.length} removed, ${change.unchanged} unchanged`;
  io.out(`wrote ${input.out}: ${counts}\n`);
  return EXIT.ok;
}

async function explain(argv: readonly string[], io: Console): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: SITE_OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  const format = outputFormat(values.format);
  const [cluster, ...extra] = positionals;
  if (cluster === undefined || extra.length > 0)
    throw new UsageError("explain takes exactly one cluster name (name or namespace/name)");
  const input = await readSite(siteLocation(values));
  const evaluation = evaluateSite(input.documents, input.inventory, input.lock);
  const explanations = explainCluster(evaluation.plan, cluster, input.inventory.size);
  if (explanations.length === 0) {
    const known = evaluation.plan.clusters.map((plan) => plan.key).join(", ");
    io.err(`metalsynth: no cluster "${cluster}" in the site (clusters: ${known || "none"})\n`);
    return EXIT.invalid;
  }
  io.out(format === "json" ? `${JSON.stringify(explanations, null, 2)}\n` : explanationText(explanations));
  return EXIT.ok;
}

function siteLocation(values: { site?: string; specs?: string[]; inventory?: string[] }) {
  return {
    ...(values.site === undefined ? {} : { site: values.site }),
    ...(values.specs === undefined ? {} : { specs: values.specs }),
    ...(values.inventory === undefined ? {} : { inventory: values.inventory }),
  };
}

function summary(issues: readonly { severity: string }[]): string {
  const errors = issues.filter((found) => found.severity === "error").length;
  const warnings = issues.length - errors;
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  return errors + warnings === 0
    ? "metalsynth: no problems found"
    : `metalsynth: ${plural(errors, "error")}, ${plural(warnings, "warning")}`;
}
