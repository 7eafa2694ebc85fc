/** What `metalsynth --help` and `metalsynth <command> --help` print. */

/** One command's help: the synopsis line, what it does, and its options. */
interface CommandHelp {
  readonly synopsis: string;
  readonly summary: string;
  readonly options: string;
}

const SITE = `  --site DIR        site directory (default .)`;
const PATHS = `  --specs GLOB…     spec files, directories or globs (default <site>/specs); every word up to
                    the next option, and repeatable
  --inventory PATH… inventory files or directories (default <site>/inventory); as --specs`;
const FORMAT = `  -o, --format FORMAT  text (default) or json`;
const STAGED = `  --staged          read the site (specs, inventory, metalsynth.yaml, rendered/) as the Git index
                    holds it, what a commit would hold, not the work tree; no other paths`;
const FINDINGS = `  -o, --format FORMAT  text (default), json, github (workflow-command annotations) or sarif
                    (SARIF 2.1.0 for code scanning); the findings go to stdout, the rest to stderr`;

const KUBE = `  --kubeconfig FILE    kubeconfig to use (default KUBECONFIG, else ~/.kube/config, else the pod's
                    service account); --context NAME: its context to use (default its current one)`;

/** Every command's help, by the name users type. */
export const COMMAND_HELP = {
  validate: {
    synopsis:
      "validate [--site DIR] [--staged] [--specs GLOB…] [--inventory PATH…]\n" +
      "         [-o text|json|github|sarif]",
    summary: "check the site's CRs against the rules and the inventory; exit 1 on errors",
    options: [SITE, STAGED, PATHS, FINDINGS].join("\n"),
  },
  synth: {
    synopsis:
      "synth [--site DIR] [--specs GLOB…] [--inventory PATH…] [--out DIR] [--full] [--verbose]\n" +
      "         [-o text|json|github|sarif]",
    summary: "validate, plan and write the rendered/ tree (atomically; untouched when the input has errors)",
    options: [
      SITE,
      PATHS,
      `  --out DIR         output directory (default <site>/rendered); - prints the rendered objects as
                    one YAML stream on stdout and writes nothing (for kubeconform, kube-linter)`,
      `  --full            render every cluster directory, not only those whose inputs or files changed`,
      `  --verbose         a line for each cluster rendered, also past 20 (then one line sums them up)`,
      FINDINGS,
    ].join("\n"),
  },
  diff: {
    synopsis:
      "diff [--site DIR] [--staged] [--out DIR] [--exit-code] [--patch] [--map FILE.html]\n" +
      "         [-o text|json|github|sarif|markdown]",
    summary: "what synth would change in rendered/, per cluster (hosts, objects); writes nothing",
    options: [
      SITE,
      STAGED,
      `  --out DIR         rendered tree to compare with (default <site>/rendered)`,
      `  --exit-code       exit 1 when rendered/ would change`,
      `  --patch           add a unified diff of every changed file`,
      `  --map FILE.html   also write the site map, marking hosts that change hands`,
      FINDINGS,
      `                    markdown: a pull-request summary (per cluster hosts and objects, counts)`,
    ].join("\n"),
  },
  explain: {
    synopsis: "explain <cluster> [--site DIR] [--all] [-o text|json|yaml]",
    summary: "show, per role, the chosen hosts and why every other host was rejected",
    options: [
      `  <cluster>         cluster name, or namespace/name`,
      SITE,
      PATHS,
      `  --out DIR         rendered tree whose lock is read (default <site>/rendered)`,
      `  --all             list every rejected host (text lists 20 per decision, then counts the rest)`,
      `  -o, --format FORMAT  text (default), json or yaml (every host, as data)`,
    ].join("\n"),
  },
  map: {
    synopsis: "map [--site DIR] [--out FILE.html] [--group-by LABEL] [--diff [LOCKFILE]]",
    summary: "draw the site as one HTML page: racks, hosts, clusters, free capacity, findings",
    options: [
      SITE,
      PATHS,
      `  --out FILE.html   where to write the page (default map.html; - for stdout)`,
      `  --group-by LABEL  label whose value groups hosts (default: the coarsest topologyKey the
                    site's SIPClusters use, else the namespace)`,
      `  --diff [LOCKFILE] mark hosts changing hands against LOCKFILE, or without one against
                    <site>/rendered/metalsynth.lock.yaml as HEAD has it`,
      ``,
      `The page is written even when the site has errors (it marks them); the exit code is then 1.`,
    ].join("\n"),
  },
  release: {
    synopsis: "release HOST… [--site DIR] [--out DIR]",
    summary:
      "let the nodes of hosts the snapshot lost (host-vanished) or that are unavailable leave them, and render",
    options: [
      `  HOST…             namespace/name (or a name only one host of the lock has) of each host`,
      SITE,
      PATHS,
      `  --out DIR         rendered tree whose lock is changed and written (default <site>/rendered)`,
      ``,
      `A node stays on its locked host until released: the lock's entries of these hosts are dropped (a`,
      `SIPCluster's host still in the inventory is released, its labels removed) and the site is`,
      `rendered as synth renders it. A healthy host is refused. Exit codes: 0, 1 refused or the site has`,
      `errors (nothing written), 2 usage error.`,
    ].join("\n"),
  },
  commit: {
    synopsis:
      "commit [--site DIR] [--message MSG] [--push] [--remote NAME] [--branch NAME] [--retries N]\n" +
      "         [--author-name NAME] [--author-email EMAIL]",
    summary: "synth, then commit rendered/ (only) with a per-cluster summary; --push retries on a race",
    options: [
      SITE,
      `  --message MSG     subject line (default: the clusters that changed)`,
      `  --author-name NAME, --author-email EMAIL
                    commit author (default git.authorName/authorEmail of metalsynth.yaml)`,
      `  --push            push to --remote (default origin), branch --branch (default the current one)`,
      `  --retries N       times to re-render and push again after a rejected push (default 3)`,
      ``,
      `exit codes: 0 committed (or nothing to commit), 1 the site has errors, 2 refused (detached HEAD,`,
      `hand edits in rendered/, uncommitted inputs with --push), 4 Git refused the commit or the push`,
    ].join("\n"),
  },
  inventory: {
    synopsis:
      "inventory pull [--site DIR] [-n NS…] [-l SEL] [--kubeconfig FILE] [--context NAME] [--check]\n" +
      "               [-o text|json]",
    summary: "write the cluster's BareMetalHosts into inventory/ as a reviewable snapshot; show what changed",
    options: [
      SITE,
      `  -n, --namespace NS…  namespaces to read (default inventory.namespaces of metalsynth.yaml, else
                    all); every word up to the next option, and repeatable`,
      `  -l, --selector SEL   label selector of the hosts (default inventory.selector of metalsynth.yaml)`,
      KUBE,
      `  --check           write nothing; exit 1 when the cluster differs from the snapshot in a fact
                    metalsynth reads`,
      FORMAT,
      ``,
      `Prints, per host, what`,
      `changed, and per cluster what synth would change with the new inventory. Files in inventory/`,
      `whose every inventory object the pull replaces are removed; it refuses (exit 2, nothing written)`,
      `when a file holds both pulled and other objects. Exit codes: 0, 1 with --check on drift, 2 refused`,
      `or the API server could not be read.`,
    ].join("\n"),
  },
  webhook: {
    synopsis:
      "webhook (--inventory PATH… | --from-cluster [--secrets-namespace NS]… [-l SEL] [--kubeconfig FILE]\n" +
      "          [--context NAME] [--namespace NS] [--allocation-namespace NS]… [--allocation-manager M]…)\n" +
      "          [--site DIR] --tls-cert F --tls-key F [--port 8443] [--host 0.0.0.0]\n" +
      "          [--review-workers 2] [--review-budget 1.5]",
    summary: "serve the validating admission webhook over HTTPS until SIGTERM; JSON logs on stdout",
    options: [
      `  --inventory PATH… inventory files or directories, re-read when they change`,
      `  --from-cluster    list and watch the inventory and CRs from the API server instead`,
      `  --secrets-namespace NS  read networkData Secrets in NS only (repeatable; default: every`,
      `                    namespace); RBAC then needs Secrets in those namespaces alone`,
      `  -l, --selector SEL   watch only the BareMetalHosts SEL selects (as inventory pull --selector)`,
      KUBE,
      `  (no namespace flag: the webhook watches hosts in every namespace, a CR may claim any of them)`,
      `  --site DIR        also read the site's specs and lock (re-read when they change)`,
      `  --namespace NS    the webhook's namespace: replicas record admissions in flight in its`,
      `                    ConfigMap metalsynth-webhook-admissions (decision 0056)`,
      `  --allocation-namespace NS  trust Allocations in NS only (repeatable; default: every namespace)`,
      `  --allocation-manager M  trust an Allocation whose spec only these field managers wrote`,
      `                    (repeatable; default kustomize-controller, argocd-controller, kubectl-client-side-apply)`,
      `  --tls-cert F      PEM certificate (chain); --tls-key F: its PEM private key`,
      `  --port N          port to listen on (default 8443); --host ADDR: address (default 0.0.0.0)`,
      `  --review-workers N  threads that review, each with a copy of what the webhook knows (default 2)`,
      `  --review-budget S  seconds a review may run before its request is refused (default 1.5)`,
    ].join("\n"),
  },
  status: {
    synopsis:
      "status [-n NS…] [-o text|json|yaml] [--secrets-namespace NS]… [-l SEL] [--kubeconfig FILE]\n" +
      "         [--context NAME] [--write [--port 8080] [--host 0.0.0.0]]",
    summary:
      "each CR's status (Ready, hosts, GitOps apply, Jobs) from the cluster; --write keeps .status current",
    options: [
      `  -n, --namespace NS…  namespaces whose CRs to show (or write); default all. The whole site is
                    judged all the same: the rules look across namespaces`,
      `  -o, --format FORMAT  text (default: a table, then what keeps each CR from Ready), json or
                    yaml (a v1 List of the CRs with their status, as kubectl get -o prints it)`,
      `  --secrets-namespace NS  read networkData Secrets in NS only (repeatable; as webhook)`,
      `  -l, --selector SEL   watch only the BareMetalHosts SEL selects (as webhook)`,
      KUBE,
      `  --write           run the status reporter until SIGTERM: write .status through the status
                    subresource (field manager metalsynth-status) when it changes, with an Event per
                    transition; JSON logs on stdout; what the chart's metalsynth-status Deployment runs`,
      `  --port N          with --write: port of /healthz, /readyz and /metrics over HTTP (default
                    8080); --host ADDR: address (default 0.0.0.0)`,
      ``,
      `Exit codes: 0 every CR shown is Ready, 1 one is not, 2 usage error or the API server could not`,
      `be read (within 60 s).`,
    ].join("\n"),
  },
  manifests: {
    synopsis:
      "manifests [--namespace NS] [--image IMG] [--inventory-namespace NS]… [--allocation-namespace NS]…\n" +
      "          [--hosts N] [--clusters N]",
    summary:
      "print the install YAML (CRDs, the webhook's RBAC, cert-manager, Deployment and configuration, the status reporter)",
    options: [
      `  --namespace NS    namespace of the webhook (default metalsynth-system)`,
      `  --image IMG       webhook image`,
      `  --inventory-namespace NS  a namespace of the inventory's networkData Secrets, the only`,
      `                    ones the webhook may read (repeatable; default metal3)`,
      `  --allocation-namespace NS  a namespace of the site's Allocations, the only ones the webhook`,
      `                    trusts (repeatable; default: every namespace)`,
      `  --hosts N, --clusters N  the site the webhook's memory is sized for (default 2000 and 200)`,
    ].join("\n"),
  },
  version: {
    synopsis: "version [-o text|json]",
    summary: "print metalsynth's version (json: with the Node.js version running it)",
    options: FORMAT,
  },
  completion: {
    synopsis: "completion bash|zsh|fish",
    summary: "print a shell completion script (e.g. source <(metalsynth completion bash))",
    options: [
      `  bash              for ~/.bashrc: source <(metalsynth completion bash)`,
      `  zsh               for ~/.zshrc: source <(metalsynth completion zsh)`,
      `  fish              metalsynth completion fish > ~/.config/fish/completions/metalsynth.fish`,
    ].join("\n"),
  },
} as const satisfies Record<string, CommandHelp>;

/** A command name. */
export type CommandName = keyof typeof COMMAND_HELP;

/** `metalsynth --help`: every command's synopsis and summary. */
export function globalUsage(): string {
  const commands = Object.values(COMMAND_HELP)
    .map((help: CommandHelp) => `  ${help.synopsis}\n      ${help.summary}`)
    .join("\n");
  return (
    `usage: metalsynth <command> [options]\n\ncommands:\n${commands}\n\n` +
    `'metalsynth <command> --help' shows a command's options; 'metalsynth --version' the version.\n` +
    `exit codes: 0 ok, 1 the input has errors, 2 usage error, 3 internal error, 4 commit: Git refused\n`
  );
}

/** `metalsynth <command> --help`. */
export function commandUsage(command: CommandName): string {
  const help: CommandHelp = COMMAND_HELP[command];
  return `usage: metalsynth ${help.synopsis}\n\n${help.summary}\n\noptions:\n${help.options}\n`;
}
