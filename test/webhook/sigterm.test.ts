/**
 * `metalsynth webhook` as a process: SIGTERM while requests are in flight. The process must report
 * not ready, finish those requests with real answers, stop accepting connections and exit 0. It runs
 * the build in dist/, which the slow tier's globalSetup compiles from the sources first.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { request } from "node:https";
import path from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { REPO } from "../harness.ts";
import { readReply, send, type Reply, type Target } from "./client.ts";
import { copyExampleSite } from "../support/example-site.ts";
import { eventually } from "./harness.ts";
import { admissionReview } from "../builders/reviews.ts";
import { GOOD_AND_BAD, expectGoodAndBadAnswers } from "./example-reviews.ts";
import { SERVICE_NAME, createTestCa, issueServerCertificate } from "./tls-fixture.ts";

/** A POST whose headers and first half of the body are sent; `finish` sends the rest. */
async function startSlowPost(target: Target, body: string): Promise<{ finish(): Promise<Reply> }> {
  const bytes = Buffer.from(body);
  const outgoing = request({
    host: "127.0.0.1",
    port: target.port,
    method: "POST",
    path: "/validate/provisioning",
    ca: target.ca,
    servername: SERVICE_NAME,
    agent: false,
    headers: { "content-type": "application/json", "content-length": String(bytes.length) },
  });
  const reply = new Promise<Reply>((resolve, reject) => {
    outgoing.on("response", (response) => readReply(response).then(resolve, reject));
    outgoing.on("error", reject);
  });
  const half = Math.floor(bytes.length / 2);
  await new Promise<void>((resolve, reject) =>
    outgoing.write(bytes.subarray(0, half), (error) => (error ? reject(error) : resolve())),
  );
  return {
    finish: () => {
      outgoing.end(bytes.subarray(half));
      return reply;
    },
  };
}

describe("metalsynth webhook on SIGTERM", () => {
  it("turns not ready, answers the requests in flight, then exits 0", async () => {
    const site = await copyExampleSite();
    const ca = await createTestCa();
    const certificate = await issueServerCertificate(ca, "server");
    const child = spawn(
      process.execPath,
      [
        path.join(REPO, "bin", "metalsynth.js"),
        "webhook",
        "--inventory",
        path.join(site, "inventory"),
        "--site",
        site,
        "--tls-cert",
        certificate.certFile,
        "--tls-key",
        certificate.keyFile,
        "--port",
        "0",
        "--host",
        "127.0.0.1",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = once(child, "exit");
    const logs: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => logs.push(JSON.parse(line)));
    try {
      // Starting a process is slow on a busy machine: allow for it.
      const port = await eventually(
        () => logs.find((line) => line.msg === "listening")?.port as number,
        "listening",
        30_000,
      );
      const target: Target = { port, ca: ca.cert };
      await eventually(
        async () => ((await send(target, "GET", "/readyz")).status === 200 ? true : undefined),
        "ready",
        30_000,
      );

      const inFlight = await Promise.all(
        GOOD_AND_BAD.map((cr) => startSlowPost(target, JSON.stringify(admissionReview(cr)))),
      );
      // Let the server take the requests in before the signal.
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill("SIGTERM");

      const draining = await eventually(async () => {
        const reply = await send(target, "GET", "/readyz");
        return reply.status === 503 ? reply : undefined;
      }, "readiness to turn false");
      expect(draining.text).toMatch(/^shutting down\n/);

      const [goodReply, badReply] = await Promise.all(inFlight.map((post) => post.finish()));
      expect(goodReply?.status).toBe(200);
      expectGoodAndBadAnswers(goodReply?.text, badReply?.text);

      const [code] = await exited;
      expect(code).toBe(0);
      expect(logs.map((line) => line.msg)).toEqual(
        expect.arrayContaining(["signal received", "draining", "stopped"]),
      );
      expect(
        logs.filter((line) => line.msg === "admission" && String(line.uid).startsWith("uid-")),
      ).toHaveLength(2);
      await expect(send(target, "GET", "/healthz")).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
