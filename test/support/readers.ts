/**
 * The programs that read what synth writes, run on a rendered file and asked what they understood
 * (docs/contract.md §9 "Real readers of what we write"): HAProxy for `haproxy.cfg`, ansible-inventory for
 * `hosts.ini`, `ssh -G` for `ssh_config`, `ssh-keygen -l` for `authorized_keys` and kubectl for the
 * YAML files themselves. Debian's haproxy, ansible-core and openssh-client packages provide them
 * (.ci/run installs them; the machine has kubectl, which the e2e suite needs too). Each function
 * writes the text to a file of its own under `dir` and returns what the program made of it, or why
 * it refused it; none of them opens a network connection or binds a port.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { compareText } from "../../synth/issue.ts";

/** What a reader program printed and how it ended. */
export interface ReaderRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The PATH readers run with: Debian installs haproxy in /usr/sbin, which a user's PATH may lack. */
const READER_PATH = [process.env["PATH"] ?? "", "/usr/sbin", "/sbin"].join(":");

/** Runs `command` without a shell; a non-zero exit is a result, not an error. */
export function runReader(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<ReaderRun> {
  env = { ...env, PATH: READER_PATH };
  return new Promise((resolve, reject) => {
    execFile(command, args, { env, encoding: "utf8", maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") return reject(error);
      resolve({ status: typeof error?.code === "number" ? error.code : 0, stdout, stderr });
    });
  });
}

/** Whether all five reader programs are installed: the tests that need them are skipped otherwise. */
export async function haveReaders(): Promise<boolean> {
  const probes: [string, string[]][] = [
    ["haproxy", ["-v"]],
    ["ansible-inventory", ["--version"]],
    ["ssh", ["-V"]],
    ["ssh-keygen", ["-?"]],
    ["kubectl", ["version", "--client"]],
  ];
  const found = await Promise.all(
    probes.map(([command, args]) =>
      runReader(command, args).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.every(Boolean);
}

/** A fresh directory under `parent` for one reader's files. */
async function scratch(parent: string, prefix: string): Promise<string> {
  return mkdtemp(path.join(parent, `${prefix}-`));
}

/** A backend as HAProxy loaded it: its servers by name, each with the address:port HAProxy parsed. */
export interface HaproxyBackend {
  readonly name: string;
  readonly servers: readonly { readonly name: string; readonly address: string }[];
}

/** What HAProxy made of a configuration. */
export type HaproxyReading =
  | { readonly ok: true; readonly backends: readonly HaproxyBackend[] }
  | { readonly ok: false; readonly why: string };

/**
 * Prints every backend and its servers as HAProxy holds them after parsing, then exits. Init
 * functions run once the configuration is loaded and before HAProxy binds any port (check mode `-c`
 * runs none), so this lists what HAProxy would serve without serving it.
 */
const DUMP_BACKENDS_LUA = `core.register_init(function()
  for bname, backend in pairs(core.backends) do
    io.stdout:write("backend\\t" .. bname .. "\\n")
    for sname, server in pairs(backend.servers) do
      io.stdout:write("server\\t" .. bname .. "\\t" .. sname .. "\\t" .. server:get_addr() .. "\\n")
    end
  end
  io.stdout:flush()
  os.exit(0)
end)
`;

/**
 * `haproxy -c -f <config>` must accept the configuration without a warning; then HAProxy loads it
 * with {@link DUMP_BACKENDS_LUA} as a second file and says which backends and servers it holds,
 * sorted by name (Lua lists tables in no fixed order).
 */
export async function haproxyBackends(config: string, dir: string): Promise<HaproxyReading> {
  const work = await scratch(dir, "haproxy");
  const file = path.join(work, "haproxy.cfg");
  const lua = path.join(work, "dump-backends.lua");
  const dump = path.join(work, "dump-backends.cfg");
  await Promise.all([
    writeFile(file, config),
    writeFile(lua, DUMP_BACKENDS_LUA),
    writeFile(dump, `global\n  lua-load ${lua}\n`),
  ]);
  const check = await runReader("haproxy", ["-c", "-f", file]);
  if (check.status !== 0 || check.stderr !== "")
    return { ok: false, why: `haproxy -c exited ${check.status}: ${check.stderr.trim()}` };
  const loaded = await runReader("haproxy", ["-q", "-f", file, "-f", dump]);
  if (loaded.status !== 0)
    return { ok: false, why: `haproxy exited ${loaded.status} loading it: ${loaded.stderr.trim()}` };
  const backends = new Map<string, { name: string; address: string }[]>();
  for (const line of loaded.stdout.split("\n").filter(Boolean)) {
    const [what, backend = "", name = "", address = ""] = line.split("\t");
    if (what === "backend") backends.set(backend, backends.get(backend) ?? []);
    else backends.set(backend, [...(backends.get(backend) ?? []), { name, address }]);
  }
  return {
    ok: true,
    backends: [...backends]
      .map(([name, servers]) => ({ name, servers: servers.sort((a, b) => compareText(a.name, b.name)) }))
      .sort((a, b) => compareText(a.name, b.name)),
  };
}

/** The groups and host variables ansible-inventory read from an inventory (its `--list` JSON). */
export interface AnsibleInventory {
  /** Group → its hosts, in file order; groups without hosts of their own are left out. */
  readonly hosts: Readonly<Record<string, readonly string[]>>;
  /** Group → its child groups, for groups that have any. */
  readonly children: Readonly<Record<string, readonly string[]>>;
  /** Host → its variables. */
  readonly hostvars: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** What ansible-inventory made of an inventory. */
export type AnsibleReading =
  | { readonly ok: true; readonly inventory: AnsibleInventory }
  | {
      readonly ok: false;
      readonly why: string;
    };

/**
 * `ansible-inventory -i hosts.ini --list`, with the INI plugin only and an unparsable source an
 * error: by default ansible-inventory tries every plugin, warns that none could parse the file and
 * prints an empty inventory with exit code 0.
 */
export async function ansibleInventory(ini: string, dir: string): Promise<AnsibleReading> {
  const work = await scratch(dir, "ansible");
  const file = path.join(work, "hosts.ini");
  await writeFile(file, ini);
  const result = await runReader("ansible-inventory", ["-i", file, "--list"], {
    ...process.env,
    ANSIBLE_HOME: path.join(work, ".ansible"),
    ANSIBLE_LOCAL_TEMP: path.join(work, ".ansible", "tmp"),
    ANSIBLE_INVENTORY_ENABLED: "ini",
    ANSIBLE_INVENTORY_UNPARSED_FAILED: "true",
    ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED: "true",
    ANSIBLE_NOCOLOR: "true",
  });
  if (result.status !== 0)
    return { ok: false, why: `ansible-inventory exited ${result.status}: ${result.stderr.trim()}` };
  const listed: unknown = JSON.parse(result.stdout);
  const hosts: Record<string, string[]> = {};
  const children: Record<string, string[]> = {};
  let hostvars: Record<string, Record<string, unknown>> = {};
  for (const [group, entry] of Object.entries(isRecord(listed) ? listed : {})) {
    if (!isRecord(entry)) continue;
    if (group === "_meta") {
      const vars = isRecord(entry["hostvars"]) ? entry["hostvars"] : {};
      hostvars = Object.fromEntries(
        Object.entries(vars).map(([host, values]) => [host, isRecord(values) ? values : {}]),
      );
      continue;
    }
    if (Array.isArray(entry["hosts"])) hosts[group] = entry["hosts"].map(String);
    if (Array.isArray(entry["children"])) children[group] = entry["children"].map(String);
  }
  return { ok: true, inventory: { hosts, children, hostvars } };
}

/** An ssh_config as `ssh -G` reads it for one host: option (lowercase) → its values, in order. */
export type SshOptions = Readonly<Record<string, readonly string[]>>;

/** What `ssh -G` made of a config for one destination. */
export type SshReading =
  | { readonly ok: true; readonly options: SshOptions }
  | {
      readonly ok: false;
      readonly why: string;
    };

/**
 * `ssh -G -F <config> <host>` for each of `hosts`: the configuration ssh would connect with, parsed
 * from ssh's own output. `-F` makes ssh read that file only, not the user's or the system's.
 */
export async function sshConfigFor(
  config: string,
  hosts: readonly string[],
  dir: string,
): Promise<Map<string, SshReading>> {
  const work = await scratch(dir, "ssh-config");
  const file = path.join(work, "ssh_config");
  await writeFile(file, config);
  const readings = await Promise.all(
    hosts.map(async (host): Promise<[string, SshReading]> => {
      // No program can be asked about a name with a NUL byte: an argument ends there.
      if (host.includes("\0")) return [host, { ok: false, why: "a host name with a NUL byte" }];
      const result = await runReader("ssh", ["-G", "-F", file, "--", host]);
      if (result.status !== 0)
        return [host, { ok: false, why: `ssh -G exited ${result.status}: ${result.stderr.trim()}` }];
      const options: Record<string, string[]> = {};
      for (const line of result.stdout.split("\n").filter(Boolean)) {
        const space = line.indexOf(" ");
        const key = space < 0 ? line : line.slice(0, space);
        (options[key] ??= []).push(space < 0 ? "" : line.slice(space + 1));
      }
      return [host, { ok: true, options }];
    }),
  );
  return new Map(readings);
}

/** A key as `ssh-keygen -l` lists it. */
export interface ListedKey {
  readonly fingerprint: string;
  /** The comment, empty when the key has none. */
  readonly comment: string;
}

/** What `ssh-keygen -l` made of an authorized_keys file. */
export type SshKeygenReading =
  | { readonly ok: true; readonly keys: readonly ListedKey[] }
  | {
      readonly ok: false;
      readonly why: string;
    };

/**
 * `ssh-keygen -l -f authorized_keys`: one line per key it (and sshd) reads, `<bits> SHA256:<hash>
 * <comment> (<TYPE>)`. Lines that are no key are skipped silently, as sshd skips them; the caller
 * compares the count with the lines it wrote.
 */
export async function sshKeygenList(authorizedKeys: string, dir: string): Promise<SshKeygenReading> {
  const work = await scratch(dir, "ssh-keygen");
  const file = path.join(work, "authorized_keys");
  await writeFile(file, authorizedKeys);
  const result = await runReader("ssh-keygen", ["-l", "-E", "sha256", "-f", file]);
  if (result.status !== 0)
    return { ok: false, why: `ssh-keygen -l exited ${result.status}: ${result.stderr.trim()}` };
  const keys = result.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const match = /^\d+ (SHA256:\S+) (.*) \([A-Z0-9-]+\)$/.exec(line);
      if (!match) throw new Error(`ssh-keygen -l printed an unexpected line: ${line}`);
      return { fingerprint: match[1]!, comment: match[2] === "no comment" ? "" : match[2]! };
    });
  return { ok: true, keys };
}

/**
 * What `ssh-keygen -l` lists for a one-line OpenSSH public key `<type> <base64> [comment]`: the
 * SHA-256 of the key blob, unpadded base64, and the comment. Computed here, so the expectation does
 * not come from the program under judgement.
 */
export function expectedKeyListing(key: string): ListedKey {
  const [, blob = "", ...comment] = key.trim().split(/[ \t]+/);
  const digest = createHash("sha256").update(Buffer.from(blob, "base64")).digest("base64");
  return { fingerprint: `SHA256:${digest.replace(/=+$/, "")}`, comment: comment.join(" ") };
}

/** What kubectl made of YAML files: every object they hold, in file order, or why it refused them. */
export type KubectlReading =
  { readonly ok: true; readonly objects: readonly unknown[] } | { readonly ok: false; readonly why: string };

/**
 * The objects of `files` (name → text) as kubectl reads them, all in one run: `kubectl label --local
 * -f <file>… -o json <label>-`. kubectl decodes `-f` files as `create` and `apply` do, with
 * sigs.k8s.io/yaml (go-yaml, YAML 1.1: `yes` is a boolean, `1_000` a number); `--local` spares the
 * API server that `create --dry-run=client` asks for its REST mapping (there is none here). Removing
 * a label no object has changes nothing but an absent `metadata.labels`, which kubectl adds empty
 * (and `metadata` with it): compare through {@link withoutEmptyLabels}. No kubeconfig is read.
 */
export async function kubectlObjects(
  files: readonly (readonly [string, string])[],
  dir: string,
): Promise<KubectlReading> {
  const work = await scratch(dir, "kubectl");
  const paths = files.map((_, index) => path.join(work, `${index}.yaml`));
  await Promise.all(files.map(([, text], index) => writeFile(paths[index]!, text)));
  const result = await runReader(
    "kubectl",
    ["label", "--local", "-o", "json", ...paths.flatMap((file) => ["-f", file]), "metalsynth.io/judged-"],
    { PATH: process.env["PATH"] ?? "", HOME: work, KUBECONFIG: path.join(work, "no-kubeconfig") },
  );
  if (result.status !== 0) {
    // kubectl names the scratch file; the caller's name says more.
    const why = paths.reduce((text, file, index) => text.replaceAll(file, files[index]![0]), result.stderr);
    return { ok: false, why: `kubectl exited ${result.status}: ${why.trim()}` };
  }
  // One pretty-printed JSON object after another: a line that is only `}` then `{` is between two.
  const stdout = result.stdout.trim();
  return {
    ok: true,
    objects: stdout === "" ? [] : JSON.parse(`[${stdout.replace(/^}\n(?=\{$)/gm, "},\n")}]`),
  };
}

/**
 * `object` without an empty `metadata.labels`, and without a `metadata` left empty: the same for an
 * object as written and as {@link kubectlObjects} read it.
 */
export function withoutEmptyLabels(object: unknown): unknown {
  if (!isRecord(object) || !isRecord(object["metadata"])) return object;
  const { labels, ...metadata } = object["metadata"];
  if (!isRecord(labels) || Object.keys(labels).length > 0) return object;
  const rest: Record<string, unknown> = { ...object };
  if (Object.keys(metadata).length > 0) rest["metadata"] = metadata;
  else delete rest["metadata"];
  return rest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
