/**
 * The shape of the command table (bin/usage.ts) and what is derived from it (decision 0062): each
 * option is declared once, typed, and the parser, `--help`, the completion scripts and the docs'
 * checks all read that one declaration, so none of them can list an option the others don't know.
 */
import { parseArgs } from "node:util";
import { UsageError } from "../gitops/errors.ts";

/** One option of one command. */
export interface OptionSpec {
  /** As `parseArgs` takes it: a value, or a switch. */
  readonly type: "string" | "boolean";
  /** The one-letter form (`o` for `-o`), kubectl's where kubectl has the option. */
  readonly short?: string;
  /** May be given again for one more value (`--secrets-namespace a --secrets-namespace b`). */
  readonly multiple?: true;
  /**
   * Takes every word up to the next option as one more value, and may be repeated (docs/contract.md
   * §7's `PATH…`), so a glob the shell expanded still means every file.
   */
  readonly list?: true;
  /**
   * The value may be left out (`--diff` or `--diff FILE`): the next word is its value unless it is an
   * option. Given alone, the option's value is `""`.
   */
  readonly optionalValue?: true;
  /** What the help calls its value: `DIR`, `GLOB…`, `[LOCKFILE]`. */
  readonly value?: string;
  /** The only values it takes, the default first; any other is a usage error naming them. */
  readonly choices?: readonly [string, ...string[]];
  /** What the help says of it; a newline starts an indented continuation line. */
  readonly help: string;
}

/** A word a command takes that is no option: explain's cluster, release's hosts, a shell. */
export interface OperandSpec {
  /** As the help shows it: `<cluster>`, `HOST…`. */
  readonly name: string;
  readonly help: string;
}

/** One command: its synopsis, what it does, its operands and options, and notes after them. */
export interface CommandSpec {
  /** The usage line(s) after `metalsynth `; names every option (a test holds it to the options). */
  readonly synopsis: string;
  readonly summary: string;
  /** Without operands, a word that belongs to no option is a usage error. */
  readonly operands?: readonly OperandSpec[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Paragraph(s) the help prints after the options: exit codes, what else to know. */
  readonly notes?: string;
  /** For a command with no `-o/--format`: what it writes instead, said to whoever passes one. */
  readonly writesOnly?: string;
}

type Options = Readonly<Record<string, OptionSpec>>;

/** The value of one option, as its declaration types it. */
type OptionValue<O extends OptionSpec> = O["type"] extends "boolean"
  ? boolean
  : O extends { readonly list: true } | { readonly multiple: true }
    ? Choice<O>[]
    : Choice<O>;
type Choice<O extends OptionSpec> = O extends { readonly choices: readonly (infer C)[] } ? C : string;

/** Parsed options: one typed, optional field per declared option. */
export type OptionValues<O extends Options> = { readonly [K in keyof O]?: OptionValue<O[K]> };

declare const parsedArgs: unique symbol;

/**
 * What {@link parseCommandArgs} makes of a command's arguments, and only it: the options typed by
 * their declarations, and the operands in order. A command takes this, never the raw words.
 */
export interface ParsedArgs<O extends Options> {
  readonly values: OptionValues<O>;
  readonly operands: readonly string[];
  readonly [parsedArgs]: true;
}

/**
 * Parses `argv` (the words after the command's name) as `spec` declares its options: `--name VALUE`,
 * `--name=VALUE`, the short forms, `list` options' every word up to the next option, `choices`
 * checked, and words that belong to no option refused unless the command takes operands.
 *
 * @throws UsageError or parseArgs' `ERR_PARSE_ARGS_*` TypeError, which the CLI reports as usage errors.
 */
export function parseCommandArgs<O extends Options>(
  spec: { readonly options: O; readonly operands?: readonly OperandSpec[] },
  argv: readonly string[],
): ParsedArgs<O> {
  const { rest, given } = takeOptionalValues(spec.options, argv);
  const parsed = parseArgs({
    args: rest,
    options: { ...parseConfig(spec.options), help: { type: "boolean", short: "h" } },
    strict: true,
    allowPositionals: true,
    tokens: true,
  });
  const lists = Object.keys(spec.options).filter((name) => spec.options[name]?.list === true);
  const operands = listWords(parsed, lists);
  if (spec.operands === undefined) {
    const [stray] = operands;
    if (stray !== undefined) throw new UsageError(`unexpected argument "${stray}"`);
  }
  const values: Record<string, unknown> = { ...parsed.values, ...given };
  delete values["help"];
  for (const [name, option] of Object.entries(spec.options)) {
    const value: unknown = values[name];
    if (option.choices === undefined || value === undefined) continue;
    for (const chosen of Array.isArray(value) ? value : [value]) {
      if (!(option.choices as readonly unknown[]).includes(chosen)) {
        const names = option.choices.join(", ").replace(/, ([^,]*)$/, " or $1");
        throw new UsageError(`--${name} must be ${names}, not "${String(chosen)}"`);
      }
    }
  }
  // The declarations typed these values, and the parser made them so.
  return { values, operands } as unknown as ParsedArgs<O>;
}

/** The declarations as `parseArgs` takes them (its own fields only). */
function parseConfig(options: Options): NonNullable<Parameters<typeof parseArgs>[0]>["options"] {
  return Object.fromEntries(
    Object.entries(options).map(([name, option]) => [
      name,
      {
        type: option.type,
        ...(option.short === undefined ? {} : { short: option.short }),
        ...(option.multiple || option.list ? { multiple: true } : {}),
      },
    ]),
  );
}

/**
 * Takes the `optionalValue` options out of `argv`, which parseArgs cannot express: the word after one
 * is its value unless it is an option, and `--name=VALUE` works too.
 */
function takeOptionalValues(
  options: Options,
  argv: readonly string[],
): { rest: string[]; given: Record<string, string> } {
  const optional = Object.keys(options).filter((name) => options[name]?.optionalValue === true);
  const rest: string[] = [];
  const given: Record<string, string> = {};
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index] ?? "";
    if (word === "--") {
      rest.push(...argv.slice(index));
      break;
    }
    const name = optional.find(
      (candidate) => word === `--${candidate}` || word.startsWith(`--${candidate}=`),
    );
    if (name === undefined) {
      rest.push(word);
      continue;
    }
    if (word !== `--${name}`) {
      const value = word.slice(`--${name}=`.length);
      if (value === "") throw new UsageError(`--${name}= needs a value (or --${name} alone)`);
      given[name] = value;
      continue;
    }
    const next = argv[index + 1];
    if (next === undefined || next.startsWith("-")) given[name] = "";
    else {
      given[name] = next;
      index++;
    }
  }
  return { rest, given };
}

/** The tokens {@link listWords} reads: what `parseArgs` returns with `tokens: true`. */
type ArgToken =
  | { readonly kind: "option"; readonly name: string }
  | { readonly kind: "positional"; readonly value: string }
  | { readonly kind: "option-terminator" };

/**
 * docs/contract.md §7's `PATH…` options: every word after one of `lists` (multiple-valued string
 * options) up to the next option is one more of its values. Needs `parseArgs` with
 * `allowPositionals` and `tokens`; returns the words that belong to no option.
 */
function listWords(
  parsed: { readonly values: Record<string, unknown>; readonly tokens?: readonly ArgToken[] },
  lists: readonly string[],
): string[] {
  const positionals: string[] = [];
  let list: string[] | undefined;
  for (const token of parsed.tokens ?? []) {
    if (token.kind === "option") {
      const values = lists.includes(token.name) ? parsed.values[token.name] : undefined;
      list = Array.isArray(values) ? values : undefined;
    } else if (token.kind === "option-terminator") list = undefined;
    else (list ?? positionals).push(token.value);
  }
  return positionals;
}

/** An option as the help and completion write it: `--name` and, when it has one, `-x`. */
export function optionFlags(name: string, option: OptionSpec): string[] {
  return option.short === undefined ? [`--${name}`] : [`-${option.short}`, `--${name}`];
}

/** Column where the help's descriptions start. */
const HELP_COLUMN = 20;

/** A command's operands and options as its `--help` lists them, one entry each, in declaration order. */
export function optionsHelp(spec: CommandSpec): string {
  const entries = [
    ...(spec.operands ?? []).map((operand) => ({ head: operand.name, help: operand.help })),
    ...Object.entries(spec.options).map(([name, option]) => ({
      head: `${option.short === undefined ? "" : `-${option.short}, `}--${name}${option.value === undefined ? "" : ` ${option.value}`}`,
      help: option.help,
    })),
  ];
  const indent = " ".repeat(HELP_COLUMN);
  return entries
    .map(({ head, help }) => {
      const start = `  ${head}`;
      const gap = start.length < HELP_COLUMN ? " ".repeat(HELP_COLUMN - start.length) : "  ";
      return `${start}${gap}${help.split("\n").join(`\n${indent}`)}`;
    })
    .join("\n");
}
