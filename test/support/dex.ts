/**
 * Dex, the OIDC provider a SIPCluster's `auth` service renders (issue #39), run as a local process the
 * way the rendered Deployment runs it: its container's mounts laid out under a directory of its own
 * (ConfigMaps from the rendered objects, Secrets from what the test says they hold), the working
 * directory, the command and arguments, and the environment with each `secretKeyRef` resolved. The
 * binary is built from Dex's Go module by `test/e2e/setup.sh dex` and cached per machine. Used by the
 * e2e proof (`test/e2e/auth.test.ts`) and by the trust-boundary fuzz, where Dex judges its config.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { REPO } from "../harness.ts";

/** A Kubernetes object as rendered. */
type Json = Record<string, unknown>;

/** What the Secrets a pod mounts or reads hold: Secret name → key → value. */
export type SecretData = ReadonlyMap<string, Readonly<Record<string, string>>>;
/**
 * The value of `key` of Secret `name`, asked for an environment `variable` or a volume (no variable);
 * `undefined` when the Secret has no such key.
 */
export type SecretLookup = (name: string, key: string, variable?: string) => string | undefined;

/**
 * The dex binary, built (or found in the cache) by `test/e2e/setup.sh dex`; `undefined` when Go is
 * missing, so the tests that need it can say they are skipped.
 */
export function dexBinary(): string | undefined {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  return execFileSync("bash", [path.join(REPO, "test", "e2e", "setup.sh"), "dex"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
}

/** A pod's container as a process would run it: where, with what, and its ports by name. */
export interface PodProcess {
  /** The stand-in for the container's root file system, holding every mount at its path. */
  readonly root: string;
  /** `root` + the container's `workingDir`. */
  readonly cwd: string;
  /** The container's `command` and `args`, as the runtime would `exec` them. */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Container port by name. */
  readonly ports: Readonly<Record<string, number>>;
  /** The readiness probe's path and port name. */
  readonly readiness: { readonly path: string; readonly port: string };
}

/**
 * The first container of Deployment `name` among `objects`, laid out in a new directory: each
 * ConfigMap volume's keys (from `objects`) and each Secret volume's keys (from `secrets`, `items`
 * honoured) written under `root` + the mount's path; the environment's values and `secretKeyRef`s
 * resolved. A Secret or key the pod needs and `secrets` lacks fails, as the pod would.
 */
export async function layOutPod(
  objects: readonly Json[],
  name: string,
  secrets: SecretData | SecretLookup,
): Promise<PodProcess> {
  const deployment = objects.find(
    (object) => object["kind"] === "Deployment" && (object["metadata"] as Json)["name"] === name,
  );
  const pod = ((deployment?.["spec"] as Json | undefined)?.["template"] as Json | undefined)?.["spec"] as
    Json | undefined;
  const container = (pod?.["containers"] as Json[] | undefined)?.[0];
  if (!pod || !container) throw new Error(`no Deployment ${name} with a container`);
  const root = await mkdtemp(path.join(tmpdir(), "metalsynth-pod-"));
  const volumes = new Map(
    ((pod["volumes"] as Json[] | undefined) ?? []).map((volume) => [volume["name"], volume]),
  );
  const lookup: SecretLookup =
    typeof secrets === "function" ? secrets : (secretName, key) => secrets.get(secretName)?.[key];
  const secret = (secretName: string, key: string, variable?: string): string => {
    const value = lookup(secretName, key, variable);
    if (value === undefined)
      throw new Error(`the pod needs key ${key} of Secret ${secretName}, which the test lacks`);
    return value;
  };

  for (const mount of (container["volumeMounts"] as Json[] | undefined) ?? []) {
    const volume = volumes.get(mount["name"]);
    if (!volume) throw new Error(`mount ${String(mount["name"])} of no volume`);
    const dir = path.join(root, String(mount["mountPath"]));
    await mkdir(dir, { recursive: true });
    const files = new Map<string, string>();
    if (volume["configMap"]) {
      const configMapName = (volume["configMap"] as Json)["name"];
      const configMap = objects.find(
        (object) => object["kind"] === "ConfigMap" && (object["metadata"] as Json)["name"] === configMapName,
      );
      if (!configMap)
        throw new Error(`the pod mounts ConfigMap ${String(configMapName)}, which is not rendered`);
      for (const [key, value] of Object.entries((configMap["data"] as Record<string, string>) ?? {}))
        files.set(key, value);
    } else if (volume["secret"]) {
      const source = volume["secret"] as { secretName: string; items?: { key: string; path: string }[] };
      if (source.items === undefined) throw new Error(`Secret volume ${source.secretName} without items`);
      for (const item of source.items) files.set(item.path, secret(source.secretName, item.key));
    } else {
      throw new Error(`volume ${String(mount["name"])} is neither a ConfigMap nor a Secret`);
    }
    for (const [file, content] of files) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), content);
    }
  }
  const env: Record<string, string> = {};
  for (const variable of (container["env"] as Json[] | undefined) ?? []) {
    const reference = ((variable["valueFrom"] as Json | undefined)?.["secretKeyRef"] ?? undefined) as
      { name: string; key: string } | undefined;
    env[String(variable["name"])] = reference
      ? secret(reference.name, reference.key, String(variable["name"]))
      : String(variable["value"] ?? "");
  }
  const ports = Object.fromEntries(
    ((container["ports"] as Json[] | undefined) ?? []).map((port) => [
      String(port["name"]),
      Number(port["containerPort"]),
    ]),
  );
  const probe = (container["readinessProbe"] as Json | undefined)?.["httpGet"] as Json | undefined;
  return {
    root,
    cwd: path.join(root, String(container["workingDir"] ?? "/")),
    argv: [
      ...((container["command"] as string[] | undefined) ?? []),
      ...((container["args"] as string[] | undefined) ?? []),
    ],
    env,
    ports,
    readiness: { path: String(probe?.["path"] ?? "/"), port: String(probe?.["port"] ?? "") },
  };
}

/** A Dex process and what it has logged. */
export interface RunningDex {
  readonly process: ChildProcess;
  log(): string;
  /** Stops it; resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `binary` as the pod's container would start its command: `binary` in place of the image's
 * program (`argv[0]`), the rest of the arguments as rendered, then `extraArgs`, in the pod's working
 * directory with the pod's environment only (and a PATH). Resolves once the readiness probe answers
 * 200 at `readinessPort` (default the container port the probe names), or rejects with Dex's log
 * when it exits first.
 */
export async function startDexPod(
  binary: string,
  pod: PodProcess,
  options: {
    readonly extraArgs?: readonly string[];
    readonly readinessPort?: number;
    readonly timeoutMs?: number;
  } = {},
): Promise<RunningDex> {
  const child = spawn(binary, [...pod.argv.slice(1), ...(options.extraArgs ?? [])], {
    cwd: pod.cwd,
    env: { ...pod.env, PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const chunks: Buffer[] = [];
  child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const dex: RunningDex = {
    process: child,
    log: () => Buffer.concat(chunks).toString("utf8"),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(5_000).then(() => child.kill("SIGKILL"))]);
      await exited;
    },
  };
  const port = options.readinessPort ?? pod.ports[pod.readiness.port];
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new DexExited(child.exitCode, dex.log());
    }
    const ready = await fetch(`http://127.0.0.1:${port}${pod.readiness.path}`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return dex;
    if (Date.now() > deadline) {
      await dex.stop();
      throw new Error(`Dex not ready after ${options.timeoutMs ?? 30_000} ms:\n${dex.log()}`);
    }
    await sleep(50);
  }
}

/** Dex exited before it was ready: it refused its configuration (or could not listen). */
export class DexExited extends Error {
  constructor(
    readonly code: number | null,
    readonly log: string,
  ) {
    super(`Dex exited with ${String(code)} before it was ready:\n${log}`);
  }
}

/** An HTTPS answer. */
export interface HttpsAnswer {
  readonly status: number;
  readonly location?: string;
  readonly body: string;
}

/** One HTTPS request trusting only `ca`, redirects not followed; a form body when `form` is given. */
export function httpsRequest(
  url: string,
  ca: string,
  form?: Readonly<Record<string, string>>,
): Promise<HttpsAnswer> {
  const body = form === undefined ? undefined : new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const call = request(
      url,
      {
        method: body === undefined ? "GET" : "POST",
        ca,
        headers: body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            ...(response.headers.location === undefined ? {} : { location: response.headers.location }),
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    call.on("error", reject);
    call.setTimeout(10_000, () => call.destroy(new Error(`no answer from ${url} in 10 s`)));
    call.end(body);
  });
}

/** The claims of a JWT (its payload, not verified). */
export function jwtClaims(token: string): Record<string, unknown> {
  const payload = token.split(".")[1] ?? "";
  return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
}

/**
 * The password grant (`grant_type=password`) of Dex at `issuer` (reached at `base`, by default the
 * issuer itself), for a public client: the ID token, or the answer that refused it.
 */
export async function passwordGrant(
  base: string,
  ca: string,
  grant: { readonly clientId: string; readonly username: string; readonly password: string },
): Promise<{ readonly idToken: string } | { readonly refused: HttpsAnswer }> {
  const answer = await httpsRequest(`${base}/token`, ca, {
    grant_type: "password",
    client_id: grant.clientId,
    username: grant.username,
    password: grant.password,
    scope: "openid email groups profile",
  });
  if (answer.status !== 200) return { refused: answer };
  const token = (JSON.parse(answer.body) as { id_token?: string }).id_token;
  return token === undefined ? { refused: answer } : { idToken: token };
}

/** The bcrypt hash of `password` that Dex's own example config carries (cost 10). */
export const PASSWORD = "password";
export const PASSWORD_HASH = "$2a$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W";
