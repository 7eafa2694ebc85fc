/**
 * What a Service does in front of a Deployment's pods, for the e2e suite, at its least forgiving: an
 * HTTPS proxy on 127.0.0.1 that hands each request to the next backend in turn, as an L7 balancer
 * (a mesh sidecar, an ingress) does. kube-proxy balances connections, and the API server keeps its
 * connection to a webhook alive, so with a TCP balancer two requests in a row mostly reach the same
 * replica and a test of replicas would tell little; here the n-th request always reaches backend
 * n mod 2. It serves the webhooks' own certificate and verifies theirs with the same CA, so the API
 * server checks the chain it checks in a cluster.
 */
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";

/** A running balancer. */
export interface Balancer {
  readonly port: number;
  /** The backend port each request was handed to, in the order the requests came. */
  readonly handed: readonly number[];
  stop(): Promise<void>;
}

/** The certificate the balancer serves, and the CA it trusts the backends by. */
export interface BalancerTls {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

/** Balances requests over `backends` (HTTPS ports on 127.0.0.1). */
export async function startBalancer(backends: readonly number[], tls: BalancerTls): Promise<Balancer> {
  const [cert, key, ca] = await Promise.all(
    [tls.certFile, tls.keyFile, tls.caFile].map((file) => readFile(file)),
  );
  const handed: number[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert, key }, (incoming, outgoing) => {
    const port = backends[handed.length % backends.length] ?? 0;
    handed.push(port);
    const upstream = request(
      { host: "127.0.0.1", port, method: incoming.method, path: incoming.url, headers: incoming.headers, ca },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502);
      outgoing.end(String(error));
    });
    incoming.pipe(upstream);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    handed,
    async stop() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}
