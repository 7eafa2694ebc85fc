/**
 * Every command and its options, declared once (decision 0062): the parser, `--help`, the
 * completion scripts and the docs' option lists are all read from this table.
 */
import { optionsHelp, type CommandSpec, type OptionSpec, type ParsedArgs } from "./options.ts";

const SITE = {
  type: "string",
  value: "DIR",
  help: "site directory (default .)",
} as const satisfies OptionSpec;
const SPECS = {
  type: "string",
  list: true,
  value: "GLOB…",
  help: "spec files, directories or globs (default <site>/specs); every word up to\nthe next option, and repeatable",
} as const satisfies OptionSpec;
const INVENTORY = {
  type: "string",
  list: true,
  value: "PATH…",
  help: "inventory files or directories (default <site>/inventory); as --specs",
} as const satisfies OptionSpec;
const STAGED = {
  type: "boolean",
  help:
    "read the site (specs, inventory, metalsynth.yaml, rendered/) as the Git index\n" +
    "holds it, what a commit would hold, not the work tree; no other paths",
} as const satisfies OptionSpec;
const FORMAT = {
  type: "string",
  short: "o",
  value: "FORMAT",
  choices: ["text", "json"],
  help: "text (default) or json",
} as const satisfies OptionSpec;
const FINDINGS = {
  ...FORMAT,
  choices: ["text", "json", "github", "sarif"],
  help:
    "text (default), json, github (workflow-command annotations) or sarif\n" +
    "(SARIF 2.1.0 for code scanning); the findings go to stdout, the rest to stderr",
} as const satisfies OptionSpec;
/** Where a command's site is, every part defaulting from `--site`. */
const SITE_PATHS = { site: SITE, specs: SPECS, inventory: INVENTORY } as const;

/** `--out DIR`, saying what the directory is to the command. */
const outDir = <const Help extends string>(help: Help) => ({ type: "string", value: "DIR", help }) as const;

/** `--out` of the commands that only read the lock from a rendered tree. */
const LOCK_OUT = outDir("rendered tree whose lock is read (default <site>/rendered); must exist when given");

/** kubectl's `-n`, as a list (`-n a b`, `-n a -n b`); what the namespaces are for is the command's. */
const NAMESPACES = { type: "string", short: "n", list: true, value: "NS…" } as const;

/**
 * Which Allocations are the site's (decision 0056), taken by the webhook and the status reporter
 * alike and parsed for both by bin/allocation-trust.ts.
 */
const ALLOCATION_TRUST = {
  "allocation-namespace": {
    type: "string",
    multiple: true,
    value: "NS",
    help: "trust Allocations in NS only (repeatable; default: every namespace)",
  },
  "allocation-manager": {
    type: "string",
    multiple: true,
    value: "M",
    help:
      "trust an Allocation whose spec only these field managers wrote\n" +
      "(repeatable; default kustomize-controller, argocd-controller, kubectl-client-side-apply)",
  },
} as const satisfies Record<string, OptionSpec>;

/** kubectl's flags for where the API server is, taken by every command that talks to one. */
const KUBE = {
  kubeconfig: {
    type: "string",
    value: "FILE",
    help: "kubeconfig to use (default KUBECONFIG, else ~/.kube/config, else the pod's\nservice account)",
  },
  context: {
    type: "string",
    value: "NAME",
    help: "the kubeconfig's context to use (default its current one)",
  },
} as const satisfies Record<string, OptionSpec>;
const SELECTOR = {
  type: "string",
  short: "l",
  value: "SEL",
  help: "watch only the BareMetalHosts SEL selects (as inventory pull --selector)",
} as const satisfies OptionSpec;
const SECRETS_NAMESPACE = {
  type: "string",
  multiple: true,
  value: "NS",
  help:
    "read networkData Secrets in NS only (repeatable; default: every\n" +
    "namespace); RBAC then needs Secrets in those namespaces alone",
} as const satisfies OptionSpec;

/** Every command, by the name users type, in the order `metalsynth --help` lists them. */
export const COMMANDS = {
  validate: {
    synopsis:
      "validate [--site DIR] [--staged] [--specs GLOB…] [--inventory PATH…] [--out DIR]\n" +
      "         [-o text|json|github|sarif]",
    summary: "check the site's CRs against the rules and the inventory; exit 1 on errors",
    options: {
      ...SITE_PATHS,
      staged: STAGED,
      out: outDir("rendered tree whose lock is checked (default <site>/rendered); must exist\nwhen given"),
      format: FINDINGS,
    },
  },
  synth: {
    synopsis:
      "synth [--site DIR] [--specs GLOB…] [--inventory PATH…] [--out DIR] [--full] [--verbose]\n" +
      "         [-o text|json|github|sarif]",
    summary: "validate, plan and write the rendered/ tree (atomically; untouched when the input has errors)",
    options: {
      ...SITE_PATHS,
      out: outDir(
        "output directory (default <site>/rendered); - prints the rendered objects as\n" +
          "one YAML stream on stdout and writes nothing (for kubeconform, kube-linter)",
      ),
      full: {
        type: "boolean",
        help:
          "evaluate the site without the synth cache and render every cluster directory,\n" +
          "not only those whose inputs or files changed",
      },
      verbose: {
        type: "boolean",
        help: "a line for each cluster rendered, also past 20 (then one line sums them up)",
      },
      format: FINDINGS,
    },
    notes:
      "On a terminal, a line on stderr says what a run is doing and for how long, cleared before the\n" +
      "results; elsewhere, a run longer than 2 s ends with one line on stderr saying where the time went.",
  },
  diff: {
    synopsis:
      "diff [--site DIR] [--staged] [--specs GLOB…] [--inventory PATH…] [--out DIR] [--exit-code]\n" +
      "         [--patch] [--map FILE.html] [-o text|json|github|sarif|markdown]",
    summary: "what synth would change in rendered/, per cluster (hosts, objects); writes nothing",
    options: {
      ...SITE_PATHS,
      staged: STAGED,
      out: outDir("rendered tree to compare with (default <site>/rendered)"),
      "exit-code": { type: "boolean", help: "exit 1 when rendered/ would change" },
      patch: { type: "boolean", help: "add a unified diff of every changed file" },
      map: {
        type: "string",
        value: "FILE.html",
        help: "also write the site map, marking hosts that change hands",
      },
      format: {
        ...FINDINGS,
        choices: ["text", "json", "github", "sarif", "markdown"],
        help: `${FINDINGS.help}\nmarkdown: a pull-request summary (per cluster hosts and objects, counts)`,
      },
    },
  },
  explain: {
    synopsis:
      "explain <cluster> [--site DIR] [--specs GLOB…] [--inventory PATH…] [--out DIR] [--all]\n" +
      "         [-o text|json|yaml]",
    summary: "show, per role, the chosen hosts and why every other host was rejected",
    operands: [{ name: "<cluster>", help: "cluster name, or namespace/name" }],
    options: {
      ...SITE_PATHS,
      out: LOCK_OUT,
      all: {
        type: "boolean",
        help: "list every rejected host (text lists 20 per decision, then counts the rest)",
      },
      format: {
        ...FORMAT,
        choices: ["text", "json", "yaml"],
        help: "text (default), json or yaml (every host, as data)",
      },
    },
  },
  map: {
    synopsis:
      "map [--site DIR] [--specs GLOB…] [--inventory PATH…] [--out FILE.html] [--group-by LABEL]\n" +
      "         [--diff [LOCKFILE]]",
    summary: "draw the site as one HTML page: racks, hosts, clusters, free capacity, findings",
    options: {
      ...SITE_PATHS,
      out: {
        type: "string",
        value: "FILE.html",
        help: "where to write the page (default map.html; - for stdout)",
      },
      "group-by": {
        type: "string",
        value: "LABEL",
        help:
          "label whose value groups hosts (default: the coarsest topologyKey the\n" +
          "site's SIPClusters use, else the namespace)",
      },
      diff: {
        type: "string",
        optionalValue: true,
        value: "[LOCKFILE]",
        help:
          "mark hosts changing hands against LOCKFILE, or without one against\n" +
          "<site>/rendered/metalsynth.lock.yaml as HEAD has it",
      },
    },
    notes: "The page is written even when the site has errors (it marks them); the exit code is then 1.",
    writesOnly: "map writes HTML only",
  },
  release: {
    synopsis: "release HOST… [--site DIR] [--specs GLOB…] [--inventory PATH…] [--out DIR]",
    summary:
      "let the nodes of hosts the snapshot lost (host-vanished) or that are unavailable leave them, and render",
    operands: [
      { name: "HOST…", help: "namespace/name (or a name only one host of the lock has) of each host" },
    ],
    options: {
      ...SITE_PATHS,
      out: outDir("rendered tree whose lock is changed and written (default <site>/rendered)"),
    },
    notes:
      "A node stays on its locked host until released: the lock's entries of these hosts are dropped (a\n" +
      "SIPCluster's host still in the inventory is released, its labels removed) and the site is\n" +
      "rendered as synth renders it. A healthy host is refused. Exit codes: 0, 1 refused or the site has\n" +
      "errors (nothing written), 2 usage error.",
  },
  commit: {
    synopsis:
      "commit [--site DIR] [--message MSG] [--author-name NAME] [--author-email EMAIL]\n" +
      "         [--push [--remote NAME] [--branch NAME] [--retries N]]",
    summary: "synth, then commit rendered/ (only) with a per-cluster summary; --push retries on a race",
    options: {
      site: SITE,
      message: { type: "string", value: "MSG", help: "subject line (default: the clusters that changed)" },
      "author-name": {
        type: "string",
        value: "NAME",
        help: "commit author (default git.authorName of metalsynth.yaml)",
      },
      "author-email": {
        type: "string",
        value: "EMAIL",
        help: "its email (default git.authorEmail of metalsynth.yaml)",
      },
      push: { type: "boolean", help: "push to --remote, branch --branch" },
      remote: { type: "string", value: "NAME", help: "with --push: the remote (default origin)" },
      branch: { type: "string", value: "NAME", help: "with --push: the branch (default the current one)" },
      retries: {
        type: "string",
        value: "N",
        help: "with --push: times to re-render and push again after a rejected push (default 3)",
      },
    },
    notes:
      "exit codes: 0 committed (or nothing to commit), 1 the site has errors, 2 refused (detached HEAD,\n" +
      "hand edits in rendered/, uncommitted inputs with --push), 4 Git refused the commit or the push",
  },
  inventory: {
    synopsis:
      "inventory pull [--site DIR] [-n NS…] [-l SEL] [--kubeconfig FILE] [--context NAME] [--check]\n" +
      "               [-o text|json]",
    summary: "write the cluster's BareMetalHosts into inventory/ as a reviewable snapshot; show what changed",
    operands: [{ name: "pull", help: "the subcommand (the only one)" }],
    options: {
      site: SITE,
      namespace: {
        ...NAMESPACES,
        help:
          "namespaces to read (default inventory.namespaces of metalsynth.yaml, else\n" +
          "all); every word up to the next option, and repeatable",
      },
      selector: {
        type: "string",
        short: "l",
        value: "SEL",
        help: "label selector of the hosts (default inventory.selector of metalsynth.yaml)",
      },
      ...KUBE,
      check: {
        type: "boolean",
        help: "write nothing; exit 1 when the cluster differs from the snapshot in a fact\nmetalsynth reads",
      },
      format: FORMAT,
    },
    notes:
      "Prints, per host, what changed, and per cluster what synth would change with the new inventory.\n" +
      "Files in inventory/ whose every inventory object the pull replaces are removed; it refuses (exit\n" +
      "2, nothing written) when a file holds both pulled and other objects. Exit codes: 0, 1 with --check\n" +
      "on drift, 2 refused or the API server could not be read.",
  },
  webhook: {
    synopsis:
      "webhook (--inventory PATH… | --from-cluster [--secrets-namespace NS]… [-l SEL] [--kubeconfig FILE]\n" +
      "          [--context NAME] [--namespace NS] [--allocation-namespace NS]… [--allocation-manager M]…)\n" +
      "          [--site DIR] --tls-cert F --tls-key F [--port 8443] [--host 0.0.0.0]\n" +
      "          [--review-workers 2] [--review-budget 1.5]",
    summary: "serve the validating admission webhook over HTTPS until SIGTERM; JSON logs on stdout",
    options: {
      inventory: { ...INVENTORY, help: "inventory files or directories, re-read when they change" },
      "from-cluster": {
        type: "boolean",
        help: "list and watch the inventory and CRs from the API server instead",
      },
      "secrets-namespace": SECRETS_NAMESPACE,
      selector: SELECTOR,
      ...KUBE,
      site: { ...SITE, help: "also read the site's specs and lock (re-read when they change)" },
      namespace: {
        type: "string",
        value: "NS",
        help:
          "the webhook's namespace: replicas record admissions in flight in its\n" +
          "ConfigMap metalsynth-webhook-admissions (decision 0056)",
      },
      ...ALLOCATION_TRUST,
      "tls-cert": { type: "string", value: "F", help: "PEM certificate (chain)" },
      "tls-key": { type: "string", value: "F", help: "its PEM private key" },
      port: { type: "string", value: "N", help: "port to listen on (default 8443)" },
      host: { type: "string", value: "ADDR", help: "address to listen on (default 0.0.0.0)" },
      "review-workers": {
        type: "string",
        value: "N",
        help: "threads that review, each with a copy of what the webhook knows (default 2)",
      },
      "review-budget": {
        type: "string",
        value: "S",
        help: "seconds a review may run before its request is refused (default 1.5)",
      },
    },
    notes:
      "With --from-cluster and no namespace flag, the webhook watches hosts in every namespace: a CR may\n" +
      "claim any of them.",
  },
  status: {
    synopsis:
      "status [-n NS…] [-o text|json|yaml] [--secrets-namespace NS]… [-l SEL] [--kubeconfig FILE]\n" +
      "         [--context NAME] [--allocation-namespace NS]… [--allocation-manager M]…\n" +
      "         [--write [--port 8080] [--host 0.0.0.0]]",
    summary:
      "each CR's status (Ready, hosts, GitOps apply, Jobs) from the cluster; --write keeps .status current",
    options: {
      namespace: {
        ...NAMESPACES,
        help:
          "namespaces whose CRs to show (or write); default all. The whole site is\n" +
          "judged all the same: the rules look across namespaces",
      },
      format: {
        ...FORMAT,
        choices: ["text", "json", "yaml"],
        help:
          "text (default: a table, then what keeps each CR from Ready), json or\n" +
          "yaml (a v1 List of the CRs with their status, as kubectl get -o prints it)",
      },
      "secrets-namespace": {
        ...SECRETS_NAMESPACE,
        help: "read networkData Secrets in NS only (repeatable; as webhook)",
      },
      selector: { ...SELECTOR, help: "watch only the BareMetalHosts SEL selects (as webhook)" },
      ...KUBE,
      ...ALLOCATION_TRUST,
      write: {
        type: "boolean",
        help:
          "run the status reporter until SIGTERM: write .status through the status\n" +
          "subresource (field manager metalsynth-status) when it changes, with an Event per\n" +
          "transition; JSON logs on stdout; what the chart's metalsynth-status Deployment runs",
      },
      port: {
        type: "string",
        value: "N",
        help: "with --write: port of /healthz, /readyz and /metrics over HTTP (default\n8080)",
      },
      host: { type: "string", value: "ADDR", help: "with --write: address to listen on (default 0.0.0.0)" },
    },
    notes:
      "Exit codes: 0 every CR shown is Ready, 1 one is not, 2 usage error or the API server could not\n" +
      "be read (within 60 s).",
  },
  manifests: {
    synopsis:
      "manifests [--namespace NS] [--image IMG] [--inventory-namespace NS]… [--allocation-namespace NS]…\n" +
      "          [--hosts N] [--clusters N]",
    summary:
      "print the install YAML (CRDs, the webhook's RBAC, cert-manager, Deployment and configuration, the status reporter)",
    options: {
      namespace: {
        type: "string",
        value: "NS",
        help: "namespace of the webhook (default metalsynth-system)",
      },
      image: { type: "string", value: "IMG", help: "webhook image" },
      "inventory-namespace": {
        type: "string",
        multiple: true,
        value: "NS",
        help: "a namespace of the inventory's networkData Secrets, the only\nones the webhook may read (repeatable; default metal3)",
      },
      "allocation-namespace": {
        type: "string",
        multiple: true,
        value: "NS",
        help: "a namespace of the site's Allocations, the only ones the webhook\ntrusts (repeatable; default: every namespace)",
      },
      hosts: { type: "string", value: "N", help: "hosts the webhook's memory is sized for (default 2000)" },
      clusters: {
        type: "string",
        value: "N",
        help: "clusters the webhook's memory is sized for (default 200)",
      },
    },
  },
  version: {
    synopsis: "version [-o text|json]",
    summary: "print metalsynth's version (json: with the Node.js version running it)",
    options: { format: FORMAT },
  },
  completion: {
    synopsis: "completion bash|zsh|fish",
    summary: "print a shell completion script (e.g. source <(metalsynth completion bash))",
    operands: [
      { name: "bash", help: "for ~/.bashrc: source <(metalsynth completion bash)" },
      { name: "zsh", help: "for ~/.zshrc: source <(metalsynth completion zsh)" },
      { name: "fish", help: "metalsynth completion fish > ~/.config/fish/completions/metalsynth.fish" },
    ],
    options: {},
  },
} as const satisfies Record<string, CommandSpec>;

/** A command name. */
export type CommandName = keyof typeof COMMANDS;

/** A command's arguments, parsed as its declarations type them. */
export type CommandArgs<C extends CommandName> = ParsedArgs<(typeof COMMANDS)[C]["options"]>;

/**
 * The completion scripts' own question (`metalsynth __clusters [--site DIR]`), hidden from the help
 * and the completion scripts.
 */
export const CLUSTERS_COMMAND = { options: { site: SITE } } as const;

/** `metalsynth --help`: every command's synopsis and summary. */
export function globalUsage(): string {
  const commands = Object.values(COMMANDS)
    .map((help: CommandSpec) => `  ${help.synopsis}\n      ${help.summary}`)
    .join("\n");
  return (
    `usage: metalsynth <command> [options]\n\ncommands:\n${commands}\n\n` +
    `'metalsynth <command> --help' shows a command's options; 'metalsynth --version' the version.\n` +
    `exit codes: 0 ok, 1 the input has errors, 2 usage error, 3 internal error, 4 commit: Git refused\n`
  );
}

/** `metalsynth <command> --help`. */
export function commandUsage(command: CommandName): string {
  const spec: CommandSpec = COMMANDS[command];
  const notes = spec.notes === undefined ? "" : `\n${spec.notes}\n`;
  return `usage: metalsynth ${spec.synopsis}\n\n${spec.summary}\n\noptions:\n${optionsHelp(spec)}\n${notes}`;
}
