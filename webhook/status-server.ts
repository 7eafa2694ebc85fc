/**
 * The status reporter's process (`metalsynth status --write`, decision 0059): plain HTTP for the
 * kubelet's probes and Prometheus — `GET /healthz` (the process is up), `/readyz` (every collection
 * listed and current, a round made), `/metrics` — and a stop on SIGTERM that lets the writes in
 * flight finish. It serves no request that changes anything, so it needs no TLS of its own; the
 * chart's NetworkPolicy admits only the metrics namespaces.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "./log.ts";
import type { Readiness } from "./state.ts";
import type { StatusMetrics } from "./status-metrics.ts";

/** What the server reports on. */
export interface StatusServed {
  readiness(): Readiness;
  readonly metrics: StatusMetrics;
}

/** Options of {@link startStatusServer}. */
export interface StatusServerOptions {
  readonly host: string;
  /** 0 picks a free port (see {@link RunningStatusServer.port}). */
  readonly port: number;
  /** The reporter, once started (the server listens before, so `/healthz` answers while it lists). */
  readonly served: () => StatusServed | undefined;
  readonly log: Logger;
  /** Called on shutdown, before the server closes: stops the reporter. */
  readonly close: () => Promise<void>;
  /**
   * Shut down on SIGTERM and SIGINT.
   * @default false
   */
  readonly handleSignals?: boolean;
}

/** A serving status server. */
export interface RunningStatusServer {
  readonly port: number;
  /** Stops the reporter, then the server. Safe to call more than once. */
  shutdown(): Promise<void>;
  /** Settles when a shutdown, however started, has finished. */
  readonly stopped: Promise<void>;
}

/** Starts serving; rejects when the port can't be bound. */
export async function startStatusServer(options: StatusServerOptions): Promise<RunningStatusServer> {
  const { log } = options;
  const server = createServer((request, response) => {
    const served = options.served();
    const send = (code: number, body: string, type = "text/plain; charset=utf-8") => {
      response.writeHead(code, { "content-type": type });
      response.end(body);
    };
    if (request.method !== "GET") return send(405, "method not allowed\n");
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/healthz") return send(200, "ok\n");
    if (path === "/readyz") {
      const readiness = served?.readiness() ?? { ready: false, detail: "status: starting" };
      return send(readiness.ready ? 200 : 503, `${readiness.detail}\n`);
    }
    if (path === "/metrics") {
      if (served === undefined) return send(503, "starting\n");
      void served.metrics.registry
        .metrics()
        .then((text) => send(200, text, served.metrics.registry.contentType))
        .catch((error: unknown) => send(500, `${String(error)}\n`));
      return;
    }
    send(404, "not found\n");
  });
  server.listen(options.port, options.host);
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  log.info("listening", { host: options.host, port });

  let stopping: Promise<void> | undefined;
  let finished: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (finished = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    log.info("signal received", { signal });
    void running.shutdown();
  };
  const running: RunningStatusServer = {
    port,
    shutdown() {
      stopping ??= (async () => {
        try {
          await options.close();
          const closed = once(server, "close");
          server.close();
          server.closeAllConnections();
          await closed;
          log.info("stopped");
        } finally {
          process.off("SIGTERM", onSignal);
          process.off("SIGINT", onSignal);
          finished();
        }
      })();
      return stopping;
    },
    stopped,
  };
  if (options.handleSignals) {
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }
  return running;
}
