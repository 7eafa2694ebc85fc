import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./harness.ts";
import { run } from "./run-cli.ts";
import { addEastWorker, copyExampleSite } from "./support/example-site.ts";
import { sarifValidator } from "./support/sarif-schema.ts";

const broken = path.join(REPO, "examples", "broken");
const ANNOTATION = /^::(error|warning) (file=[^,:]+,line=\d+,col=\d+,)?title=metalsynth [a-z-]+::.+$/;

describe("findings where the reviewer looks (-o github, -o sarif)", () => {
  const validateSarif = sarifValidator();

  it("validate -o github annotates every finding JSON lists, on its file, line and column", async () => {
    const json = await run("validate", "--site", broken, "--format", "json");
    const rows: { severity: string; rule: string; file: string; line: number; column: number }[] = JSON.parse(
      json.out,
    );
    const github = await run("validate", "--site", broken, "-o", "github");
    expect(github.code).toBe(1);
    const lines = github.out.trimEnd().split("\n");
    for (const line of lines) expect(line).toMatch(ANNOTATION);
    expect(
      lines
        .map((line) =>
          /^::(\w+) file=([^,]+),line=(\d+),col=(\d+),title=metalsynth ([a-z-]+)/
            .exec(line)
            ?.slice(1)
            .join(" "),
        )
        .sort(),
    ).toEqual(rows.map((row) => `${row.severity} ${row.file} ${row.line} ${row.column} ${row.rule}`).sort());
    expect(github.err).toMatch(/\d+ errors/);
  });

  it("validate -o sarif is one SARIF 2.1.0 log that the official schema accepts", async () => {
    const result = await run("validate", "--site", broken, "-o", "sarif");
    expect(result.code).toBe(1);
    const log = JSON.parse(result.out);
    expect(validateSarif(log)).toEqual([]);
    const json = JSON.parse((await run("validate", "--site", broken, "-o", "json")).out);
    expect(log.runs[0].results).toHaveLength(json.length);
  });

  it("synth and diff take -o github and -o sarif, keeping stdout for the findings", async () => {
    const site = await copyExampleSite();
    const synth = await run("synth", "--site", site, "-o", "sarif");
    expect(synth.code).toBe(0);
    expect(validateSarif(JSON.parse(synth.out))).toEqual([]);
    expect(synth.err).toMatch(/^wrote .*rendered: \d+ added/m);
    await addEastWorker(site);
    const diff = await run("diff", "--site", site, "-o", "github", "--exit-code");
    // The new worker's host is not provisioned yet: a warning, annotated on its line.
    expect(diff.code).toBe(1);
    expect(diff.out).toMatch(
      /^::warning file=[^,]*provisioning\.yaml,line=\d+,col=\d+,title=metalsynth host-not-ready::/,
    );
    expect(diff.err).toMatch(/\+ host +worker worker-3=/);
    const sarif = await run("diff", "--site", site, "-o", "sarif");
    expect(validateSarif(JSON.parse(sarif.out))).toEqual([]);
  });

  it("synth -o github on a site with errors annotates them and writes nothing", async () => {
    const site = await copyExampleSite();
    await addEastWorker(site);
    const provisioning = path.join(site, "specs", "cluster-east", "provisioning.yaml");
    await writeFile(
      provisioning,
      (await readFile(provisioning, "utf8")).replace("3c:fd:fe:87:80:3c", "3c:fd:fe:87:80:zz"),
    );
    const result = await run("synth", "--site", site, "-o", "github");
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /^::error file=[^,]*provisioning\.yaml,line=\d+,col=\d+,title=metalsynth mac-format::/m,
    );
    expect(result.err).toMatch(/left unchanged/);
  });

  it("diff -o markdown summarises the change for a pull request, and --map writes the map beside it", async () => {
    const site = await copyExampleSite();
    expect((await run("synth", "--site", site)).code).toBe(0);
    await addEastWorker(site);
    const map = path.join(site, "map.html");
    const result = await run("diff", "--site", site, "-o", "markdown", "--map", map);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^### metalsynth diff\n/);
    expect(result.out).toContain("| `edge-a/cluster-east` | changed | 1 | 0 |");
    expect(result.out).toContain("- joins: worker `worker-3=metal3/r02-node-08`");
    expect(await readFile(map, "utf8")).toMatch(/<html/i);
    expect(result.err).toMatch(/1 changing hands/);
  });

  it.each([
    [["diff", "--patch", "-o", "markdown"], /--patch goes with text or json output, not markdown/],
    [["validate", "-o", "markdown"], /--format must be text, json, github or sarif, not "markdown"/],
    [["explain", "east", "-o", "sarif"], /--format must be text, json or yaml, not "sarif"/],
    [["map", "-o", "json"], /map writes HTML only/],
    [["completion"], /completion takes one shell: bash, zsh, fish/],
    [["completion", "tcsh"], /completion takes one shell/],
    [
      ["webhook", "--inventory", "inv", "--context", "prod"],
      /--kubeconfig, --context and --selector go with --from-cluster/,
    ],
    [["webhook", "--from-cluster", "-n", "metal3"], /Unknown option '-n'/],
  ])("%j is a usage error", async (argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
  });
});

describe("metalsynth completion", () => {
  it("prints the bash script", async () => {
    const result = await run("completion", "bash");
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out).toContain("complete -o filenames -F _metalsynth metalsynth\n");
  });
});

describe("--specs globs as a new user types them", () => {
  it.each([["specs/*/[a-z]*.yaml"], ["specs/cluster-east/{provisioning,software}.yaml"]])(
    "validate --specs %s reads the files it names",
    async (glob) => {
      const site = await copyExampleSite();
      const result = await run("validate", "--site", site, "--specs", path.join(site, glob), "-o", "json");
      expect(result.err).not.toMatch(/not found/);
      expect(result.code).toBe(0);
    },
  );
});
