/**
 * An HTTPS client that checks the webhook's certificate as the API server does: against the test CA,
 * for the Service DNS name, while connecting to 127.0.0.1.
 */
import type { IncomingMessage } from "node:http";
import { request, type Agent } from "node:https";
import type { PeerCertificate, TLSSocket } from "node:tls";
import { SERVICE_NAME } from "./tls-fixture.ts";

/** Where the server is and whom to trust. */
export interface Target {
  readonly port: number;
  /** PEM of the CA that must have signed the server's certificate. */
  readonly ca: string;
  /** Reuse connections (as the API server does) when given. */
  readonly agent?: Agent;
}

/** A response: status, headers, body text and, on a fresh connection, the server's certificate. */
export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly certificate: PeerCertificate | undefined;
}

/** Sends one request. `body` objects are sent as JSON; strings and buffers as they are. */
export function send(
  target: Target,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const payload =
    body === undefined
      ? undefined
      : typeof body === "string" || Buffer.isBuffer(body)
        ? body
        : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: "127.0.0.1",
        port: target.port,
        method,
        path,
        ca: target.ca,
        servername: SERVICE_NAME,
        rejectUnauthorized: true,
        ...(target.agent ? { agent: target.agent } : { agent: false }),
        headers: {
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
      },
      // Only a fresh connection's certificate is worth inspecting (and it costs: the fuzz skips it).
      (response) => readReply(response, !target.agent).then(resolve, reject),
    );
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

/** Reads a whole response; `withCertificate` also takes the certificate the server presented. */
export function readReply(response: IncomingMessage, withCertificate = false): Promise<Reply> {
  const certificate = withCertificate ? (response.socket as TLSSocket).getPeerCertificate() : undefined;
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    response.on("data", (chunk: Buffer) => chunks.push(chunk));
    response.on("end", () =>
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        text: Buffer.concat(chunks).toString("utf8"),
        certificate,
      }),
    );
    response.on("error", reject);
  });
}

/** POSTs `body` to `path` and parses the JSON answer. */
export async function postJson(
  target: Target,
  path: string,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const reply = await send(target, "POST", path, body);
  return { status: reply.status, json: JSON.parse(reply.text) };
}
