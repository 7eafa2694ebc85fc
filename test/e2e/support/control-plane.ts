/**
 * A real Kubernetes control plane for the e2e suite: etcd and kube-apiserver on loopback, random
 * ports, static token authentication, RBAC. No controllers run: objects are stored and admitted
 * exactly as in a cluster, but no Job or Deployment ever starts a pod.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { REPO } from "../../harness.ts";
import { freePort } from "../../support/free-port.ts";
import { kubectlEnvironment } from "./kube.ts";

/** A running control plane. */
export interface ControlPlane {
  /** A kubeconfig file for a cluster admin (group `system:masters`). */
  readonly kubeconfig: string;
  /**
   * A kubeconfig that authenticates as `user` (one of {@link ControlPlaneOptions.users}), with only
   * the permissions RBAC gives that user.
   */
  kubeconfigFor(user: string): string;
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** etcd's client URL (`http://127.0.0.1:<port>`), for what only etcd does: compacting its history. */
  readonly etcdUrl: string;
  /** The directory holding kube-apiserver, flux-apply (and the state of this control plane). */
  readonly binDir: string;
  /** Stops kube-apiserver and starts it again on the same port and etcd; resolves when ready. */
  restartApiServer(): Promise<void>;
  /** Stops both processes and removes their state. */
  stop(): Promise<void>;
}

/** What `test/e2e/setup.sh` made: the directory with kube-apiserver and flux-apply. */
export function e2eBinaries(): string {
  return execFileSync("bash", [path.join(REPO, "test", "e2e", "setup.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
}

/** Options of {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /**
   * Further users the API server knows by token, besides the cluster admin. A user named like a
   * ServiceAccount (`system:serviceaccount:<namespace>:<name>`) is bound by RBAC exactly as that
   * ServiceAccount would be.
   */
  readonly users?: readonly string[];
  /**
   * The address kube-apiserver binds and advertises: the e2e node's own (test/e2e/node), whose pods
   * cannot reach the node's loopback. @default "127.0.0.1"
   */
  readonly address?: string;
  /** Further kube-apiserver flags, `--name=value`; each replaces the default flag of its name. */
  readonly apiServerFlags?: readonly string[];
  /**
   * The CA the kubeconfigs trust, for a serving certificate given in {@link apiServerFlags}.
   * @default the CA of the certificate kube-apiserver makes itself
   */
  readonly certificateAuthority?: string;
}

/** A process of the control plane could not listen on the port it was given. */
class PortTaken extends Error {}

/**
 * Starts etcd and kube-apiserver; resolves once `/readyz` answers ok. A port taken between choosing
 * and binding it (another test file's server chose it too) means starting again on new ports.
 */
export async function startControlPlane(
  binDir: string,
  options: ControlPlaneOptions = {},
): Promise<ControlPlane> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchControlPlane(binDir, options);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === 3) throw error;
    }
  }
}

async function launchControlPlane(binDir: string, options: ControlPlaneOptions): Promise<ControlPlane> {
  const state = await mkdtemp(path.join(tmpdir(), "metalsynth-e2e-"));
  const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
  const tokens = new Map([["admin", randomBytes(24).toString("hex")]]);
  for (const user of options.users ?? []) tokens.set(user, randomBytes(24).toString("hex"));
  await mkdir(path.join(state, "certs"));
  await writeFile(
    path.join(state, "tokens.csv"),
    [...tokens]
      .map(([user, token]) => {
        const groups =
          user === "admin"
            ? "system:masters"
            : user.startsWith("system:serviceaccount:")
              ? "system:serviceaccounts,system:authenticated"
              : "system:authenticated";
        return `${token},${user},${user},"${groups}"\n`;
      })
      .join(""),
  );
  const saKey = path.join(state, "sa.key");
  execFileSync("openssl", ["genrsa", "-out", saKey, "2048"], { stdio: "ignore" });

  const processes: ChildProcess[] = [];
  const stderr = new Map<ChildProcess, Buffer[]>();
  const launch = (command: string, args: string[]): ChildProcess => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    const chunks: Buffer[] = [];
    child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk));
    stderr.set(child, chunks);
    processes.push(child);
    return child;
  };

  const etcdUrl = `http://127.0.0.1:${etcdClient}`;
  const etcd = launch("etcd", [
    "--name=e2e",
    `--data-dir=${path.join(state, "etcd")}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-cluster=e2e=http://127.0.0.1:${etcdPeer}`,
    "--log-level=error",
  ]);

  const address = options.address ?? "127.0.0.1";
  const server = `https://${address}:${apiPort}`;
  const defaultArgs = [
    `--etcd-servers=${etcdUrl}`,
    `--bind-address=${address}`,
    `--advertise-address=${address}`,
    `--secure-port=${apiPort}`,
    `--cert-dir=${path.join(state, "certs")}`,
    `--token-auth-file=${path.join(state, "tokens.csv")}`,
    "--authorization-mode=RBAC",
    "--service-account-issuer=https://kubernetes.default.svc",
    `--service-account-key-file=${saKey}`,
    `--service-account-signing-key-file=${saKey}`,
    "--service-cluster-ip-range=10.96.0.0/16",
    "--enable-priority-and-fairness=false",
    "--v=0",
  ];
  const flagName = (flag: string): string => flag.split("=")[0] ?? flag;
  const overridden = new Set((options.apiServerFlags ?? []).map(flagName));
  const apiServerArgs = [
    ...defaultArgs.filter((flag) => !overridden.has(flagName(flag))),
    ...(options.apiServerFlags ?? []),
  ];
  let apiServer = launch(path.join(binDir, "kube-apiserver"), apiServerArgs);

  const kubeconfigText = (user: string): string =>
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "  - name: e2e",
      "    cluster:",
      `      server: ${server}`,
      // kube-apiserver writes its self-signed certificate and CA here when it starts.
      `      certificate-authority: ${options.certificateAuthority ?? path.join(state, "certs", "apiserver.crt")}`,
      "users:",
      "  - name: e2e",
      "    user:",
      `      token: ${tokens.get(user) ?? ""}`,
      "contexts:",
      "  - name: e2e",
      "    context: { cluster: e2e, user: e2e }",
      "current-context: e2e",
      "",
    ].join("\n");
  const kubeconfigs = new Map<string, string>();
  for (const user of tokens.keys()) {
    const file = path.join(state, `kubeconfig-${user.replaceAll(":", "_")}`);
    await writeFile(file, kubeconfigText(user));
    kubeconfigs.set(user, file);
  }
  const kubeconfig = kubeconfigs.get("admin") ?? "";

  const stopProcess = async (child: ChildProcess): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await Promise.race([exited, sleep(10_000).then(() => child.kill("SIGKILL"))]);
  };
  const waitReady = async (): Promise<void> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      for (const [name, child] of [
        ["etcd", etcd],
        ["kube-apiserver", apiServer],
      ] as const) {
        if (child.exitCode === null) continue;
        const log = Buffer.concat(stderr.get(child) ?? []).toString("utf8");
        const message = `${name} exited with ${child.exitCode}:\n${log.slice(-4000)}`;
        throw /address already in use/.test(log) ? new PortTaken(message) : new Error(message);
      }
      try {
        execFileSync("kubectl", ["get", "--raw", "/readyz"], {
          stdio: "pipe",
          env: kubectlEnvironment(kubeconfig),
        });
        return;
      } catch {
        if (Date.now() > deadline) throw new Error("kube-apiserver not ready after 60 s");
        await sleep(250);
      }
    }
  };

  const plane: ControlPlane = {
    kubeconfig,
    kubeconfigFor(user) {
      const file = kubeconfigs.get(user);
      if (!file) throw new Error(`no such e2e user: ${user}`);
      return file;
    },
    server,
    etcdUrl,
    binDir,
    async restartApiServer() {
      await stopProcess(apiServer);
      apiServer = launch(path.join(binDir, "kube-apiserver"), apiServerArgs);
      await waitReady();
    },
    async stop() {
      for (const child of processes.reverse()) await stopProcess(child);
      await rm(state, { recursive: true, force: true });
    },
  };
  try {
    await waitReady();
  } catch (error) {
    await plane.stop();
    throw error;
  }
  return plane;
}
