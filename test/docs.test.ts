/**
 * The documents in docs/ keep up with the code: the contract names every rule of the catalogue, its
 * §7 lists each command's options exactly as the command table declares them, the README shows each
 * command's synopsis as `--help` prints it, every "docs/contract.md §n" a file cites is a section
 * of it, the decisions index lists every record, and every repository path the architecture names
 * exists. Without this, a new rule or flag could land and leave the contract silently behind.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS, type CommandName } from "../bin/usage.ts";
import { RULES } from "../synth/rule-catalogue.ts";
import { REPO } from "./harness.ts";

const read = (file: string) => readFileSync(path.join(REPO, file), "utf8");
const CONTRACT = read("docs/contract.md");

/** The contract's section numbers, from headings such as `### 4.1 Provisioning → installer`. */
const SECTIONS = new Set([...CONTRACT.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((match) => match[1]));

/** The specification's sections, which the contract keeps so that "SPEC §n" maps onto it. */
const SPEC_SECTIONS = "1 1.1 1.2 1.3 2 3 3.1 3.2 3.3 3.4 4 4.1 4.2 5 6 6.1 6.2 6.3 7 8 9".split(" ");

/** The long options `command` declares, sorted. */
const declaredFlags = (command: CommandName) =>
  Object.keys(COMMANDS[command].options)
    .map((name) => `--${name}`)
    .sort();

/** The long options a piece of documentation names, sorted, each once. */
const namedFlags = (text: string) => [...new Set(text.match(/--[a-z][a-z-]*/g) ?? [])].sort();

/** §7's table: each command's row, by command (`inventory pull` as `inventory`). */
function commandRows(): Map<string, string> {
  const section = CONTRACT.slice(CONTRACT.indexOf("## 7. "), CONTRACT.indexOf("## 8. "));
  const rows = [...section.matchAll(/^\| `metalsynth (\w+)[^`]*` \| (.*?) \| .*\|$/gm)];
  return new Map(rows.map((row) => [row[1] ?? "", row[2] ?? ""]));
}

/** The folders whose files may cite the contract, and the endings of the files that do. */
const CITING_FOLDERS = ["synth", "charts", "gitops", "webhook", "bin", "test", "bench", "docs"];
const CITING_FILE = /\.(ts|js|md)$/;

function citingFiles(): string[] {
  return CITING_FOLDERS.flatMap((folder) =>
    readdirSync(path.join(REPO, folder), { recursive: true, encoding: "utf8" })
      .filter((file) => CITING_FILE.test(file) && !file.split(path.sep).includes("node_modules"))
      .map((file) => path.join(folder, file)),
  );
}

describe("docs/contract.md", () => {
  it.each(SPEC_SECTIONS)("has §%s, numbered as the specification numbers it", (section) => {
    expect(SECTIONS).toContain(section);
  });

  it.each(Object.keys(RULES))("lists the rule %s", (rule) => {
    expect(CONTRACT).toContain(`\`${rule}\``);
  });

  it.each(Object.keys(COMMANDS) as CommandName[])(
    "§7 lists the command %s with exactly the options it declares",
    (command) => {
      const row = commandRows().get(command);
      expect(row, `no row for metalsynth ${command}`).toBeDefined();
      expect(namedFlags(row ?? "")).toEqual(declaredFlags(command));
    },
  );

  it("is cited only by sections it has", () => {
    const dangling = citingFiles().flatMap((file) =>
      [...read(file).matchAll(/docs\/contract\.md §(\d+(?:\.\d+)?)/g)]
        .filter((match) => !SECTIONS.has(match[1]))
        .map((match) => `${file}: ${match[0]}`),
    );
    expect(dangling).toEqual([]);
  });
});

describe("README.md", () => {
  const readme = read("README.md");

  it.each(
    Object.keys(COMMANDS).filter((command) => readme.includes(`\nmetalsynth ${command} `)) as CommandName[],
  )("shows the synopsis of %s as --help prints it", (command) => {
    const synopsis = `metalsynth ${COMMANDS[command].synopsis}`;
    expect(readme.includes(`\n${synopsis}\n`), `README.md should show:\n${synopsis}`).toBe(true);
  });
});

describe("docs/decisions/README.md", () => {
  const index = read("docs/decisions/README.md");

  it.each(readdirSync(path.join(REPO, "docs/decisions")).filter((file) => /^\d{4}-.*\.md$/.test(file)))(
    "lists %s",
    (record) => {
      expect(index).toContain(`(${record})`);
    },
  );
});

/** A path in backticks under one of the repository's top folders, as the architecture names files. */
const REPOSITORY_PATH = /`((?:synth|charts|gitops|webhook|bin|test|bench|deploy|helm|docs)\/[^`\s]*)`/g;

describe("docs/architecture.md", () => {
  it("names only paths that exist", () => {
    const named = [...read("docs/architecture.md").matchAll(REPOSITORY_PATH)].map((match) => match[1] ?? "");
    const missing = named.filter((name) => !existsSync(path.join(REPO, name)));
    expect(missing).toEqual([]);
  });
});
