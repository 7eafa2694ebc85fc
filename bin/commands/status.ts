import { UsageError } from "../../gitops/errors.ts";
import { statusDocument, statusText } from "../../gitops/report/status-format.ts";
import { parseDnsLabel } from "../../synth/checked.ts";
import type { Logger } from "../../webhook/log.ts";
import type { StatusReporter } from "../../webhook/status-reporter.ts";
import { jsonLogger } from "../../webhook/log.ts";
import { allocationTrust } from "../allocation-trust.ts";
import { EXIT, type Command, type Console } from "../common.ts";
import { loadKubeConfig } from "../kube-config.ts";

/** How long `metalsynth status` waits for the API server's lists before it gives up. */
const FIRST_ROUND_MS = 60_000;

/**
 * `metalsynth status` (docs/contract.md §5, §7, decision 0059): every Provisioning, Software, Cluster
 * and SIPCluster with the status the reporter computes, from a kubeconfig; exit 1 when any shown is
 * not Ready. `--write` runs the reporter itself until SIGTERM (what the chart's Deployment runs):
 * statuses and Events written, JSON logs on stdout, probes and metrics over HTTP.
 */
export const status: Command<"status"> = async ({ values }, io) => {
  const write = values.write === true;
  const formatValue = values.format;
  const format = formatValue ?? "text";
  if (write && formatValue !== undefined)
    throw new UsageError("--format goes without --write (which logs JSON lines)");
  if (!write && (values.port !== undefined || values.host !== undefined))
    throw new UsageError("--port and --host go with --write");
  if (values.selector === "") throw new UsageError("--selector must not be empty");
  for (const flag of ["namespace", "secrets-namespace"] as const)
    for (const namespace of values[flag] ?? [])
      if (parseDnsLabel(namespace) === undefined)
        throw new UsageError(`--${flag} must be a namespace name, not "${namespace}"`);
  const trust = allocationTrust(values);
  const port = portNumber(values.port ?? "8080");
  const host = values.host ?? "0.0.0.0";

  // The Kubernetes client takes about half a second to load; only commands that talk to a cluster use it.
  const [{ KubeConfig }, reporters, { ApiStatusSink }] = await Promise.all([
    import("@kubernetes/client-node"),
    import("../../webhook/status-reporter.ts"),
    import("../../webhook/status-api.ts"),
  ]);
  const kubeConfig = new KubeConfig();
  loadKubeConfig(kubeConfig, values);
  const scope = {
    kubeConfig,
    allocationTrust: trust,
    ...(values.namespace === undefined ? {} : { namespaces: values.namespace }),
    ...(values["secrets-namespace"] === undefined ? {} : { secretNamespaces: values["secrets-namespace"] }),
    ...(values.selector === undefined ? {} : { hostSelector: values.selector }),
  };

  if (write) {
    const { startStatusServer } = await import("../../webhook/status-server.ts");
    const log = jsonLogger((line) => io.out(`${line}\n`));
    let reporter: StatusReporter | undefined;
    let closed = false;
    // Listen first: /healthz answers while the first lists run, and /readyz says why not yet.
    const server = await startStatusServer({
      host,
      port,
      served: () => reporter,
      log,
      close: async () => {
        closed = true;
        await reporter?.close();
      },
      handleSignals: true,
    }).catch(async (error: unknown) => {
      // The webhook's words for a port that can't be bound, loaded only when needed.
      const { listenProblem } = await import("./webhook.ts");
      throw listenProblem(error, host, port) ?? error;
    });
    const started = await reporters.StatusReporter.start({
      ...scope,
      log,
      sink: new ApiStatusSink(kubeConfig),
      // The pod's name, as client-go's recorders name the instance that reports.
      instance: process.env.HOSTNAME ?? "metalsynth-status",
    });
    // A SIGTERM during the first lists: the server closed before the reporter existed.
    if (closed) await started.close();
    else reporter = started;
    await server.stopped;
    return EXIT.ok;
  }

  // One round, as soon as every collection is listed.
  const reporter = await reporters.StatusReporter.start({
    ...scope,
    log: stderrLogger(io),
    roundDelayMs: 50,
  });
  try {
    const first = reporter.nextRound();
    const timedOut = new Promise<"timeout">((resolve) =>
      setTimeout(() => resolve("timeout"), FIRST_ROUND_MS).unref(),
    );
    if ((await Promise.race([first, timedOut])) === "timeout") {
      io.err(
        `metalsynth status: the API server could not be read in ${FIRST_ROUND_MS / 1000} s: ${reporter.readiness().detail}\n`,
      );
      return EXIT.usage;
    }
    const rows = reporter
      .statuses()
      .map(({ cr, outcome }) => ({ cr, status: outcome.status, cluster: outcome.cluster }));
    io.out(format === "text" ? statusText(rows) : statusDocument(rows, format));
    return reporter.statuses().every(({ outcome }) => outcome.ready) ? EXIT.ok : EXIT.invalid;
  } finally {
    await reporter.close();
  }
};

/** Warnings and errors as one line each on stderr; the reporter's progress is not news here. */
function stderrLogger(io: Console): Logger {
  const line = jsonLogger((text) => io.err(`${text}\n`));
  return { info: () => {}, warn: line.warn, error: line.error };
}

function portNumber(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UsageError(`--port must be a port number, not "${text}"`);
  return port;
}
