/**
 * The image, run the way deploy/metalsynth.yaml's Deployment runs it: as uid and gid 65532, all
 * capabilities dropped, no privilege escalation, a read-only root file system and nothing writable
 * besides (the Deployment mounts no /tmp, so neither does this), the TLS Secret's files mounted
 * read-only as mode 0440 of group 65532 (its defaultMode and fsGroup), its Node.js options, the
 * same arguments but for `--from-cluster`, which needs an API server: the example site's inventory
 * and specs instead, mounted read-only. The API server's side is played by a client that trusts
 * only the test CA and checks the Service's DNS name, as the API server does.
 */
import { execFile } from "node:child_process";
import { copyFile, chmod, chown, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WEBHOOK_NODE_OPTIONS } from "../../charts/webhook/deployment.ts";
import { REPO } from "../harness.ts";
import { admissionReview } from "../builders/reviews.ts";
import { copyExampleSite } from "../support/example-site.ts";
import { freePort } from "../support/free-port.ts";
import { send, type Target } from "../webhook/client.ts";
import { GOOD_AND_BAD, expectGoodAndBadAnswers } from "../webhook/example-reviews.ts";
import { eventually } from "../webhook/harness.ts";
import { createTestCa, issueServerCertificate } from "../webhook/tls-fixture.ts";

const IMAGE = inject("image");
const ENV = { ...process.env, CONTAINERS_CONF: inject("containersConf") };
const NONROOT = 65532;
/** The Deployment's terminationGracePeriodSeconds: how long `podman stop` waits before SIGKILL. */
const GRACE_SECONDS = 30;

/** Runs podman and returns its standard output; throws with its standard error on a failure. */
async function podman(...args: string[]): Promise<string> {
  return (await podmanOutput(...args)).stdout;
}

/** Runs podman and returns what it printed; throws with its standard error on a failure. */
function podmanOutput(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)("podman", args, { env: ENV, maxBuffer: 16 << 20 });
}

/** `podman run`'s options for the container the Deployment's securityContext describes. */
const SECURITY = [
  `--user=${NONROOT}:${NONROOT}`,
  "--cap-drop=all",
  "--security-opt=no-new-privileges",
  "--read-only",
  // podman mounts a writable tmpfs on /tmp, /var/tmp, /run and /dev/shm of a read-only container
  // unless told not to; Kubernetes does not.
  "--read-only-tmpfs=false",
];

/** What every line of the webhook's JSON log has. */
const LOG_LINE = z.object({ msg: z.string() });

/** The resident memory of a process, in MiB, from /proc. */
async function residentMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) / 1024;
}

describe("the metalsynth image, run as the Deployment runs it", () => {
  const name = `metalsynth-image-test-${process.pid}`;
  let target: Target;
  let site: string;

  beforeAll(async () => {
    const ca = await createTestCa();
    const certificate = await issueServerCertificate(ca, "server");
    const tls = path.join(ca.dir, "secret");
    await mkdir(tls);
    for (const [from, to] of [
      [certificate.certFile, "tls.crt"],
      [certificate.keyFile, "tls.key"],
    ] as const) {
      await copyFile(from, path.join(tls, to));
      await chown(path.join(tls, to), 0, NONROOT);
      await chmod(path.join(tls, to), 0o440);
    }
    site = await copyExampleSite();
    // The temporary directories are the owner's only; the container's user must get in to read.
    await Promise.all([ca.dir, tls, site].map((dir) => chmod(dir, 0o755)));

    const port = await freePort();
    target = { port, ca: ca.cert };
    await podman(
      "run",
      "--detach",
      `--name=${name}`,
      `--publish=127.0.0.1:${port}:8443`,
      ...SECURITY,
      // The Deployment's Node.js options: the image's node must accept them.
      `--env=NODE_OPTIONS=${WEBHOOK_NODE_OPTIONS}`,
      `--volume=${tls}:/tls:ro`,
      `--volume=${site}:/site:ro`,
      IMAGE,
      ...["webhook", "--inventory", "/site/inventory", "--site", "/site"],
      ...["--tls-cert", "/tls/tls.crt", "--tls-key", "/tls/tls.key", "--port", "8443"],
    );
  });

  afterAll(async () => {
    await podman("rm", "--force", "--ignore", name);
  });

  it("answers /healthz and turns ready once it has read the site", async () => {
    const ready = await eventually(
      async () => {
        const reply = await send(target, "GET", "/readyz").catch(() => undefined);
        return reply?.status === 200 ? reply : undefined;
      },
      "ready",
      30_000,
    );
    expect(ready.text).toContain("24 hosts");
    expect((await send(target, "GET", "/healthz")).status).toBe(200);
  });

  it("answers AdmissionReviews: allows a Provisioning that fits, refuses a mistyped MAC with the message", async () => {
    const [goodReply, badReply] = await Promise.all(
      GOOD_AND_BAD.map((cr) => send(target, "POST", "/validate/provisioning", admissionReview(cr))),
    );
    expect([goodReply?.status, badReply?.status]).toEqual([200, 200]);
    expectGoodAndBadAnswers(goodReply?.text, badReply?.text);
  });

  it("validates a mounted site, and says its version", async () => {
    const validate = await podmanOutput(
      "run",
      "--rm",
      ...SECURITY,
      `--volume=${site}:/site:ro`,
      IMAGE,
      "validate",
      "--site",
      "/site",
    );
    expect(validate).toEqual({ stdout: "", stderr: "metalsynth: no problems found\n" });
    const { version } = z
      .object({ version: z.string() })
      .parse(JSON.parse(await readFile(path.join(REPO, "package.json"), "utf8")));
    expect(await podman("run", "--rm", ...SECURITY, IMAGE, "--version")).toBe(`metalsynth ${version}\n`);
  });

  it("runs the Node.js major version the Dockerfile's base images name (24, the active LTS)", async () => {
    const dockerfile = await readFile(path.join(REPO, "Dockerfile"), "utf8");
    const build = /^ARG BUILD_IMAGE=node:(\d+)-/m.exec(dockerfile)?.[1];
    const runtime = /^ARG RUNTIME_IMAGE=gcr\.io\/distroless\/nodejs(\d+)-/m.exec(dockerfile)?.[1];
    expect([build, runtime]).toEqual(["24", "24"]);
    const version = await podman(
      "run",
      "--rm",
      ...SECURITY,
      "--entrypoint=/nodejs/bin/node",
      IMAGE,
      "--version",
    );
    expect(version).toMatch(/^v24\.\d+\.\d+\n$/);
  });

  it("drains on `podman stop` and exits 0; image size and idle memory", async () => {
    const pid = Number((await podman("inspect", "--format={{.State.Pid}}", name)).trim());
    // Idle: ready, and its one admission request a while ago.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const rss = await residentMiB(pid);
    const bytes = Number((await podman("image", "inspect", "--format={{.Size}}", IMAGE)).trim());
    console.log(`image ${IMAGE}: ${(bytes / 1e6).toFixed(0)} MB; webhook idle RSS ${rss.toFixed(0)} MiB`);

    await podman("stop", `--time=${GRACE_SECONDS}`, name);
    expect((await podman("inspect", "--format={{.State.ExitCode}}", name)).trim()).toBe("0");
    const logs = (await podman("logs", name)).trim().split("\n");
    const messages = logs.map((line) => LOG_LINE.parse(JSON.parse(line)).msg);
    expect(messages).toEqual(expect.arrayContaining(["listening", "signal received", "draining", "stopped"]));
    expect(messages.filter((message) => message === "admission")).toHaveLength(2);
  });
});
