/**
 * A throwaway certificate authority for the webhook's HTTPS tests, made with the `openssl` CLI (Node
 * has no API that signs certificates). Server certificates carry the Service DNS name the
 * ValidatingWebhookConfiguration uses, so clients verify them exactly as the API server would.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rename, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_NAMESPACE, WEBHOOK_NAME } from "../../charts/webhook/index.ts";

/** The name the API server connects to: `<service>.<namespace>.svc` of the deployment chart. */
export const SERVICE_NAME = `${WEBHOOK_NAME}.${DEFAULT_NAMESPACE}.svc`;

/** A CA and where its files are. */
export interface TestCa {
  readonly dir: string;
  /** PEM of the CA certificate, for clients to trust. */
  readonly cert: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** A server certificate and key signed by a {@link TestCa}. */
export interface ServerCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: string;
  readonly key: string;
}

/** A new unencrypted P-256 key, as cert-manager's `ECDSA, size 256` makes. */
const NEW_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

function openssl(args: readonly string[], cwd: string): void {
  try {
    execFileSync("openssl", args, { cwd, stdio: "pipe" });
  } catch (error) {
    const stderr = Reflect.get(error as object, "stderr");
    throw new Error(
      `openssl ${args[0]} failed (the webhook tests need the openssl CLI): ${String(stderr ?? error)}`,
    );
  }
}

/** A new CA in a new temporary directory. */
export async function createTestCa(): Promise<TestCa> {
  const dir = await mkdtemp(path.join(tmpdir(), "metalsynth-tls-"));
  openssl(
    [
      "req",
      "-x509",
      ...NEW_KEY,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=metalsynth test CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  return {
    dir,
    cert: await readFile(path.join(dir, "ca.crt"), "utf8"),
    certFile: path.join(dir, "ca.crt"),
    keyFile: path.join(dir, "ca.key"),
  };
}

/** A server certificate for `names` (DNS SANs, or IP SANs for addresses), written as `<label>.crt` / `<label>.key` in the CA's directory. */
export async function issueServerCertificate(
  ca: TestCa,
  label: string,
  names: readonly string[] = [SERVICE_NAME],
): Promise<ServerCertificate> {
  const key = `${label}.key`;
  const csr = `${label}.csr`;
  const cert = `${label}.crt`;
  const extensions = `${label}.ext`;
  await writeFile(
    path.join(ca.dir, extensions),
    `subjectAltName=${names.map((name) => (isIP(name) ? `IP:${name}` : `DNS:${name}`)).join(",")}\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(
    ["req", "-new", ...NEW_KEY, "-keyout", key, "-out", csr, "-subj", `/CN=${names[0] ?? label}`],
    ca.dir,
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      cert,
      "-days",
      "2",
      "-extfile",
      extensions,
    ],
    ca.dir,
  );
  return {
    certFile: path.join(ca.dir, cert),
    keyFile: path.join(ca.dir, key),
    cert: await readFile(path.join(ca.dir, cert), "utf8"),
    key: await readFile(path.join(ca.dir, key), "utf8"),
  };
}

/**
 * Replaces the files at `target` with `source`'s content the way a Secret volume update looks to the
 * server: each file replaced whole by a rename, the certificate first and the key a moment later.
 */
export async function rotate(
  target: { certFile: string; keyFile: string },
  source: ServerCertificate,
): Promise<void> {
  for (const [file, content] of [
    [target.certFile, source.cert],
    [target.keyFile, source.key],
  ] as const) {
    await writeFile(`${file}.new`, content);
    await rename(`${file}.new`, file);
  }
}
