/**
 * The trust boundary under fuzz, with the real readers as judges (issue #21, docs/contract.md §2 "Typed at the
 * door", §9 "Real readers of what we write"). Arbitrary strings go into every input field of a small
 * site that reaches a rendered text file; for each input, either `validate` and `synth` both refuse
 * it with findings (rule, file, line), leave rendered/ as it was, and the webhook's review of the CRs
 * finds each error validate found in them; or every rendered file is read by its real reader as
 * exactly what the site planned (HAProxy's backends, ansible-inventory's groups and hosts, `ssh -G`'s
 * addresses, `ssh-keygen -l`'s keys, and kubectl's objects: every YAML file as the YAML 1.2 reader
 * reads it, the CRs' labels and annotations in `specs.yaml` as the site wrote them) and the webhook
 * admits every CR.
 *
 * The directed tests first prove each reader invocation on known-good renders (the example site's
 * committed files and the fuzz's own baseline) and on tampered ones, so a broken invocation cannot
 * pass the fuzz vacuously.
 */
import { mkdir, mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { readInventory } from "../gitops/inventory-reader.ts";
import { readTree } from "../gitops/replace-dir.ts";
import { parseDocuments } from "../synth/codec/read-documents.ts";
import type { SourceDocument } from "../synth/documents.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import { readResources } from "../synth/site/resources.ts";
import { SiteReviewer } from "../webhook/site-review.ts";
import { REPO } from "./harness.ts";
import { run } from "./run-cli.ts";
import { judgeRendered } from "./support/judge-rendered.ts";
import {
  ansibleInventory,
  expectedKeyListing,
  haproxyBackends,
  haveReaders,
  kubectlObjects,
  sshConfigFor,
  withoutEmptyLabels,
  sshKeygenList,
} from "./support/readers.ts";
import { dex, judgeAuth } from "./support/judge-auth.ts";
import { BASELINE, siteFiles, type AuthValues, type SiteValues } from "./support/trust-site.ts";

/** The readers, Dex among them (built from its Go module, cached per machine: test/e2e/setup.sh). */
const READERS = (await haveReaders()) && dex() !== undefined;
/**
 * Fuzz runs per field (and three times as many for fields together). Each input synth accepts execs
 * every reader, ansible-inventory taking most of a second; a refused one costs a few milliseconds.
 */
const RUNS = Number(process.env["TRUST_FUZZ_RUNS"] ?? 4);
/**
 * One seed for every property, so CI runs the same inputs each time and a red run can be replayed;
 * `TRUST_FUZZ_SEED=<n>` (with more `TRUST_FUZZ_RUNS`) explores others.
 */
const SEED = Number(process.env["TRUST_FUZZ_SEED"] ?? 21);

const EXAMPLE = path.join(REPO, "examples", "site", "rendered", "clusters");

/** The data of the ConfigMap in a rendered file of the example site. */
async function exampleData(file: string): Promise<Record<string, string>> {
  const objects = parseAllDocuments(await readFile(path.join(EXAMPLE, file), "utf8")).map(
    (document) => document.toJS() as { kind: string; data?: Record<string, string> },
  );
  const configMap = objects.find((object) => object.kind === "ConfigMap" && object.data);
  if (!configMap?.data) throw new Error(`${file} has no ConfigMap with data`);
  return configMap.data;
}

describe.skipIf(!READERS)("the readers, on known-good and tampered files", () => {
  it("haproxy reads the example control-plane load balancer's backends: the three ControlPlane hosts", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-readers-"));
    const config = (await exampleData("edge-sip/tenant-a/loadbalancer-controlplane.yaml"))["haproxy.cfg"]!;
    expect(await haproxyBackends(config, dir)).toEqual({
      ok: true,
      backends: [
        {
          name: "kube-apiserver-backend",
          servers: [
            { name: "r01-node-01", address: "10.41.0.11:6443" },
            { name: "r02-node-01", address: "10.41.0.21:6443" },
            { name: "r03-node-01", address: "10.41.0.31:6443" },
          ],
        },
      ],
    });
    const injected = config.replace(
      "  server r01-node-01 10.41.0.11:6443",
      "  server r01-node-01 10.41.0.11:6443\n  server evil 192.0.2.66:6443",
    );
    const tampered = await haproxyBackends(injected, dir);
    expect(tampered.ok && tampered.backends[0]?.servers.map((server) => server.name)).toContain("evil");
    expect(await haproxyBackends(`${config}  bogus-keyword\n`, dir)).toMatchObject({ ok: false });
  });

  it("ansible-inventory reads the example cluster-east hosts.ini into its kubespray groups", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-readers-"));
    const ini = (await exampleData("edge-a/cluster-east/kud-installer.yaml"))["hosts.ini"]!;
    const reading = await ansibleInventory(ini, dir);
    const masters = ["master-1", "master-2", "master-3"];
    const workers = ["worker-1", "worker-2"];
    expect(reading).toMatchObject({
      ok: true,
      inventory: {
        hosts: {
          "kube-master": masters,
          "kube-node": workers,
          etcd: masters,
          "ovn-central": masters,
          "ovn-controller": workers,
          virtlet: workers,
        },
        children: { "k8s-cluster": ["kube-node", "kube-master"] },
      },
    });
    expect(reading.ok && reading.inventory.hostvars["master-1"]).toEqual({
      ansible_ssh_host: "10.23.1.14",
      ansible_ssh_port: 22,
    });
    expect(Object.keys(reading.ok ? reading.inventory.hosts : {})).not.toContain("ungrouped");
    const injected = await ansibleInventory(ini.replace("[kube-master]\n", "[kube-master]\nevil\n"), dir);
    expect(injected.ok && injected.inventory.hosts["kube-master"]).toContain("evil");
    expect(await ansibleInventory("[all\nmaster-1 ansible_ssh_host=10.0.0.1\n", dir)).toMatchObject({
      ok: false,
    });
  });

  it("ssh -G reads the example jump host's ssh_config: each host at its address, the node keys for all", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-readers-"));
    const config = (await exampleData("edge-sip/tenant-a/jumphost.yaml"))["ssh_config"]!;
    const readings = await sshConfigFor(config, ["r01-node-01", "r03-node-01", "elsewhere"], dir);
    const hostName = (host: string) => {
      const reading = readings.get(host);
      return reading?.ok ? reading.options["hostname"] : reading;
    };
    expect([hostName("r01-node-01"), hostName("r03-node-01"), hostName("elsewhere")]).toEqual([
      ["10.41.0.11"],
      ["10.41.0.31"],
      ["elsewhere"],
    ]);
    const first = readings.get("r01-node-01");
    expect(first?.ok && first.options["identityfile"]).toEqual(
      ["key", "id_ed25519", "id_ecdsa", "id_rsa"].map((file) => `/etc/opt/sip/ssh-private-keys/${file}`),
    );
    const hijacked = await sshConfigFor(`Host *\n  HostName 192.0.2.66\n${config}`, ["r01-node-01"], dir);
    const reading = hijacked.get("r01-node-01");
    expect(reading?.ok && reading.options["hostname"]).toEqual(["192.0.2.66"]);
    expect(
      (await sshConfigFor(`${config}  Bogus yes\n`, ["r01-node-01"], dir)).get("r01-node-01"),
    ).toMatchObject({
      ok: false,
    });
  });

  it("ssh-keygen -l lists the example jump host's authorized_keys: one fingerprint per sshAuthorizedKeys entry", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-readers-"));
    const keys = (await exampleData("edge-sip/tenant-a/jumphost.yaml"))["authorized_keys"]!;
    const entries = keys.trimEnd().split("\n");
    expect(entries).toHaveLength(2);
    expect(await sshKeygenList(keys, dir)).toEqual({ ok: true, keys: entries.map(expectedKeyListing) });
    expect(expectedKeyListing(entries[0]!)).toEqual({
      fingerprint: "SHA256:wtfzHUjWZwS6iWxeTSr5Se6G1AA9e4m5ioaLrbeOXPA",
      comment: "ops@site-a",
    });
    const listing = await sshKeygenList(`${keys}${entries[0]!.replace(" ops@", " evil@")}\n`, dir);
    expect(listing.ok && listing.keys.map((key) => key.comment)).toEqual([
      "ops@site-a",
      "oncall@site-a",
      "evil@site-a",
    ]);
  });

  it("kubectl reads every YAML file of the example site's render as the YAML 1.2 reader does, and an unquoted yes as a boolean", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-readers-"));
    const rendered = path.join(REPO, "examples", "site", "rendered");
    const files = (await readdir(rendered, { recursive: true }))
      .filter((file) => file.endsWith(".yaml"))
      .sort();
    const texts = await Promise.all(
      files.map(async (file) => [file, await readFile(path.join(rendered, file), "utf8")] as const),
    );
    const reading = await kubectlObjects(texts, dir);
    const read = texts.flatMap(([, text]) =>
      parseAllDocuments(text)
        .map((document) => document.toJS() as unknown)
        .filter((value) => value !== null),
    );
    expect(reading.ok).toBe(true);
    // kubectl adds the empty labels of a label change to objects that had none; nothing else differs.
    expect(reading.ok && reading.objects.map(withoutEmptyLabels)).toEqual(read.map(withoutEmptyLabels));
    expect(read.length).toBeGreaterThan(40);
    const specs = texts.find(([file]) => file.endsWith("specs.yaml"))!;
    const unquoted = specs[1].replace("  labels:\n", "  labels:\n    on: yes\n");
    expect(await kubectlObjects([[specs[0], unquoted]], dir)).toEqual({
      ok: false,
      why: expect.stringMatching(/cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels/),
    });
  });

  it("dex reads the example tenant's auth.yaml as planned: issuer, client, connector, user; and a tampered one otherwise", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-readers-"));
    const file = "edge-sip/tenant-a/auth.yaml";
    const text = await readFile(path.join(EXAMPLE, file), "utf8");
    const ca = (
      await readFile(path.join(REPO, "examples", "site", "specs", "tenant-a", "sipcluster.yaml"), "utf8")
    )
      .match(/-----BEGIN CERTIFICATE-----[^]*?-----END CERTIFICATE-----/)![0]
      .replace(/\n\s+/g, "\n");
    const issuer = "https://10.41.0.5:30556";
    const planned = {
      issuer,
      clients: [{ id: "kubectl", redirectURIs: ["http://localhost:8000", "http://localhost:18000"] }],
      connector: { id: "github", clientId: "3f9c2e7a4b1d5e6f0a8b", redirectUri: `${issuer}/callback` },
      user: {
        email: "break-glass@site-a.example.com",
        name: "break-glass@site-a.example.com",
        groups: ["tenant-a-admins"],
      },
      certificateAuthority: `${ca}\n`,
      usernamePrefix: "oidc:",
      groupsPrefix: "oidc:",
      bindings: {
        "cluster-admin": ["oidc:edge-site-a:tenant-a-ops", "oidc:tenant-a-admins"],
        view: ["oidc:edge-site-a:tenant-a-dev"],
        edit: ["oidc:edge-site-a:tenant-a-dev"],
      },
    };
    expect(await judgeAuth(file, text, planned, dir)).toEqual([]);
    // Another issuer: Dex serves it, and its tokens name it.
    const moved = await judgeAuth(
      file,
      text.replace(`issuer: ${issuer}`, "issuer: https://10.41.0.6:30556"),
      planned,
      dir,
    );
    expect(moved).toContain(`${file}: Dex serves issuer "https://10.41.0.6:30556", planned "${issuer}"`);
    expect(moved).toContainEqual(expect.stringMatching(/token says \{"iss":"https:\/\/10\.41\.0\.6:30556"/));
    expect(
      await judgeAuth(file, text.replace("clientID: 3f9c2e7a4b1d5e6f0a8b", "clientID: evil"), planned, dir),
    ).toEqual([
      expect.stringMatching(/connector "github" sends a login to \{"host":"github.com","clientId":"evil"/),
    ]);
    expect(await judgeAuth(file, text.replace("type: memory", "type: sqlite9"), planned, dir)).toEqual([
      expect.stringMatching(/dex refuses config\.yaml: .*unknown storage type/),
    ]);
    expect(
      await judgeAuth(
        file,
        text.replace("- tenant-a-admins\n", "- tenant-a-admins\n          - evil\n"),
        planned,
        dir,
      ),
    ).toEqual([expect.stringMatching(/Dex's token says .*"groups":\["tenant-a-admins","evil"\]/)]);
    expect(
      await judgeAuth(file, text.replace("name: oidc:tenant-a-admins", "name: oidc:evil"), planned, dir),
    ).toEqual([expect.stringMatching(/the tenant's RBAC binds .*"oidc:evil"/)]);
  });

  it("judges the fuzz site's own baseline render content, and a tampered one not", async () => {
    const outcome = await synthSite(BASELINE);
    expect(outcome).toEqual({ accepted: true, dir: expect.any(String), files: expect.any(Map) });
    if (!outcome.accepted) return;
    expect(await judgeRendered(BASELINE, outcome.files, outcome.dir)).toEqual([]);
    const moved = {
      ...BASELINE,
      workers: [BASELINE.workers[0]!, { ...BASELINE.workers[1]!, ip: "10.41.0.99" }],
    };
    expect(await judgeRendered(moved, outcome.files, outcome.dir)).toEqual([
      `clusters/edge-sip/tenant-a/jumphost.yaml: ssh -G "wk-2" connects to "10.41.0.22", planned "10.41.0.99"`,
      expect.stringMatching(
        /^clusters\/edge-sip\/tenant-a\/jumphost\.yaml: the hosts table lists .*"10\.41\.0\.22".* planned .*"10\.41\.0\.99"/,
      ),
      expect.stringMatching(
        /^clusters\/edge-sip\/tenant-a\/loadbalancer-worker\.yaml: haproxy reads backends .*wk-2=10\.41\.0\.22:30100.* planned .*wk-2=10\.41\.0\.99:30100/,
      ),
    ]);
    const jumpHost = "clusters/edge-sip/tenant-a/jumphost.yaml";
    const renamed = new Map(outcome.files);
    renamed.set(
      jumpHost,
      outcome.files.get(jumpHost)!.replace("secretName: tenant-a-ssh-keys", 'secretName: "tenant a"'),
    );
    expect(await judgeRendered(BASELINE, renamed, outcome.dir)).toEqual([
      `${jumpHost}: Deployment/"jumphost-tenant-a": mounts "tenant a", which is not a DNS-1123 subdomain`,
    ]);
    const specs = "clusters/edge-sip/tenant-a/specs.yaml";
    const numbered = new Map(outcome.files);
    numbered.set(specs, outcome.files.get(specs)!.replace("team: edge-ops", "team: edge-ops\n    rack: yes"));
    expect(await judgeRendered(BASELINE, numbered, outcome.dir)).toEqual([
      expect.stringMatching(/^kubectl refuses the rendered YAML: .*specs\.yaml.*cannot unmarshal bool/),
    ]);
  });

  it("renders the words YAML 1.1 types as label and annotation keys and values that kubectl reads back", async () => {
    const labelWords = YAML_1_1_WORDS.filter((word) =>
      /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(word),
    );
    const values = {
      ...BASELINE,
      crLabels: Object.fromEntries(
        labelWords.map((word, index) => [word === "" ? `empty-${index}` : word, word]),
      ),
      crAnnotations: Object.fromEntries(
        YAML_1_1_WORDS.map((word, index) => [
          labelWords.includes(word) && word !== "" ? word : `w${index}`,
          word,
        ]),
      ),
    };
    const outcome = await synthSite(values);
    expect(outcome).toEqual({ accepted: true, dir: expect.any(String), files: expect.any(Map) });
    if (!outcome.accepted) return;
    expect(await judgeRendered(values, outcome.files, outcome.dir)).toEqual([]);
  });
});

describe.skipIf(!READERS)("the webhook's side of the property", () => {
  it("finds in the webhook's review each error validate reports in a spec file, and says when one is missing", async () => {
    const values = { ...BASELINE, kudPlugins: ["multus", "Bad Plugin"] };
    const site = await writeSite(values);
    const validated = await run("validate", "--site", site, "--format", "json");
    const errors = (JSON.parse(validated.out) as { severity: string; rule: string; file: string }[]).filter(
      (found) => found.severity === "error",
    );
    expect(errors.map((found) => `${found.rule} ${path.relative(site, path.resolve(found.file))}`)).toEqual([
      "plugin-name specs/bpa.yaml",
    ]);
    expect(await webhookProblems(site, errors)).toEqual([]);
    const unheard = { rule: "ssh-key", file: path.join(site, "specs", "bpa.yaml") };
    expect(await webhookProblems(site, [...errors, unheard])).toEqual([
      expect.stringMatching(
        /^validate reports ssh-key in specs\/bpa\.yaml, the webhook does not: .*plugin-name/,
      ),
    ]);
    expect(await webhookProblems(site, [])).toEqual([
      expect.stringMatching(/^validate accepts specs\/bpa\.yaml, the webhook denies it: \[plugin-name\]/),
    ]);
  });
});

/** What `validate` and `synth` made of a site. */
type SynthOutcome =
  | { readonly accepted: true; readonly dir: string; readonly files: ReadonlyMap<string, string> }
  | { readonly accepted: false; readonly problems: readonly string[] };

/** The site of `values`, written to `site/` of a fresh directory. */
async function writeSite(values: SiteValues): Promise<string> {
  const site = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-trust-")), "site");
  for (const [file, text] of siteFiles(values)) {
    await mkdir(path.dirname(path.join(site, file)), { recursive: true });
    await writeFile(path.join(site, file), text);
  }
  return site;
}

/**
 * Writes the site of `values` to a fresh directory and runs `validate` and `synth` on it in-process
 * (the CLI's own code, as `metalsynth validate|synth --site <dir> --format json`). Accepted: both
 * exit 0, the webhook admits the CRs, and the rendered tree is returned. Refused: both exit 1, with
 * findings that name a rule, a file and a line, the same errors from the webhook for the CRs, and
 * rendered/ unchanged; anything else is a problem.
 */
async function synthSite(values: SiteValues): Promise<SynthOutcome> {
  const site = await writeSite(values);
  const dir = path.dirname(site);
  // A site never rendered before: a refused synth must not create rendered/.
  const out = path.join(site, "rendered");
  const validated = await run("validate", "--site", site, "--format", "json");
  const synthesised = await run("synth", "--site", site, "--format", "json");
  const problems: string[] = [];
  for (const [command, result] of [
    ["validate", validated],
    ["synth", synthesised],
  ] as const) {
    if (result.code !== 0 && result.code !== 1)
      problems.push(`${command} exited ${result.code}: ${result.err.slice(0, 2000)}`);
  }
  if (validated.code !== synthesised.code)
    problems.push(`validate exited ${validated.code} but synth ${synthesised.code}`);
  if (problems.length > 0) return { accepted: false, problems };
  if (synthesised.code === 0) {
    const denied = await webhookProblems(site, []);
    if (denied.length > 0) return { accepted: false, problems: denied };
    return { accepted: true, dir, files: await readTree(out) };
  }

  const diagnostics = JSON.parse(validated.out) as {
    severity: string;
    rule?: string;
    file?: string;
    line?: number;
    path?: string;
  }[];
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === "error");
  if (errors.length === 0) problems.push("validate exited 1 without an error finding");
  for (const finding of errors) {
    if (!finding.rule || !finding.file || !(Number(finding.line) >= 1))
      problems.push(`a finding without rule, file or line: ${JSON.stringify(finding)}`);
  }
  problems.push(...(await webhookProblems(site, errors)));
  const left = await readdir(out, { recursive: true }).catch(() => undefined);
  if (left !== undefined) problems.push(`a refused synth wrote rendered/: ${left.join(", ")}`);
  return { accepted: false, problems };
}

/**
 * Rules that the webhook downgrades to warnings on purpose: the CR they refer to may be applied next
 * (decision 0011).
 */
const ADMISSION_WARNINGS = new Set(["cluster-ref"]);

/**
 * Findings about a spec file's text rather than its objects (a file holding U+FFFD is read as
 * binary): the webhook is sent an object, never the file, so it has none of them to report.
 */
const FILE_RULES = new Set(["yaml-syntax", "too-large", "file-unread", "no-objects"]);

/**
 * What the webhook's reviewer (the rules as the webhook runs them, against the site's inventory and
 * CRs) says that `validate` did not: for an accepted site, any error on one of its CRs; for a refused
 * one, each error `validate` reported in a spec file that the review of that file's CRs lacks.
 */
async function webhookProblems(
  site: string,
  validateErrors: readonly { rule?: string; file?: string }[],
): Promise<string[]> {
  const { inventory } = await readInventory([path.join(site, "inventory")], { relativeTo: site });
  const files = new Map<string, readonly SourceDocument[]>();
  for (const file of ["specs/sipcluster.yaml", "specs/bpa.yaml"]) {
    files.set(file, parseDocuments(file, await readFile(path.join(site, file), "utf8")).documents);
  }
  const read = readResources([...files.values()].flat());
  const reviewer = new SiteReviewer({
    inventory,
    resources: read.resources,
    invalid: read.invalid,
    lock: EMPTY_LOCK,
  });
  const problems: string[] = [];
  for (const [file, documents] of files) {
    const errors = documents
      .flatMap((document) => reviewer.review(document.value))
      .filter((found) => found.severity === "error");
    const wanted = validateErrors.filter(
      (found) =>
        found.file !== undefined &&
        path.relative(site, path.resolve(found.file)) === file &&
        !ADMISSION_WARNINGS.has(found.rule ?? "") &&
        !FILE_RULES.has(found.rule ?? ""),
    );
    if (validateErrors.length === 0 && errors.length > 0)
      problems.push(
        `validate accepts ${file}, the webhook denies it: ${errors.map((found) => `[${found.rule}] ${found.text}`).join("; ")}`,
      );
    for (const found of wanted) {
      if (!errors.some((error) => error.rule === found.rule))
        problems.push(
          `validate reports ${found.rule} in ${file}, the webhook does not: ${JSON.stringify(errors)}`,
        );
    }
  }
  return problems;
}

/**
 * Words a YAML 1.1 reader (go-yaml in kubectl, Flux, Argo CD) takes for a boolean, null, number,
 * date or merge key when they are written plain, and YAML 1.2 for strings (issue #35); most are
 * valid label values, and any is an annotation value. The last ones YAML 1.1 readers break lines at.
 */
const YAML_1_1_WORDS = [
  ...[
    "y",
    "Y",
    "yes",
    "Yes",
    "n",
    "N",
    "no",
    "NO",
    "on",
    "On",
    "off",
    "OFF",
    "true",
    "False",
    "null",
    "NULL",
    "",
  ],
  ...["1_000", "0b101", "017", "0o17", "0X1F", "09", "1e3", "1_000.5", "2001-12-14"],
  ...["~", "-1", ".inf", ".NaN", "190:20:30", "-0b1", "<<", "="],
  ...["a\u2028b", "a\u0085b", " \n", "multi\nline\n"],
];

/** Replaces item `index` of `items` with `change` applied to it. */
function replaceAt<T>(items: readonly T[], index: number, change: (item: T) => T): T[] {
  return items.map((item, at) => (at === index ? change(item) : item));
}

/**
 * Every input field that reaches a rendered file, as a way to put a value into a site (issue #21's
 * list). A value that two places must share to mean anything (a MAC in the inventory and the CR, a
 * network id in the Secret and the services, a label on the hosts and in the selector) goes into both,
 * so the value travels on instead of stopping at the first lookup; a few go into one place only.
 */
const FIELDS: Readonly<
  Record<
    string,
    {
      base: (values: SiteValues) => string;
      set: (values: SiteValues, value: string) => SiteValues;
      /** What the fuzz puts in, when not only {@link hostile} variants of the base. */
      values?: () => fc.Arbitrary<string>;
    }
  >
> = {
  "BareMetalHost name (ControlPlane)": {
    base: (values) => values.controlPlane[0]!.name,
    set: (values, name) => ({
      ...values,
      controlPlane: replaceAt(values.controlPlane, 0, (host) => ({ ...host, name })),
    }),
  },
  "BareMetalHost name (Worker)": {
    base: (values) => values.workers[1]!.name,
    set: (values, name) => ({
      ...values,
      workers: replaceAt(values.workers, 1, (host) => ({ ...host, name })),
    }),
  },
  "BareMetalHost name (BPA master)": {
    base: (values) => values.master.name,
    set: (values, name) => ({ ...values, master: { ...values.master, name } }),
  },
  "BareMetalHost namespace": {
    base: (values) => values.hostNamespace,
    set: (values, hostNamespace) => ({ ...values, hostNamespace }),
  },
  "NIC ip": {
    base: (values) => values.master.ip,
    set: (values, ip) => ({ ...values, master: { ...values.master, ip } }),
  },
  "NIC mac (inventory and CR)": {
    base: (values) => values.worker.mac,
    set: (values, mac) => ({ ...values, worker: { ...values.worker, mac }, workerMac: mac }),
  },
  "mac-address (CR only)": {
    base: (values) => values.masterMac,
    set: (values, masterMac) => ({ ...values, masterMac }),
  },
  "networkData ip_address (ControlPlane)": {
    base: (values) => values.controlPlane[1]!.ip,
    set: (values, ip) => ({
      ...values,
      controlPlane: replaceAt(values.controlPlane, 1, (host) => ({ ...host, ip })),
    }),
  },
  "networkData ip_address (Worker)": {
    base: (values) => values.workers[0]!.ip,
    set: (values, ip) => ({ ...values, workers: replaceAt(values.workers, 0, (host) => ({ ...host, ip })) }),
  },
  "networkData network id and nodeInterfaceId": {
    base: (values) => values.interfaceId,
    set: (values, interfaceId) => ({ ...values, interfaceId }),
  },
  "BMC address": {
    base: (values) => values.controlPlane[2]!.bmc,
    set: (values, bmc) => ({
      ...values,
      controlPlane: replaceAt(values.controlPlane, 2, (host) => ({ ...host, bmc })),
    }),
  },
  "host label value (and selector)": {
    base: (values) => values.workerFlavor,
    set: (values, workerFlavor) => ({ ...values, workerFlavor }),
  },
  "SIPCluster name": { base: (values) => values.sipName, set: (values, sipName) => ({ ...values, sipName }) },
  "SIPCluster namespace": {
    base: (values) => values.sipNamespace,
    set: (values, sipNamespace) => ({ ...values, sipNamespace }),
  },
  sshAuthorizedKeys: {
    base: (values) => values.sshAuthorizedKeys[0]!,
    set: (values, key) => ({
      ...values,
      sshAuthorizedKeys: replaceAt(values.sshAuthorizedKeys, 0, () => key),
    }),
  },
  nodeSSHPrivateKeys: {
    base: (values) => values.nodeSshPrivateKeys,
    set: (values, nodeSshPrivateKeys) => ({ ...values, nodeSshPrivateKeys }),
  },
  "load balancer image": {
    base: (values) => values.loadBalancerImage,
    set: (values, loadBalancerImage) => ({ ...values, loadBalancerImage }),
  },
  "jump host image": {
    base: (values) => values.jumpHostImage,
    set: (values, jumpHostImage) => ({ ...values, jumpHostImage }),
  },
  "node label (master)": {
    base: (values) => values.masterLabel,
    set: (values, masterLabel) => ({ ...values, masterLabel }),
  },
  "node label (worker)": {
    base: (values) => values.workerLabel,
    set: (values, workerLabel) => ({ ...values, workerLabel }),
  },
  "cluster label": { base: (values) => values.cluster, set: (values, cluster) => ({ ...values, cluster }) },
  "Provisioning namespace": {
    base: (values) => values.bpaNamespace,
    set: (values, bpaNamespace) => ({ ...values, bpaNamespace }),
  },
  KUDPlugins: {
    base: (values) => values.kudPlugins[1]!,
    set: (values, plugin) => ({ ...values, kudPlugins: replaceAt(values.kudPlugins, 1, () => plugin) }),
  },
  "package name": {
    base: (values) => values.masterPackages[0]!.name,
    set: (values, name) => ({
      ...values,
      masterPackages: replaceAt(values.masterPackages, 0, (item) => ({ ...item, name })),
    }),
  },
  "package version": {
    base: (values) => values.masterPackages[1]!.version!,
    set: (values, version) => ({
      ...values,
      masterPackages: replaceAt(values.masterPackages, 1, (item) => ({ ...item, version })),
    }),
  },
  "CR label value (specs.yaml)": {
    base: (values) => values.crLabels["team"] ?? "",
    set: (values, value) => ({ ...values, crLabels: { team: value } }),
    values: () => metadataValues("edge-ops"),
  },
  "CR label key (specs.yaml)": {
    base: (values) => Object.keys(values.crLabels)[0] ?? "",
    set: (values, key) => ({ ...values, crLabels: { [key]: "edge-ops" } }),
    values: () => metadataValues("team"),
  },
  "CR annotation value (specs.yaml)": {
    base: (values) => values.crAnnotations["metalsynth.io/note"] ?? "",
    set: (values, value) => ({ ...values, crAnnotations: { "metalsynth.io/note": value } }),
    values: () => metadataValues("racked in row 4"),
  },
  "CR annotation key (specs.yaml)": {
    base: (values) => Object.keys(values.crAnnotations)[0] ?? "",
    set: (values, key) => ({ ...values, crAnnotations: { [key]: "racked in row 4" } }),
    values: () => metadataValues("metalsynth.io/note"),
  },
  "setting sshKeySecret": {
    base: (values) => values.sshKeySecret,
    set: (values, sshKeySecret) => ({ ...values, sshKeySecret }),
  },
  "setting images.kudInstaller": {
    base: (values) => values.kudInstallerImage,
    set: (values, kudInstallerImage) => ({ ...values, kudInstallerImage }),
  },
  "setting images.haproxy": {
    base: (values) => values.haproxyImage,
    set: (values, haproxyImage) => ({ ...values, haproxyImage }),
  },
  ...authFields(),
};

/**
 * The auth service's fields (issue #39): each string that reaches Dex's config, the tenant API
 * server's AuthenticationConfiguration or the tenant's RBAC.
 */
function authFields(): Record<
  string,
  { base: (values: SiteValues) => string; set: (values: SiteValues, value: string) => SiteValues }
> {
  const field = <K extends keyof AuthValues>(
    key: K,
    read: (auth: AuthValues) => string,
    write: (auth: AuthValues, value: string) => AuthValues[K],
  ) => ({
    base: (values: SiteValues) => read(values.auth),
    set: (values: SiteValues, value: string): SiteValues => ({
      ...values,
      auth: { ...values.auth, [key]: write(values.auth, value) },
    }),
  });
  const text = <
    K extends { [P in keyof AuthValues]: AuthValues[P] extends string ? P : never }[keyof AuthValues],
  >(
    key: K,
  ) =>
    field(
      key,
      (auth) => auth[key] as string,
      (_, value) => value as AuthValues[K],
    );
  return {
    "auth image": text("image"),
    "auth clusterIP (the issuer's host)": text("address"),
    "auth certificateAuthority": text("certificateAuthority"),
    "auth caSecret": text("caSecret"),
    "auth client id": text("clientId"),
    "auth redirect URI": text("redirectUri"),
    "auth connector id": text("connectorId"),
    "auth connector name": text("connectorName"),
    "auth connector config value (clientID)": text("connectorClientId"),
    "auth connector secretKeyRefs name": field(
      "connectorSecret",
      (auth) => auth.connectorSecret.name,
      (auth, name) => ({ ...auth.connectorSecret, name }),
    ),
    "auth connector secretKeyRefs key": field(
      "connectorSecret",
      (auth) => auth.connectorSecret.key,
      (auth, key) => ({ ...auth.connectorSecret, key }),
    ),
    "auth static user email": text("userEmail"),
    "auth static user name": text("userName"),
    "auth group (user and binding)": text("group"),
    "auth ClusterRole": text("clusterRole"),
    "auth claim prefix": text("prefix"),
    "auth password hash key": field(
      "passwordSecret",
      (auth) => auth.passwordSecret.key,
      (auth, key) => ({ ...auth.passwordSecret, key }),
    ),
  };
}

/**
 * What an attacker or a slip of the keyboard adds to a value: line breaks that start a new directive,
 * section, host or key in each reader's syntax, quotes, comment and separator characters, shell
 * substitutions, whitespace and look-alike Unicode.
 */
const PAYLOADS = [
  "\n",
  "\r\n",
  "\r",
  "\n  server evil 192.0.2.66:6443",
  "\nHost *\n  ProxyCommand sh -c 'touch /tmp/pwned'",
  "\n[kube-master]\nevil",
  " ansible_connection=local",
  `\n${"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDHXQiN/ZLNvrabC0XxRI4mkS4Cd1FYaXDmKX5n9N+BH evil@site"}`,
  "#",
  " #",
  ";",
  '"',
  "'",
  "$(reboot)",
  "`id`",
  " ",
  "\t",
  "\u0000",
  "\u0085",
  "\u2028",
  "\u00a0",
  "\u202e",
  "é",
  "=",
  ":",
  ":80",
  "%eth0",
  "/24",
  "[",
  "]",
  "*",
  "..",
  "/",
  "\\",
  "{{ lookup('pipe', 'id') }}",
  ",",
];

/** Whole values, valid somewhere, near-valid, or just hostile. */
const VALUES = [
  "",
  "-",
  "localhost",
  "10.41.0.11",
  "010.41.0.11",
  "10.41.0.256",
  "10.41.0.11 backup",
  "::ffff:10.41.0.11",
  "fe80::1%eth0",
  "FD00::11",
  "0x0a.0.0.1",
  "2130706433",
  "a".repeat(64),
  "UPPER",
  "has.dot",
  "-leading",
  "trailing-",
  "__proto__",
  "*",
  "cp-2",
  "worker-1",
  "edge-a",
  "tenant-a",
  "cluster-east",
  "all",
  "ungrouped",
  "x".repeat(300),
];

/** A hostile variant of `base`: a payload added before, after or inside it, or a value of its own. */
function hostile(base: string): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom(...PAYLOADS), fc.constantFrom("after", "before", "inside"))
        .map(([payload, where]) => {
          if (where === "after") return `${base}${payload}`;
          if (where === "before") return `${payload}${base}`;
          const middle = Math.floor(base.length / 2);
          return `${base.slice(0, middle)}${payload}${base.slice(middle)}`;
        }),
    },
    { weight: 2, arbitrary: fc.constantFrom(...VALUES) },
    { weight: 1, arbitrary: fc.constant(base.padEnd(300, base.at(-1) ?? "a")) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 300, maxLength: 300 }) },
  );
}

/** A label or annotation entry's part: a YAML 1.1 word as often as a hostile variant of `base`. */
function metadataValues(base: string): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom(...YAML_1_1_WORDS), hostile(base));
}

/** A field of {@link FIELDS} and the value the fuzz puts into it. */
interface Mutation {
  readonly field: string;
  readonly value: string;
}

/** One to three fields, each with a hostile value; the rest of the site stays as {@link BASELINE}. */
const MUTATIONS = fc.uniqueArray(
  fc
    .constantFrom(...Object.keys(FIELDS))
    .chain((field) => valuesFor(field).map((value): Mutation => ({ field, value }))),
  { minLength: 1, maxLength: 3, selector: (mutation) => mutation.field },
);

/** What the fuzz puts into `field`. */
function valuesFor(field: string): fc.Arbitrary<string> {
  const { base, values } = FIELDS[field]!;
  return values?.() ?? hostile(base(BASELINE));
}

/** The property: `values` is refused cleanly, or every reader reads its render as planned. */
async function refusedOrReadAsPlanned(mutations: readonly Mutation[]): Promise<void> {
  const values = mutations.reduce((site, { field, value }) => FIELDS[field]!.set(site, value), BASELINE);
  const outcome = await synthSite(values);
  const problems = outcome.accepted
    ? await judgeRendered(values, outcome.files, outcome.dir)
    : outcome.problems;
  if (problems.length > 0) throw new Error(problems.join("\n"));
}

describe.skipIf(!READERS)("the trust boundary under fuzz", () => {
  // One property per field, so a field that lets a value through fails on its own, with its own
  // shrunk counterexample, instead of hiding behind the first field that failed.
  it.each(Object.keys(FIELDS))(
    "%s: refused with findings, or read by every reader as planned",
    async (field) => {
      const base = FIELDS[field]!.base(BASELINE);
      const values = valuesFor(field).map((value) => [{ field, value }]);
      // Always tried first, then RUNS random ones: a line break ends a line in every reader's syntax,
      // a space ends a token, and a field that lets either through must fail every run.
      const examples: [Mutation[]][] = [`${base}\n`, `${base}\nx`, `${base} x`].map((value) => [
        [{ field, value }],
      ]);
      await fc.assert(fc.asyncProperty(values, refusedOrReadAsPlanned), {
        numRuns: RUNS,
        seed: SEED,
        examples,
      });
    },
    300_000,
  );

  it("several fields at once: refused with findings, or read by every reader as planned", async () => {
    await fc.assert(fc.asyncProperty(MUTATIONS, refusedOrReadAsPlanned), { numRuns: 3 * RUNS, seed: SEED });
  }, 300_000);
});
