/**
 * Runs this repository's composite action (action.yml) as the GitHub Actions runner would, for the
 * tests of a site repository: its `run:` steps in order, each as GitHub runs `shell: bash` (`bash
 * --noprofile --norc -eo pipefail {0}` on a script file), in `working-directory` under
 * GITHUB_WORKSPACE, with GITHUB_STEP_SUMMARY, GITHUB_OUTPUT (one file per step, read back as
 * `steps.<id>.outputs`), GITHUB_WORKSPACE and RUNNER_TEMP set and `${{ … }}` substituted. The `uses:`
 * steps (actions/setup-node, actions/upload-artifact) are skipped and listed in `skipped`: the test
 * machine's Node.js stands for the first, the map file on disk for what the second uploads.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { REPO } from "../harness.ts";

const ACTION = z.object({
  inputs: z.record(z.string(), z.object({ default: z.string().optional() })),
  outputs: z.record(z.string(), z.object({ value: z.string() })),
  runs: z.object({
    using: z.literal("composite"),
    steps: z.array(
      z.object({
        id: z.string().optional(),
        if: z.string().optional(),
        uses: z.string().optional(),
        run: z.string().optional(),
        shell: z.string().optional(),
        env: z.record(z.string(), z.string()).optional(),
        "working-directory": z.string().optional(),
      }),
    ),
  }),
});

/** What one run of the action left: per step its exit code and output, the summary, the outputs. */
export interface ActionRun {
  readonly success: boolean;
  readonly steps: {
    readonly name: string;
    readonly code: number;
    readonly stdout: string;
    readonly output: string;
  }[];
  readonly skipped: string[];
  readonly summary: string;
  readonly outputs: Record<string, string>;
}

/** Runs action.yml in `workspace` with `given` inputs (the rest take their defaults). */
export async function runAction(
  workspace: string,
  given: Record<string, string>,
  env: NodeJS.ProcessEnv,
): Promise<ActionRun> {
  const action = ACTION.parse(parse(await readFile(path.join(REPO, "action.yml"), "utf8")));
  for (const name of Object.keys(given))
    if (!(name in action.inputs)) throw new Error(`action.yml has no input ${name}`);
  const inputs = Object.fromEntries(
    Object.entries(action.inputs).map(([name, input]) => [name, given[name] ?? input.default ?? ""]),
  );
  const temp = await mkdtemp(path.join(tmpdir(), "metalsynth-runner-"));
  const summaryFile = path.join(temp, "step-summary.md");
  await writeFile(summaryFile, "");
  const stepOutputs: Record<string, Record<string, string>> = {};
  const expand = (text: string) =>
    text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_, expression: string) => value(expression));
  const value = (expression: string): string => {
    const input = /^inputs\.([\w-]+)$/.exec(expression);
    if (input?.[1] !== undefined && input[1] in inputs) return inputs[input[1]] ?? "";
    const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expression);
    if (output?.[1] !== undefined && output[2] !== undefined)
      return stepOutputs[output[1]]?.[output[2]] ?? "";
    throw new Error(`the test runner does not evaluate \${{ ${expression} }}`);
  };
  // The conditions action.yml uses: an input compared with a string.
  const holds = (condition: string): boolean => {
    const match = /^inputs\.([\w-]+) (==|!=) '([^']*)'$/.exec(condition.trim());
    if (match === null) throw new Error(`the test runner does not evaluate if: ${condition}`);
    const equal = inputs[match[1] ?? ""] === match[3];
    return match[2] === "==" ? equal : !equal;
  };

  const steps: ActionRun["steps"] = [];
  const skipped: string[] = [];
  for (const [index, step] of action.runs.steps.entries()) {
    if (step.if !== undefined && !holds(step.if)) continue;
    if (step.uses !== undefined) {
      // An action a runner fetches is pinned by commit: a tag can move under the sites that use it.
      if (!/@[0-9a-f]{40}$/.test(step.uses))
        throw new Error(`step ${index}: ${step.uses} is not pinned by commit`);
      skipped.push(step.uses);
      continue;
    }
    if (step.shell !== "bash") throw new Error(`step ${index}: composite run steps need shell: bash`);
    const script = path.join(temp, `step-${index}.sh`);
    await writeFile(script, step.run ?? "");
    const outputFile = path.join(temp, `output-${index}`);
    await writeFile(outputFile, "");
    const stepEnv = Object.fromEntries(
      Object.entries(step.env ?? {}).map(([key, text]) => [key, expand(text)]),
    );
    const cwd = path.resolve(workspace, expand(step["working-directory"] ?? "."));
    const outcome = await runProcess(cwd, "bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
      ...env,
      ...stepEnv,
      GITHUB_ACTIONS: "true",
      GITHUB_WORKSPACE: workspace,
      GITHUB_STEP_SUMMARY: summaryFile,
      GITHUB_OUTPUT: outputFile,
      RUNNER_TEMP: temp,
    });
    steps.push({ name: step.id ?? `step ${index}`, ...outcome });
    if (step.id !== undefined) stepOutputs[step.id] = parseOutputs(await readFile(outputFile, "utf8"));
    if (outcome.code !== 0) break;
  }
  const outputs = Object.fromEntries(
    Object.entries(action.outputs).map(([name, output]) => [name, expand(output.value)]),
  );
  return {
    success: steps.every((step) => step.code === 0),
    steps,
    skipped,
    summary: await readFile(summaryFile, "utf8"),
    outputs,
  };
}

/** `name=value` lines of a GITHUB_OUTPUT file (action.yml writes no multi-line values). */
function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const equals = line.indexOf("=");
    if (equals < 0) throw new Error(`GITHUB_OUTPUT line without =: ${line}`);
    outputs[line.slice(0, equals)] = line.slice(equals + 1);
  }
  return outputs;
}

/** What {@link runProcess} gives back. */
export interface ProcessOutcome {
  readonly code: number;
  readonly stdout: string;
  /** stdout and stderr, interleaved as they came. */
  readonly output: string;
}

/** Runs `command args…` in `cwd` with `env`, and never throws for an exit code. */
export function runProcess(
  cwd: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, output }));
  });
}
