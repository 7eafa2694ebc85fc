/**
 * Serves the webhook app over HTTPS (docs/contract.md §5): TLS ≥ 1.2 with the certificate re-read when it
 * rotates, request deadlines below the API server's 5 s `timeoutSeconds`, and a graceful stop on
 * SIGTERM (readiness false, keep serving while the endpoint is withdrawn, finish in-flight requests,
 * close the feeds).
 */
import { once } from "node:events";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { createApp } from "./app.ts";
import type { AdmissionRecord } from "./admissions.ts";
import type { WatchOptions } from "./file-watch.ts";
import type { Logger } from "./log.ts";
import { WebhookMetrics } from "./metrics.ts";
import type { Reviews } from "./reviews.ts";
import type { Knowledge, WebhookState } from "./state.ts";
import { describeCertificate, readTls, reloadTlsOnChange, type TlsFiles } from "./tls.ts";

/**
 * A request must be received, reviewed and answered within this; the API server waits 5 s
 * (`timeoutSeconds: 5`), and an answer it no longer waits for is wasted work.
 */
export const REQUEST_TIMEOUT_MS = 4000;

/** Options of {@link startWebhook}. */
export interface WebhookServerOptions {
  /** Address to listen on (`0.0.0.0` in a pod). */
  readonly host: string;
  /** Port to listen on; 0 picks a free one (see {@link RunningWebhook.port}). */
  readonly port: number;
  readonly tls: TlsFiles;
  /** What requests are reviewed against; drained and closed on shutdown. */
  readonly state: Knowledge & Pick<WebhookState, "startDraining" | "close">;
  /**
   * Where request bodies are reviewed (the review workers, decision 0056); closed on shutdown.
   * @default in the server's thread, against `state`
   */
  readonly reviews?: Reviews;
  /** Where admissions are recorded for the other replicas (decision 0056). */
  readonly record?: AdmissionRecord;
  readonly log: Logger;
  /**
   * Milliseconds between readiness turning false and the listener closing: the time the endpoints
   * controller and the API server need to stop sending new requests here.
   * @default 3000
   */
  readonly drainDelayMs?: number;
  /**
   * Milliseconds after closing the listener that connections still open are cut.
   * @default 10000
   */
  readonly drainTimeoutMs?: number;
  /**
   * Shut down on SIGTERM and SIGINT.
   * @default false
   */
  readonly handleSignals?: boolean;
  /** How the certificate files are watched. */
  readonly tlsWatch?: WatchOptions;
}

/** A serving webhook. */
export interface RunningWebhook {
  /** The port it listens on. */
  readonly port: number;
  /** Drains and stops (see the module comment). Safe to call more than once. */
  shutdown(): Promise<void>;
  /** Settles when a shutdown, however started, has finished. */
  readonly stopped: Promise<void>;
}

/** Starts serving. Rejects when the certificate can't be read or the port can't be bound. */
export async function startWebhook(options: WebhookServerOptions): Promise<RunningWebhook> {
  const { state, log } = options;
  const metrics = new WebhookMetrics(() => state.inventoryStats());
  const app = createApp({
    knowledge: state,
    metrics,
    log,
    ...(options.reviews && { reviews: options.reviews }),
    ...(options.record && { record: options.record }),
  });
  const tls = await readTls(options.tls);
  const server = createServer(
    {
      ...tls,
      requestTimeout: REQUEST_TIMEOUT_MS,
      headersTimeout: REQUEST_TIMEOUT_MS,
      handshakeTimeout: REQUEST_TIMEOUT_MS,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: 250,
      // Longer than Go's 90 s idle-connection timeout, so the API server, not this server, closes an
      // idle connection: a server-side close can race a new request, which then fails with EOF.
      keepAliveTimeout: 95_000,
    },
    app,
  );
  let draining = false;
  // Before the app sees the request: each connection the API server reuses while draining is told
  // to go elsewhere after this answer.
  server.prependListener("request", (_request, response) => {
    if (draining) response.setHeader("connection", "close");
  });
  server.listen(options.port, options.host);
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const tlsWatch = reloadTlsOnChange(server, options.tls, log, options.tlsWatch);
  log.info("listening", { host: options.host, port, ...describeCertificate(tls.cert) });

  let stopping: Promise<void> | undefined;
  let finished: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (finished = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    log.info("signal received", { signal });
    void running.shutdown();
  };
  const running: RunningWebhook = {
    port,
    shutdown() {
      stopping ??= (async () => {
        draining = true;
        state.startDraining();
        const delayMs = options.drainDelayMs ?? 3000;
        log.info("draining", { delayMs });
        try {
          await sleep(delayMs);
          const closed = once(server, "close");
          server.close();
          server.closeIdleConnections();
          const cut = setTimeout(() => server.closeAllConnections(), options.drainTimeoutMs ?? 10_000);
          await closed;
          clearTimeout(cut);
          tlsWatch.close();
          await state.close();
          await options.reviews?.close();
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
