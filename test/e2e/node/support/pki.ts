/**
 * The e2e node's certificates, made with the `openssl` CLI as kubeadm's `certs` phase makes them: one
 * CA that signs the API server's serving certificate and every client certificate of a control-plane
 * component, and that kube-controller-manager signs the kubelet's client certificate with (its CSR,
 * decision 0060). P-256 keys, two days.
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import path from "node:path";

/** A certificate and its key, as files. */
export interface Pair {
  readonly cert: string;
  readonly key: string;
}

const NEW_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

function openssl(args: readonly string[], cwd: string): void {
  try {
    execFileSync("openssl", args, { cwd, stdio: "pipe" });
  } catch (error) {
    throw new Error(
      `openssl ${args.join(" ")} failed: ${String(Reflect.get(error as object, "stderr") ?? error)}`,
    );
  }
}

/** A CA in `dir`, and a way to issue certificates signed by it. */
export interface Authority {
  readonly ca: Pair;
  /**
   * A certificate for `commonName` (the user name, for a client) in `organisations` (its groups),
   * with `names` as subject alternative names (IP addresses or DNS names) when it serves.
   */
  issue(
    file: string,
    subject: { commonName: string; organisations?: readonly string[] },
    usage: { client?: boolean; serverNames?: readonly string[] },
  ): Promise<Pair>;
}

/** A new CA in `dir` (created). */
export async function createAuthority(dir: string): Promise<Authority> {
  await mkdir(dir, { recursive: true });
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
      "/CN=metalsynth-e2e-node-ca",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,digitalSignature,keyCertSign,cRLSign",
    ],
    dir,
  );
  const ca = { cert: path.join(dir, "ca.crt"), key: path.join(dir, "ca.key") };
  return {
    ca,
    async issue(file, subject, usage) {
      const names = usage.serverNames ?? [];
      const usages = [...(usage.client ? ["clientAuth"] : []), ...(names.length > 0 ? ["serverAuth"] : [])];
      const extensions = [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        `extendedKeyUsage=${usages.join(",")}`,
        ...(names.length > 0
          ? [`subjectAltName=${names.map((name) => (isIP(name) ? `IP:${name}` : `DNS:${name}`)).join(",")}`]
          : []),
      ];
      await writeFile(path.join(dir, `${file}.ext`), extensions.join("\n") + "\n");
      const dn = [`/CN=${subject.commonName}`, ...(subject.organisations ?? []).map((o) => `/O=${o}`)].join(
        "",
      );
      openssl(["req", "-new", ...NEW_KEY, "-keyout", `${file}.key`, "-out", `${file}.csr`, "-subj", dn], dir);
      openssl(
        [
          "x509",
          "-req",
          "-in",
          `${file}.csr`,
          "-CA",
          "ca.crt",
          "-CAkey",
          "ca.key",
          "-CAcreateserial",
          "-days",
          "2",
          "-extfile",
          `${file}.ext`,
          "-out",
          `${file}.crt`,
        ],
        dir,
      );
      return { cert: path.join(dir, `${file}.crt`), key: path.join(dir, `${file}.key`) };
    },
  };
}

/** A kubeconfig for `server` that trusts `ca` and authenticates with `client` (or a bearer `token`). */
export function kubeconfig(
  server: string,
  ca: string,
  credentials: { client: Pair } | { token: string },
  user = "user",
): string {
  const userLines =
    "client" in credentials
      ? [
          `      client-certificate: ${credentials.client.cert}`,
          `      client-key: ${credentials.client.key}`,
        ]
      : [`      token: ${credentials.token}`];
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: e2e",
    "    cluster:",
    `      server: ${server}`,
    `      certificate-authority: ${ca}`,
    "users:",
    `  - name: ${user}`,
    "    user:",
    ...userLines,
    "contexts:",
    "  - name: e2e",
    `    context: { cluster: e2e, user: ${user} }`,
    "current-context: e2e",
    "",
  ].join("\n");
}
