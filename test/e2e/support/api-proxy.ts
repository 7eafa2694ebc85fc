/**
 * A proxy between one client (the webhook) and a real kube-apiserver, for tests of what the client
 * does when its connection goes through trouble: it serves TLS with a test CA, forwards every
 * request as it came (the bearer token too) and streams the answers back, so lists and watches are
 * the API server's own. The test can partition it (nothing goes through, connections stay open),
 * cut every connection, and hold the answers to lists of a path until it releases them. It notes
 * what it forwarded, and whether a watch was answered 410 Gone.
 */
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { issueServerCertificate, type TestCa } from "../../webhook/tls-fixture.ts";
import type { ControlPlane } from "./control-plane.ts";

/** A running proxy. */
export interface ApiProxy {
  /** A kubeconfig like `kubeconfig` but through the proxy. */
  readonly kubeconfig: string;
  /** Nothing goes through until {@link heal}: requests and answers wait, connections stay open. */
  partition(): void;
  heal(): void;
  /** Destroys every connection of the client (an RST each), and every request upstream. */
  cut(): void;
  /** Lists (not watches) of paths containing `fragment` are answered only once {@link release}d. */
  holdLists(fragment: string): void;
  release(): void;
  /** `METHOD path?query` of every request forwarded, in order. */
  readonly requests: readonly string[];
  /** Paths of watches the API server answered 410 Gone (in a status or an ERROR event). */
  readonly gone: readonly string[];
  stop(): Promise<void>;
}

/** Starts a proxy to `plane` for the client of `kubeconfig` (a file written by the control plane). */
export async function startApiProxy(plane: ControlPlane, kubeconfig: string, ca: TestCa): Promise<ApiProxy> {
  const certificate = await issueServerCertificate(ca, "api-proxy", ["127.0.0.1"]);
  const upstream = new URL(plane.server);
  const upstreamCa = await readFile(certificateAuthorityOf(await readFile(kubeconfig, "utf8")));
  const sockets = new Set<Socket>();
  const upstreamRequests = new Set<ReturnType<typeof request>>();
  const requests: string[] = [];
  const gone: string[] = [];
  let partitioned = false;
  let waiting: (() => void)[] = [];
  let held: string | undefined;
  let holding: (() => void)[] = [];

  const whenHealed = (): Promise<void> =>
    partitioned ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve();

  const server: Server = createServer(
    { cert: await readFile(certificate.certFile), key: await readFile(certificate.keyFile) },
    (incoming, outgoing) => {
      void (async () => {
        const body: Buffer[] = [];
        for await (const chunk of incoming) body.push(chunk as Buffer);
        await whenHealed();
        const url = incoming.url ?? "/";
        requests.push(`${incoming.method ?? "GET"} ${url}`);
        const isWatch = /[?&]watch=(true|1)/.test(url);
        if (held !== undefined && !isWatch && incoming.method === "GET" && url.includes(held))
          await new Promise<void>((resolve) => holding.push(resolve));
        const forwarded = request(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: incoming.method,
            path: url,
            headers: { ...incoming.headers, host: upstream.host },
            ca: upstreamCa,
          },
          (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            // A watch with nothing to tell yet still answers at once, as the API server does.
            outgoing.flushHeaders();
            if (isWatch && answer.statusCode === 410) gone.push(url);
            answer.on("data", (chunk: Buffer) => {
              if (isWatch && /"code":410/.test(chunk.toString())) gone.push(url);
              void whenHealed().then(() => outgoing.write(chunk));
            });
            answer.on("end", () => void whenHealed().then(() => outgoing.end()));
            answer.on("error", () => outgoing.destroy());
          },
        );
        upstreamRequests.add(forwarded);
        forwarded.on("close", () => upstreamRequests.delete(forwarded));
        forwarded.on("error", () => outgoing.destroy());
        outgoing.on("close", () => forwarded.destroy());
        forwarded.end(Buffer.concat(body));
      })();
    },
  );
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  const through = path.join(path.dirname(kubeconfig), `${path.basename(kubeconfig)}-proxied`);
  const text = (await readFile(kubeconfig, "utf8"))
    .replace(/server: \S+/, `server: https://127.0.0.1:${port}`)
    .replace(/certificate-authority: \S+/, `certificate-authority: ${ca.certFile}`);
  await writeFile(through, text);

  const heal = (): void => {
    partitioned = false;
    for (const resolve of waiting.splice(0)) resolve();
    waiting = [];
  };
  const release = (): void => {
    held = undefined;
    for (const resolve of holding.splice(0)) resolve();
    holding = [];
  };
  const cut = (): void => {
    for (const forwarded of upstreamRequests) forwarded.destroy();
    for (const socket of sockets) socket.destroy();
  };
  return {
    kubeconfig: through,
    partition: () => void (partitioned = true),
    heal,
    cut,
    holdLists: (fragment) => void (held = fragment),
    release,
    requests,
    gone,
    async stop() {
      heal();
      release();
      cut();
      server.close();
      await once(server, "close");
    },
  };
}

/** The CA file a kubeconfig the control plane wrote names. */
function certificateAuthorityOf(kubeconfig: string): string {
  const file = /certificate-authority: (\S+)/.exec(kubeconfig)?.[1];
  if (file === undefined) throw new Error("the kubeconfig names no certificate-authority file");
  return file;
}
