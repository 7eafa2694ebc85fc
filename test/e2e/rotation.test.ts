/**
 * Issue #24's certificate chain on a real API server: the webhook's serving certificate is issued by
 * a root CA, and the CA bundle the API server trusts is that root (deploy/metalsynth.yaml: a
 * self-signed root, a CA Issuer, the serving Certificate; cainjector injects the root's certificate).
 * cert-manager does not run here (decision 0037): its renewals are played as it makes them — a new
 * key and certificate from the same CA written into the Secret, which the pod's volume swaps in
 * (test/webhook/tls-fixture.ts `rotate`); a root renewal keeps the key (`rotationPolicy: Never`) and
 * cainjector patches every webhook's `caBundle` with the renewed root.
 *
 * The API server keeps its connections to a webhook open for up to 90 s, so a renewal alone meets
 * only new connections: each renewal is also followed by an API server restart, after which every
 * request is a fresh TLS handshake against the renewed certificate. The last test shows the refusal
 * window of the scheme this replaced (a self-signed serving certificate that is its own bundle), so
 * that these tests can fail.
 */
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { REPO } from "../harness.ts";
import { filesUnder } from "../support/files.ts";
import { issueServerCertificate, rotate, type ServerCertificate } from "../webhook/tls-fixture.ts";
import { startControlPlane, type ControlPlane } from "./support/control-plane.ts";
import {
  ensureNamespaces,
  eventually,
  installCrds,
  kubectlFor,
  must,
  readObjects,
  type Kubectl,
  type Result,
} from "./support/kube.ts";
import {
  installWebhookRbac,
  loadInventory,
  registerWebhook,
  startWebhook,
  WEBHOOK_USER,
  type RunningWebhook,
} from "./support/webhook.ts";

const EXAMPLE = path.join(REPO, "examples", "site");
/** A CR the webhook admits: each dry run of it is one admission review. */
const GOOD = stringify({
  apiVersion: "bpa.akraino.org/v1alpha1",
  kind: "Provisioning",
  metadata: { name: "rotation-probe", namespace: "edge-a", labels: { cluster: "rotation-probe" } },
  // By resources only, like the example site's cluster-west: any free host that fits.
  spec: { masters: [{ "master-1": { cpu: 16, memory: "64Gi" } }] },
});

describe("renewing the webhook's certificates refuses no request", () => {
  let plane: ControlPlane;
  let kubectl: Kubectl;
  let webhook: RunningWebhook;

  const review = () => kubectl(["apply", "--dry-run=server", "-f", "-"], GOOD);
  /** SHA-256 fingerprint of the certificate the webhook serves to a new connection now. */
  const served = () =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port: webhook.port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? "");
        socket.end();
      });
      socket.on("error", reject);
    });
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
  /** Renews as cert-manager does (`certificate` written into the Secret) and waits until it is served. */
  const renew = async (certificate: ServerCertificate) => {
    await rotate(webhook.tls, certificate);
    await eventually(
      async () => (await served()) === fingerprint(certificate.cert),
      20_000,
      "renewal served",
    );
  };
  /** What cainjector does when the injected certificate changes: every webhook's caBundle patched. */
  const injectBundle = async (bundle: string) => {
    const caBundle = Buffer.from(bundle).toString("base64");
    const configuration = JSON.parse(
      await must(kubectl, ["get", "validatingwebhookconfiguration", "metalsynth-webhook", "-o", "json"]),
    ) as { webhooks: unknown[] };
    const patch = configuration.webhooks.map((_entry, index) => ({
      op: "replace",
      path: `/webhooks/${index}/clientConfig/caBundle`,
      value: caBundle,
    }));
    await must(kubectl, [
      "patch",
      "validatingwebhookconfiguration",
      "metalsynth-webhook",
      "--type=json",
      "-p",
      JSON.stringify(patch),
    ]);
  };
  /** Drops every connection the API server holds to the webhook: the next review is a new handshake. */
  const freshConnections = async (served?: ServerCertificate) => {
    await plane.restartApiServer();
    // A self-signed serving certificate is trusted only as itself, not through the test CA.
    const probe = () => webhook.probe("/readyz", served?.cert);
    await eventually(async () => (await probe()) === 200, 60_000, "webhook ready again");
  };
  const expectAdmitted = (result: Result) => expect(result.code, result.stderr).toBe(0);

  beforeAll(async () => {
    plane = await startControlPlane(inject("e2eBinDir"), { users: [WEBHOOK_USER] });
    kubectl = kubectlFor(plane.kubeconfig);
    await installCrds(kubectl);
    await installWebhookRbac(kubectl);
    await ensureNamespaces(kubectl, ["edge-a", "edge-sip"]);
    await loadInventory(kubectl, await readObjects(filesUnder(path.join(EXAMPLE, "inventory"))));
    webhook = await startWebhook(plane);
    // The bundle is the CA that issued the serving certificate: what cainjector injects from the
    // root Certificate of deploy/metalsynth.yaml.
    await registerWebhook(kubectl, webhook);
    expectAdmitted(await review());
  });
  afterAll(async () => {
    await webhook?.stop();
    await plane?.stop();
  });

  it("renews the serving certificate, a new key each time, under a loop of kubectl apply: zero refused", async () => {
    const results: Result[] = [];
    let running = true;
    const loop = (async () => {
      while (running) results.push(await review());
    })();
    try {
      for (const label of ["renewed-1", "renewed-2", "renewed-3"]) {
        await sleep(1_000);
        await renew(await issueServerCertificate(webhook.ca, label, ["127.0.0.1"]));
      }
      await sleep(1_000);
    } finally {
      running = false;
      await loop;
    }
    expect(results.length).toBeGreaterThan(5);
    expect(results.filter((result) => result.code !== 0).map((result) => result.stderr)).toEqual([]);
  });

  it("a renewed serving certificate holds on new connections with the bundle unchanged", async () => {
    const bundle = await must(kubectl, [
      "get",
      "validatingwebhookconfiguration",
      "metalsynth-webhook",
      "-o",
      "json",
    ]);
    await renew(await issueServerCertificate(webhook.ca, "renewed-4", ["127.0.0.1"]));
    await freshConnections();
    expectAdmitted(await review());
    const after = await must(kubectl, [
      "get",
      "validatingwebhookconfiguration",
      "metalsynth-webhook",
      "-o",
      "json",
    ]);
    const bundles = (text: string) =>
      (JSON.parse(text) as { webhooks: { clientConfig: { caBundle: string } }[] }).webhooks.map(
        (entry) => entry.clientConfig.caBundle,
      );
    expect(bundles(after)).toEqual(bundles(bundle));
  }, 240_000);

  it("renews the root with its key kept: the injected new root and the serving certificate issued before it both hold", async () => {
    // cert-manager's renewal of the root Certificate (rotationPolicy: Never): same key and subject.
    const renewedRoot = path.join(webhook.ca.dir, "ca-renewed.crt");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-key",
        webhook.ca.keyFile,
        "-out",
        renewedRoot,
        "-days",
        "3",
        "-subj",
        "/CN=metalsynth test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
      ],
      { stdio: "pipe" },
    );
    const root = await readFile(renewedRoot, "utf8");
    expect(fingerprint(root)).not.toBe(fingerprint(webhook.ca.cert));
    await injectBundle(root);
    await freshConnections();
    expectAdmitted(await review());
  }, 240_000);

  it("(the scheme replaced) a self-signed serving certificate that is its own bundle: its renewal is refused until the bundle is patched", async () => {
    const selfSigned = async (label: string): Promise<ServerCertificate> => {
      const certFile = path.join(webhook.ca.dir, `${label}.crt`);
      const keyFile = path.join(webhook.ca.dir, `${label}.key`);
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:P-256",
          "-nodes",
          "-keyout",
          keyFile,
          "-out",
          certFile,
          "-days",
          "2",
          "-subj",
          "/CN=127.0.0.1",
          "-addext",
          "subjectAltName=IP:127.0.0.1",
        ],
        { stdio: "pipe" },
      );
      return {
        certFile: certFile,
        keyFile: keyFile,
        cert: await readFile(certFile, "utf8"),
        key: await readFile(keyFile, "utf8"),
      };
    };
    const first = await selfSigned("self-1");
    await injectBundle(first.cert);
    await renew(first);
    await freshConnections(first);
    expectAdmitted(await review());

    // Its renewal: a new key, so a new certificate the API server does not trust yet.
    const second = await selfSigned("self-2");
    await renew(second);
    await freshConnections(second);
    const refused = await review();
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/failed calling webhook .*(x509|certificate)/);
    // Until cainjector patches the bundle.
    await injectBundle(second.cert);
    await eventually(async () => (await review()).code === 0, 10_000, "admitted once the bundle is patched");
  }, 240_000);
});
