import { UsageError } from "../gitops/errors.ts";
import { commit } from "./commands/commit.ts";
import { diff } from "./commands/diff.ts";
import { explain } from "./commands/explain.ts";
import { manifests } from "./commands/manifests.ts";
import { synth } from "./commands/synth.ts";
import { validate } from "./commands/validate.ts";
import { webhook } from "./commands/webhook.ts";
import { EXIT, type Command, type Console } from "./common.ts";

export type { Console } from "./common.ts";

const USAGE = `usage: metalsynth <command> [options]

commands:
  validate [--site DIR] [--specs GLOB…] [--inventory PATH…] [--format text|json]
      check the site's CRs against the rules and the inventory; exit 1 on errors
  synth [--site DIR] [--specs GLOB…] [--inventory PATH…] [--out DIR] [--format text|json]
      validate, plan and write the rendered/ tree (atomically; untouched when the input has errors)
  diff [--site DIR] [--out DIR] [--exit-code] [--patch] [--format text|json]
      what synth would change in rendered/, per cluster (hosts, objects); writes nothing
  explain <cluster> [--site DIR] [--format text|json]
      show, per role, the chosen hosts and why every other host was rejected
  commit [--site DIR] [--message MSG] [--push] [--remote NAME] [--branch NAME] [--retries N]
         [--author-name NAME] [--author-email EMAIL]
      synth, then commit rendered/ (only) with a per-cluster summary; --push retries on a race
  webhook (--inventory PATH… | --from-cluster) [--site DIR] --tls-cert F --tls-key F
          [--port 8443] [--host 0.0.0.0]
      serve the validating admission webhook over HTTPS until SIGTERM; JSON logs on stdout
  manifests [--namespace NS] [--image IMG]
      print the webhook's deployment YAML (CRDs, RBAC, cert-manager, Deployment, webhook config)

options:
  --site DIR        site directory (default .)
  --specs GLOB…     spec files, directories or globs (default <site>/specs); every word up to
                    the next option, and repeatable
  --inventory PATH… inventory files or directories (default <site>/inventory); as --specs
  --out DIR         output directory of synth and diff (default <site>/rendered)
  --format FORMAT   text (default) or json
  --exit-code       diff: exit 1 when rendered/ would change
  --patch           diff: add a unified diff of every changed file
  --message MSG     commit: subject line (default: the clusters that changed)
  --push            commit: push to --remote (default origin), branch --branch (default the current one)
  --retries N       commit: times to re-render and push again after a rejected push (default 3)
`;

/** Every command, by the name users type. */
const COMMANDS: Readonly<Record<string, Command>> = {
  validate,
  synth,
  diff,
  explain,
  commit,
  webhook,
  manifests,
};

const processConsole: Console = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** Runs one CLI invocation and returns its exit code. Never throws. */
export async function main(argv: readonly string[], io: Console = processConsole): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    io.out(USAGE);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  try {
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (run === undefined) throw new UsageError(`unknown command "${command}"`);
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(USAGE);
      return EXIT.ok;
    }
    return await run(rest, io);
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.err(`metalsynth: ${error.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    io.err(
      `metalsynth: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.internal;
  }
}

function isParseArgsError(error: unknown): error is TypeError {
  return error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS");
}
