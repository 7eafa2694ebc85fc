import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { listInputFiles } from "../gitops/files.ts";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { systemErrorLine } from "../bin/cli.ts";
import { COMMANDS } from "../bin/usage.ts";
import { readTree } from "../gitops/replace-dir.ts";
import { createTestCa, issueServerCertificate } from "./webhook/tls-fixture.ts";
import { run } from "./run-cli.ts";
import { copyExampleSite } from "./support/example-site.ts";
import { REPO } from "./harness.ts";

const site = path.join(REPO, "examples", "site");
const broken = path.join(REPO, "examples", "broken");

describe("metalsynth validate", () => {
  it("passes the bundled example site", async () => {
    const result = await run("validate", "--site", site);
    expect(result).toMatchObject({ code: 0, out: "" });
    expect(result.err).toMatch(/no problems found/);
  });

  it("reports exactly one diagnostic per planted fault in examples/broken", async () => {
    const result = await run("validate", "--site", broken, "--format", "json");
    expect(result.code).toBe(1);
    const diagnostics: { rule: string; file: string; line: number }[] = JSON.parse(result.out);
    const listing = await listInputFiles([path.join(broken, "specs"), path.join(broken, "inventory")], {
      site: broken,
      relativeTo: REPO,
    });
    const files = [
      ...listing.files.map((file) => file.absolute),
      path.join(broken, "metalsynth.yaml"),
      path.join(broken, "rendered", "metalsynth.lock.yaml"),
    ];
    const planted = files.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, index) => {
          const match = /# planted: ([a-z-]+)/.exec(line);
          return match ? [`${match[1]} ${path.relative(REPO, file)}:${index + 1}`] : [];
        }),
    );
    // A symbolic link that leaves the site can carry no comment: it is the planted fault itself.
    planted.push(...listing.unread.map((entry) => `file-unread ${entry.display}:1`));
    expect(listing.unread.length).toBeGreaterThanOrEqual(1);
    expect(planted.length).toBeGreaterThanOrEqual(10);
    expect(new Set(planted.map((entry) => entry.split(" ")[0])).size).toBeGreaterThanOrEqual(10);
    const found = diagnostics.map((diagnostic) => `${diagnostic.rule} ${diagnostic.file}:${diagnostic.line}`);
    expect(found.sort()).toEqual(planted.sort());
  });

  it("checks the lock of the rendered tree --out names, and refuses one that is not there", async () => {
    const rules = async (...argv: string[]) => {
      const result = await run("validate", "--site", broken, "-o", "json", ...argv);
      return (JSON.parse(result.out) as { rule: string }[]).map((found) => found.rule);
    };
    expect(await rules()).toContain("lock-invalid");
    expect(await rules("--out", path.join(broken, "rendered"))).toContain("lock-invalid");
    // A mistyped --out used to read no lock, and the lock's findings went missing without a word.
    for (const missing of ["/nonexistent", path.join(broken, "metalsynth.yaml")]) {
      const result = await run("validate", "--site", broken, "--out", missing);
      expect(result).toMatchObject({ code: 2, out: "" });
      expect(result.err).toBe(
        `metalsynth validate: --out ${missing}: ${missing === "/nonexistent" ? "no such directory" : "not a directory"}; it names the rendered tree whose lock is read\n`,
      );
    }
  });

  it("prints sorted text diagnostics in file:line:col: severity[rule] path: message form", async () => {
    const result = await run("validate", "--site", broken);
    const lines = result.out.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines)
      expect(line).toMatch(/^examples\/broken\/[\w./-]+:\d+:\d+: (error|warning)\[[a-z-]+\] (\S+: )?.+$/);
    expect(lines).toContain(
      "examples/broken/specs/macs.yaml:26:9: error[mac-unknown] spec.masters[0].master-1.mac-address: b8:ce:f6:79:e4:c0 matches no BareMetalHost (closest: b8:ce:f6:79:ea:c0 on metal3/r03-node-04)",
    );
    expect(result.err).toMatch(/\d+ errors, \d+ warnings/);
  });

  it("prints a finding whose values hold line breaks on one line", async () => {
    const dir = await copyExampleSite();
    await writeFile(
      path.join(dir, "specs", "newline.yaml"),
      [
        "apiVersion: bpa.akraino.org/v1alpha1",
        "kind: Provisioning",
        "metadata: {name: nl, namespace: edge-a, labels: {cluster: nl}}",
        "spec:",
        "  masters:",
        '    - "master\\n1\\u2028x":',
        "        cpu: 1",
        "",
      ].join("\n"),
    );
    const result = await run("validate", "--site", dir, "--specs", path.join(dir, "specs", "newline.yaml"));
    expect(result.code).toBe(1);
    const lines = result.out.trimEnd().split(/\r\n|[\n\r\u0085\u2028\u2029]/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /:6:7: error\[node-label\] spec\.masters\[0\]\["master\\n1\\u2028x"\]: node label "master\\n1\\u2028x" is not a DNS-1123 label/,
    );
  });

  it.each([["validate"], ["synth"], ["diff"], ["commit"], ["explain", "cluster-east"], ["map"]])(
    "%s --site <a file> is a one-line usage error",
    async (...command) => {
      const file = path.join(site, "metalsynth.yaml");
      const result = await run(...command, "--site", file);
      expect(result).toMatchObject({ code: 2, out: "" });
      expect(result.err).toBe(
        `metalsynth ${command[0]}: site is not a directory: ${file} (the site is the directory that holds specs/)\n` +
          `see 'metalsynth ${command[0]} --help'\n`,
      );
    },
  );

  it("accepts --specs globs and --inventory files", async () => {
    const result = await run(
      "validate",
      "--specs",
      path.join(path.relative(process.cwd(), broken), "specs", "mac*.yaml"),
      "--inventory",
      path.join(broken, "inventory"),
      "--format",
      "json",
    );
    expect(result.code).toBe(1);
    const rules = JSON.parse(result.out)
      .filter((diagnostic: { file: string }) => diagnostic.file.includes("/specs/"))
      .map((diagnostic: { rule: string }) => diagnostic.rule);
    expect(rules.sort()).toEqual(["mac-duplicate", "mac-format", "mac-unknown"]);
  });

  it("takes every word after --specs and --inventory up to the next option, as a shell expands a glob", async () => {
    const specs = path.join(broken, "specs");
    const result = await run(
      "validate",
      "--specs",
      path.join(specs, "macs.yaml"),
      path.join(specs, "no-fit.yaml"),
      "--inventory",
      path.join(broken, "inventory"),
      "--format",
      "json",
    );
    expect(result.code).toBe(1);
    const files = JSON.parse(result.out)
      .map((diagnostic: { file: string }) => diagnostic.file)
      .filter((file: string) => file.includes("/specs/"));
    expect([...new Set(files)].sort()).toEqual([
      "examples/broken/specs/macs.yaml",
      "examples/broken/specs/no-fit.yaml",
    ]);
  });

  it("exits 1 with a yaml-syntax diagnostic for a malformed spec file", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-cli-"));
    await cp(path.join(site, "inventory"), path.join(dir, "inventory"), { recursive: true });
    await writeFile(path.join(dir, "specs.yaml"), "apiVersion: [\n");
    const result = await run(
      "validate",
      "--site",
      dir,
      "--specs",
      path.join(dir, "specs.yaml"),
      "--format",
      "json",
    );
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out)).toMatchObject([{ rule: "yaml-syntax", line: 2, severity: "error" }]);
  });

  it.each([
    [["validate", "--frobnicate"], /Unknown option '--frobnicate'/],
    [["validate", "--format", "xml"], /--format must be text, json, github or sarif, not "xml"/],
    [["validate", "--site", "examples/site", "stray"], /unexpected argument "stray"/],
    [["diff", "--exit-code", "stray"], /unexpected argument "stray"/],
    [["explain", "--site", "examples/site"], /explain takes exactly one cluster name/],
    [["validate", "--site", "/nonexistent/site"], /specs path not found/],
    [
      ["validate", "--site", "examples/site", "--inventory", "/nonexistent/inventory"],
      /nonexistent\/inventory/,
    ],
    [["transmogrify"], /unknown command "transmogrify"/],
  ])("exits 2 on usage errors: %j", async (argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    // A short error and where to read more, not the whole usage.
    expect(result.err).not.toMatch(/usage:/);
    expect(result.err).toMatch(/\nsee 'metalsynth (\w+ )?--help'\n$/);
    expect(result.err.split("\n").length).toBeLessThanOrEqual(3);
    expect(result.out).toBe("");
  });
});

describe("help, version and a bare metalsynth", () => {
  it("prints a command's own usage for <command> --help and help <command>", async () => {
    for (const argv of [
      ["synth", "--help"],
      ["synth", "-h"],
      ["help", "synth"],
    ]) {
      const result = await run(...argv);
      expect(result).toMatchObject({ code: 0, err: "" });
      expect(result.out).toMatch(/^usage: metalsynth synth \[--site DIR\]/);
      expect(result.out).toContain("--out DIR");
      expect(result.out).not.toContain("commands:");
    }
    const commit = await run("commit", "--help");
    expect(commit.out).toMatch(/4 Git refused the commit or the push/);
  });

  it("prints every command for --help, on stdout, exit 0", async () => {
    const result = await run("--help");
    expect(result).toMatchObject({ code: 0, err: "" });
    for (const command of ["validate", "synth", "diff", "explain", "commit", "webhook", "manifests"])
      expect(result.out).toMatch(new RegExp(`^  ${command} `, "m"));
  });

  it("prints the package version for --version and version, and with -o json the Node.js too", async () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8"));
    expect(await run("--version")).toEqual({ code: 0, out: `metalsynth ${version}\n`, err: "" });
    expect(await run("version")).toEqual({ code: 0, out: `metalsynth ${version}\n`, err: "" });
    expect(JSON.parse((await run("version", "-o=json")).out)).toEqual({
      metalsynth: version,
      node: process.versions.node,
    });
  });

  it("reads kubectl's -o=FORMAT, --output FORMAT and --output=FORMAT as --format", async () => {
    for (const argv of [["-o=json"], ["--output", "json"], ["--output=json"]]) {
      const result = await run("validate", "--site", site, ...argv);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.out)).toEqual([]);
    }
  });

  it("names the site's clusters for the completion scripts, hidden from the help", async () => {
    const result = await run("__clusters", "--site", site);
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out.split("\n")).toEqual(
      expect.arrayContaining(["edge-a/cluster-west", "cluster-west", "edge-sip/tenant-a", "tenant-a"]),
    );
    expect((await run("--help")).out).not.toContain("__clusters");
  });

  it("says which command or option was meant when one is mistyped", async () => {
    const command = await run("synht", "--site", site);
    expect(command.code).toBe(2);
    expect(command.err).toBe(
      `metalsynth: unknown command "synht" (did you mean synth?)\nsee 'metalsynth --help'\n`,
    );
    const option = await run("validate", "--stie", site);
    expect(option.code).toBe(2);
    expect(option.err).toMatch(/^metalsynth validate: Unknown option '--stie' \(did you mean --site\?\)\n/);
  });

  it("exits 2 with a short hint on stderr when no command is given, like git", async () => {
    const result = await run();
    expect(result.code).toBe(2);
    expect(result.out).toBe("");
    expect(result.err).toBe(
      `metalsynth: no command given (${Object.keys(COMMANDS).join(", ")})\nsee 'metalsynth --help'\n`,
    );
  });

  it("turns a file system error that escapes a command into one line naming the path", () => {
    const error = Object.assign(new Error("EACCES: permission denied, mkdir '/srv/site/rendered'"), {
      code: "EACCES",
      syscall: "mkdir",
      path: "/srv/site/rendered",
    });
    expect(systemErrorLine(error)).toBe(
      "could not create the directory /srv/site/rendered: permission denied; check the path and its permissions",
    );
    expect(systemErrorLine(new TypeError("x is undefined"))).toBeUndefined();
  });
});

describe("metalsynth webhook start-up problems", () => {
  it("says in one line which TLS file is wrong, and that a port is taken: exit 2, no stack", async () => {
    const ca = await createTestCa();
    const pair = await issueServerCertificate(ca, "server");
    const inventory = path.join(site, "inventory");
    const start = (...extra: string[]) =>
      run("webhook", "--inventory", inventory, "--host", "127.0.0.1", ...extra);

    const swapped = await start("--tls-cert", pair.keyFile, "--tls-key", pair.keyFile, "--port", "0");
    expect(swapped.code).toBe(2);
    expect(swapped.err).toBe(
      `metalsynth webhook: --tls-cert ${pair.keyFile}: not a PEM certificate (it holds a private key: pass it to --tls-key); pass the certificate (tls.crt)\n`,
    );
    const other = await issueServerCertificate(ca, "other");
    const mismatched = await start("--tls-cert", pair.certFile, "--tls-key", other.keyFile, "--port", "0");
    expect(mismatched.code).toBe(2);
    expect(mismatched.err).toMatch(
      /^metalsynth webhook: --tls-key \S+ is not the private key of --tls-cert \S+;[^\n]*\n$/,
    );

    const taken = createServer();
    taken.listen(0, "127.0.0.1");
    await once(taken, "listening");
    const { port } = taken.address() as AddressInfo;
    try {
      const busy = await start(
        "--tls-cert",
        pair.certFile,
        "--tls-key",
        pair.keyFile,
        "--port",
        String(port),
      );
      expect(busy.code).toBe(2);
      expect(busy.err).toBe(
        `metalsynth webhook: --port ${port}: 127.0.0.1:${port} is already in use; stop what listens there or pass another --port\n`,
      );
    } finally {
      taken.close();
    }
  });
});

describe("metalsynth explain", () => {
  it("explains a BPA cluster chosen by resources, in text and JSON", async () => {
    // An output directory without a lock: the choice is made afresh.
    const noLock = await mkdtemp(path.join(tmpdir(), "metalsynth-explain-"));
    const text = await run("explain", "cluster-west", "--site", site, "--out", noLock);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(
      /^Provisioning edge-a\/cluster-west\n {2}master master-1 {2}\(spec\.masters\[0\]\.master-1\)\n {4}chosen: {3}metal3\/\S+ {2}best fit: 16 CPUs, 64Gi\n/,
    );
    // With the committed lock the host is kept, and hosts of clusters planned later are still shown
    // as theirs: the lock claimed them before this decision.
    const kept = await run("explain", "cluster-west", "--site", site);
    expect(kept.out).toContain("chosen:   metal3/r01-node-05  kept from rendered/metalsynth.lock.yaml");
    expect(kept.out).toContain("rejected: metal3/r01-node-01  claimed by other clusters");
    // Options may come before the cluster name too.
    const json = await run("explain", "--site", site, "--format", "json", "edge-a/cluster-west");
    expect(json.code).toBe(0);
    const [explanation] = JSON.parse(json.out);
    expect(explanation.decisions.map((decision: { subject: string }) => decision.subject)).toEqual([
      "master master-1",
      "master master-2",
      "master master-3",
      "worker worker-1",
      "worker worker-2",
    ]);
  });

  it("lists 20 rejected hosts a decision in text unless --all, and every one as YAML", async () => {
    const count = (out: string) => (out.match(/^ {4}rejected: /gm) ?? []).length;
    const capped = await run("explain", "cluster-west", "--site", site);
    // The example site's 24 hosts: one chosen, 23 rejected per decision, five decisions.
    expect(count(capped.out)).toBe(5 * 20);
    expect(capped.out).toContain("    … and 3 more rejected (--all lists every host)\n");
    const all = await run("explain", "cluster-west", "--site", site, "--all");
    expect(count(all.out)).toBe(5 * 23);
    expect(all.out).not.toContain("more rejected");
    const yaml = await run("explain", "cluster-west", "--site", site, "--output=yaml");
    expect(yaml.code).toBe(0);
    const [explanation] = parseYaml(yaml.out) as { decisions: { rejected: unknown[] }[] }[];
    expect(explanation?.decisions.map((decision) => decision.rejected.length)).toEqual([23, 23, 23, 23, 23]);
  });

  it("names a cluster whose Provisioning has a schema typo, with the finding as validate prints it, exit 1", async () => {
    const dir = await copyExampleSite();
    const file = path.join(dir, "specs", "cluster-west", "provisioning.yaml");
    const spec = await readFile(file, "utf8");
    expect(spec).toContain("        cpu: 16\n");
    await writeFile(file, spec.replace("        cpu: 16\n", "        cpu: lots\n"));
    const validate = await run("validate", "--site", dir);
    expect(validate.code).toBe(1);
    expect(validate.out).toMatch(
      /^\S+provisioning\.yaml:\d+:\d+: error\[schema\] spec\.masters\[0\]\.master-1\.cpu: .*"lots"\n$/,
    );

    const text = await run("explain", "cluster-west", "--site", dir);
    expect(text).toEqual({
      code: 1,
      out:
        "edge-a/cluster-west: nothing is planned, because its CR Provisioning/edge-a/cluster-west failed its rules:\n" +
        validate.out,
      err: "",
    });
    const json = await run("explain", "edge-a/cluster-west", "--site", dir, "-o", "json");
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toEqual([
      {
        cluster: "edge-a/cluster-west",
        failed: ["Provisioning/edge-a/cluster-west"],
        diagnostics: JSON.parse((await run("validate", "--site", dir, "-o", "json")).out),
      },
    ]);
  });

  it("exits 1 for an unknown cluster, naming the known ones", async () => {
    const result = await run("explain", "nope", "--site", site);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/no cluster "nope" in the site \(clusters: edge-a\/cluster-east/);
  });
});

describe("files that are not read", () => {
  async function siteCopy(): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-files-"));
    await copyExampleSite(dir);
    return dir;
  }

  it("refuses a spec link that leaves the site: exit 1 naming it, and rendered/ keeps every cluster", async () => {
    const dir = await siteCopy();
    expect((await run("synth", "--site", dir)).code).toBe(0);
    const before = await readTree(path.join(dir, "rendered"));
    const outside = await mkdtemp(path.join(tmpdir(), "metalsynth-outside-"));
    await rename(path.join(dir, "specs", "cluster-west"), path.join(outside, "cluster-west"));
    await symlink(path.join(outside, "cluster-west"), path.join(dir, "specs", "cluster-west"));
    const result = await run("synth", "--site", dir, "--format", "json");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out).diagnostics).toContainEqual(
      expect.objectContaining({
        rule: "file-unread",
        file: path.relative(process.cwd(), path.join(dir, "specs", "cluster-west")),
        message: expect.stringMatching(/^not read: symbolic link to .* leaves the directory /),
      }),
    );
    expect(await readTree(path.join(dir, "rendered"))).toEqual(before);
    // A link that stays inside the site is followed.
    await rm(path.join(dir, "specs", "cluster-west"));
    await rename(path.join(outside, "cluster-west"), path.join(dir, "west"));
    await symlink("../west", path.join(dir, "specs", "cluster-west"));
    expect(await run("synth", "--site", dir)).toMatchObject({ code: 0 });
    expect(await readTree(path.join(dir, "rendered"))).toEqual(before);
  });

  it("reports dangling and looping links and a directory named like a file under inventory/, without a stack", async () => {
    const dir = await siteCopy();
    await symlink("nowhere.yaml", path.join(dir, "inventory", "dangling.yaml"));
    await symlink("loop.yaml", path.join(dir, "inventory", "loop.yaml"));
    await mkdir(path.join(dir, "inventory", "extra.yaml"));
    await symlink("extra.yaml", path.join(dir, "inventory", "linked.yaml"));
    const result = await run("validate", "--site", dir);
    expect(result.code).toBe(1);
    const shown = path.relative(process.cwd(), path.join(dir, "inventory"));
    expect(result.out).toBe(
      `${shown}/dangling.yaml:1:1: error[file-unread] not read: symbolic link to nowhere.yaml, which does not exist\n` +
        `${shown}/loop.yaml:1:1: error[file-unread] not read: symbolic link loop (loop.yaml)\n`,
    );
    expect(result.err).not.toMatch(/internal error|EISDIR|\n {4}at /);
  });

  it("reports a metalsynth.yaml that is a directory instead of ignoring it", async () => {
    const dir = await siteCopy();
    await rm(path.join(dir, "metalsynth.yaml"));
    await mkdir(path.join(dir, "metalsynth.yaml"));
    const result = await run("validate", "--site", dir);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /metalsynth\.yaml:1:1: error\[file-unread\] not read: a directory; the site settings must be a YAML file\n$/,
    );
  });

  // Root reads every file; run the CLI as root without the capabilities that bypass file modes, to
  // see a real EACCES. (As another user instead, it could not read a clone in a private directory.)
  it.runIf(process.getuid?.() === 0 && existsSync("/usr/bin/setpriv"))(
    "reports an unreadable spec or inventory file as a diagnostic (exit 1), not a stack or a usage error",
    async () => {
      const dir = await siteCopy();
      await chmod(path.join(dir, "inventory", "rack-r02.yaml"), 0o000);
      await chmod(path.join(dir, "specs", "tenant-a", "sipcluster.yaml"), 0o000);
      const child = spawnSync(
        "/usr/bin/setpriv",
        [
          "--bounding-set=-dac_override,-dac_read_search",
          "node",
          path.join(REPO, "bin", "metalsynth.js"),
          "validate",
          "--site",
          ".",
        ],
        { cwd: dir, encoding: "utf8" },
      );
      expect(child.status).toBe(1);
      expect(child.stdout).toContain(
        "inventory/rack-r02.yaml:1:1: error[file-unread] not read: permission denied\n",
      );
      expect(child.stdout).toContain(
        "specs/tenant-a/sipcluster.yaml:1:1: error[file-unread] not read: permission denied\n",
      );
      expect(child.stderr).not.toMatch(/internal error|usage:/);
    },
  );
});

describe("synth's progress on stderr", () => {
  const bin = path.join(REPO, "bin", "metalsynth.js");

  // A real terminal: util-linux's script runs the built CLI on a pseudo-terminal, so stderr's isTTY
  // is the kernel's answer, not a flag the test sets.
  it.runIf(spawnSync("script", ["--version"]).status === 0)(
    "draws a line on a terminal while it works, and clears it before the results",
    async () => {
      const dir = await copyExampleSite();
      const child = spawnSync(
        "script",
        ["--quiet", "--return", "--command", `'${process.execPath}' '${bin}' synth --site .`, "/dev/null"],
        { cwd: dir, encoding: "utf8", input: "" },
      );
      expect(child.status, child.stdout).toBe(0);
      const screen = child.stdout.replaceAll("\r\n", "\n");
      const clear = "\r\u001b[2K";
      expect(screen).toContain(`${clear}metalsynth synth: reading, planning and rendering… `);
      expect(screen).toContain(`${clear}metalsynth synth: writing rendered… `);
      // Cleared, then the results as a pipe would get them, with no escape left among them.
      const results = screen.slice(screen.lastIndexOf(clear) + clear.length);
      expect(results).toMatch(/^edge-a\/cluster-east: /);
      expect(results).toMatch(/\nwrote rendered: \d+ added, 0 changed, 0 removed, 0 unchanged\n$/);
      expect(results).not.toContain("\x1b");
    },
  );

  it("draws nothing when stderr is no terminal (and a short run adds no summary)", async () => {
    const dir = await copyExampleSite();
    const child = spawnSync(process.execPath, [bin, "synth", "--site", "."], { cwd: dir, encoding: "utf8" });
    expect(child.status).toBe(0);
    expect(child.stderr).toBe("");
    expect(child.stdout).toMatch(/\nwrote rendered: /);
  });
});
