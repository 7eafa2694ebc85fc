/**
 * What a Service does in front of a Deployment's pods, for the e2e suite: a TCP proxy on 127.0.0.1
 * that hands each new connection to the next backend in turn (kube-proxy's round robin, without its
 * randomness). TLS passes through, so the API server verifies the webhooks themselves.
 */
import { once } from "node:events";
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/** A running balancer. */
export interface Balancer {
  readonly port: number;
  /** How many connections each backend was handed, by its port. */
  readonly handed: ReadonlyMap<number, number>;
  stop(): Promise<void>;
}

/** Balances connections over `backends` (ports on 127.0.0.1). */
export async function startBalancer(backends: readonly number[]): Promise<Balancer> {
  let next = 0;
  const handed = new Map<number, number>(backends.map((port) => [port, 0]));
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const port = backends[next++ % backends.length] ?? 0;
    handed.set(port, (handed.get(port) ?? 0) + 1);
    const backend = createConnection({ host: "127.0.0.1", port });
    for (const socket of [client, backend]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        backend.destroy();
      });
    }
    client.pipe(backend).pipe(client);
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
