import { UsageError } from "../gitops/errors.ts";
import { errorCode, systemReason } from "../gitops/files.ts";
import { didYouMean, normalizeArgs } from "./argv.ts";
import { EXIT, packageVersion, type Command, type Console } from "./common.ts";
import { parseCommandArgs, type CommandSpec } from "./options.ts";
import { CLUSTERS_COMMAND, COMMANDS, commandUsage, globalUsage, type CommandName } from "./usage.ts";

export type { Console } from "./common.ts";

/**
 * Every command, by the name users type, imported only when it runs: `--help`, `--version` and a
 * usage error load none of them, and each command loads only what it uses (cdk8s only where it
 * renders, express only for `webhook`; decision 0018).
 */
const RUNNERS: { readonly [C in CommandName]: () => Promise<Command<C>> } = {
  validate: async () => (await import("./commands/validate.ts")).validate,
  synth: async () => (await import("./commands/synth.ts")).synth,
  diff: async () => (await import("./commands/diff.ts")).diff,
  explain: async () => (await import("./commands/explain.ts")).explain,
  map: async () => (await import("./commands/map.ts")).map,
  release: async () => (await import("./commands/release.ts")).release,
  commit: async () => (await import("./commands/commit.ts")).commit,
  inventory: async () => (await import("./commands/inventory.ts")).inventory,
  webhook: async () => (await import("./commands/webhook.ts")).webhook,
  status: async () => (await import("./commands/status.ts")).status,
  manifests: async () => (await import("./commands/manifests.ts")).manifests,
  completion: async () => (await import("./commands/completion.ts")).completion,
  version: async () => (await import("./commands/version.ts")).version,
};

const processConsole: Console = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  get errTerminal() {
    return process.stderr.isTTY;
  },
};

const HELP = new Set(["--help", "-h"]);

/**
 * Runs one CLI invocation and returns its exit code. Never throws, and never prints a stack for
 * anything a user can cause: a usage error is one line and a hint (exit 2), a file system error one
 * line naming the path (exit 2); only a bug prints "internal error" and its stack (exit 3).
 */
export async function main(argv: readonly string[], io: Console = processConsole): Promise<number> {
  const [command, ...rest] = normalizeArgs(argv);
  if (command === "help" || (command !== undefined && HELP.has(command))) {
    const [topic] = rest;
    io.out(topic !== undefined && isCommand(topic) ? commandUsage(topic) : globalUsage());
    return EXIT.ok;
  }
  if (command === "--version" || command === "-V") {
    io.out(`metalsynth ${packageVersion()}\n`);
    return EXIT.ok;
  }
  // Like git and kubectl: usage errors go to stderr, briefly, with where to read more.
  if (command === undefined) {
    io.err(`metalsynth: no command given (${Object.keys(COMMANDS).join(", ")})\n${hint()}`);
    return EXIT.usage;
  }
  // The completion scripts' own question, answered without the help's ceremony.
  if (command === "__clusters") {
    const args = parseCommandArgs(CLUSTERS_COMMAND, rest);
    return (await import("./commands/clusters.ts")).clusters(args, io);
  }
  if (!isCommand(command)) {
    io.err(`metalsynth: unknown command "${command}"${didYouMean(command, Object.keys(RUNNERS))}\n${hint()}`);
    return EXIT.usage;
  }
  if (rest.some((word) => HELP.has(word))) {
    io.out(commandUsage(command));
    return EXIT.ok;
  }
  try {
    return await runCommand(command, rest, io);
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      // parseArgs adds advice about `--` to an unknown option that is rarely what was meant.
      const message = error.message.replace(/\. To specify a positional argument[^]*$/, "");
      const unknown = /^Unknown option '(--[^']+)'/.exec(message)?.[1];
      const suggestion = unknown === undefined ? "" : didYouMean(unknown, commandFlags(command));
      const more = error instanceof UsageError && !error.showHelp ? "" : hint(command);
      const { writesOnly } = COMMANDS[command] as CommandSpec;
      const format = writesOnly !== undefined && /^Unknown option '(-o|--format|--output)'/.test(message);
      io.err(
        `metalsynth ${command}: ${format ? `${writesOnly}; it has no --format` : message + suggestion}\n${more}`,
      );
      return EXIT.usage;
    }
    const system = systemErrorLine(error);
    if (system !== undefined) {
      io.err(`metalsynth ${command}: ${system}\n`);
      return EXIT.usage;
    }
    io.err(
      `metalsynth: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.internal;
  }
}

/** Parses `argv` as `command` declares its options, then loads and runs the command with them. */
async function runCommand<C extends CommandName>(
  command: C,
  argv: readonly string[],
  io: Console,
): Promise<number> {
  const args = parseCommandArgs(COMMANDS[command], argv);
  const run = await RUNNERS[command]();
  return run(args, io);
}

/** The long options `command` declares, for "did you mean". */
function commandFlags(command: CommandName): string[] {
  return Object.keys(COMMANDS[command].options).map((name) => `--${name}`);
}

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

function hint(command?: CommandName): string {
  return `see 'metalsynth ${command === undefined ? "" : `${command} `}--help'\n`;
}

/**
 * A file system error that escaped the commands (an output directory that can't be written, a full
 * disk) as one line: what failed, on which path, and why. Undefined for anything else (a bug).
 */
export function systemErrorLine(error: unknown): string | undefined {
  const code = errorCode(error);
  if (code === undefined || !code.startsWith("E") || !(error instanceof Error)) return undefined;
  const where = "path" in error && typeof error.path === "string" ? error.path : undefined;
  const verb = "syscall" in error && typeof error.syscall === "string" ? error.syscall : "access";
  const action = ACTIONS[verb] ?? verb;
  return where === undefined
    ? `${action} failed: ${systemReason(error)}`
    : `could not ${action} ${where}: ${systemReason(error)}; check the path and its permissions`;
}

/** What a failed system call was doing, in words. */
const ACTIONS: Readonly<Record<string, string>> = {
  open: "open",
  mkdir: "create the directory",
  rmdir: "remove",
  rm: "remove",
  unlink: "remove",
  rename: "move",
  link: "link",
  scandir: "list",
  write: "write",
  read: "read",
  copyfile: "copy",
  stat: "read",
  lstat: "read",
  utime: "set the times of",
};

function isParseArgsError(error: unknown): error is TypeError {
  return error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS");
}
