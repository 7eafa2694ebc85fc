/**
 * A real Kubernetes node beside the e2e suite's API server (issue #37, decision 0060): containerd
 * from Debian with its CNI plugins, and the kubelet, kube-controller-manager, kube-scheduler and
 * kube-proxy built from the release kube-apiserver is built from (test/e2e/node/setup.sh). The API
 * server binds the node's own address, since pods reach it through the `kubernetes` Service, which
 * kube-proxy sends to that address.
 *
 * Credentials follow kubeadm: one CA; the API server serves with a certificate of it and authorises
 * with `Node,RBAC` and the NodeRestriction admission plugin; the controller manager, the scheduler
 * and kube-proxy authenticate with client certificates of their well-known users; the kubelet joins
 * with a bootstrap token, asks for its client certificate with a CSR that the controller manager
 * approves and signs, and from then on is `system:node:<name>`. The tests themselves act as the
 * cluster admin (a token of `system:masters`), as an operator would.
 *
 * Everything lives under one directory ({@link NODE_ROOT}); a run that died without stopping is
 * cleared at the next start, and only one node runs on a machine at a time.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { appendFile, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { REPO } from "../../../harness.ts";
import { freePort } from "../../../support/free-port.ts";
import { startControlPlane, type ControlPlane } from "../../support/control-plane.ts";
import { kubectlFor, must } from "../../support/kube.ts";
import { createAuthority, kubeconfig } from "./pki.ts";

/** The stand-in images test/image/standins/build.sh makes. */
export const STAND_INS = [
  "kubectl",
  "haproxy",
  "jump-host",
  "installer",
  "dex",
  "pause",
  "test-host",
] as const;
export type StandIn = (typeof STAND_INS)[number];

/** What test/e2e/node/setup.sh made. */
export interface NodeSetup {
  /** kubelet, kube-controller-manager, kube-scheduler, kube-proxy, kubectl and pause. */
  readonly nodeBin: string;
  /** The podman configuration this machine needs (for the test hosts). */
  readonly containersConf: string;
  /** The archive of every stand-in but the test host's, for `ctr images import`. */
  readonly archive: string;
  /** Each stand-in's image name. */
  readonly images: Readonly<Record<StandIn, string>>;
}

/** Builds (or finds cached) what the node needs: test/e2e/node/setup.sh. */
export function nodeSetup(): NodeSetup {
  const output = execFileSync("bash", [path.join(REPO, "test", "e2e", "node", "setup.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exported = new Map(
    [...output.matchAll(/^export (\w+)=(.*)$/gm)].map(([, name, value]) => [name, value]),
  );
  const value = (name: string): string => {
    const found = exported.get(name);
    if (!found) throw new Error(`test/e2e/node/setup.sh printed no ${name}:\n${output}`);
    return found;
  };
  return {
    nodeBin: value("NODE_BIN"),
    containersConf: value("CONTAINERS_CONF"),
    archive: value("NODE_STANDINS"),
    images: Object.fromEntries(
      STAND_INS.map((role) => [role, value(`NODE_STANDIN_${role.toUpperCase().replaceAll("-", "_")}`)]),
    ) as Record<StandIn, string>,
  };
}

/** How test files reach the node the node tier's global setup started (plain data: it is `provide`d). */
export interface NodeInfo {
  /** A cluster admin's kubeconfig (a token of `system:masters`). */
  readonly kubeconfig: string;
  /** `https://<node address>:<port>` */
  readonly server: string;
  /** The e2e suite's binaries: kube-apiserver, flux-apply, argo-sync. */
  readonly binDir: string;
  readonly nodeName: string;
  /** The node's address: its InternalIP, where its NodePorts answer. */
  readonly address: string;
  /** kube-apiserver's audit log (JSON lines): who wrote BareMetalHosts. */
  readonly auditLog: string;
  /** containerd's socket, for `ctr`. */
  readonly containerd: string;
  readonly setup: NodeSetup;
}

/** A node this process started. */
export interface RunningNode {
  readonly info: NodeInfo;
  readonly plane: ControlPlane;
  /** Stops every process it started, removes what they left (mounts, links, rules) and its state. */
  stop(): Promise<void>;
}

/** Where the node keeps everything: certificates, containerd's and the kubelet's state, logs. */
export const NODE_ROOT = path.join(tmpdir(), "metalsynth-e2e-node");
/** The node's name, and the kubelet's user `system:node:<name>`. */
export const NODE_NAME = "metalsynth-e2e-node";
/** The pods' addresses (the CNI bridge's range): clear of podman's 10.88.0.0/16 and the Services'. */
export const POD_CIDR = "10.244.0.0/24";
const CLUSTER_CIDR = "10.244.0.0/16";
/** The first address of the API server's --service-cluster-ip-range: the `kubernetes` Service. */
const KUBERNETES_SERVICE_IP = "10.96.0.1";
/** The CNI bridge on the node, named in the CNI configuration. */
const CNI_BRIDGE = "cni-msnode0";

/** The node's address: the source of its default route, as the kubelet would pick. */
function nodeAddress(): string {
  const routes = JSON.parse(
    execFileSync("ip", ["-j", "route", "get", "192.0.2.255"], { encoding: "utf8" }),
  ) as {
    prefsrc?: string;
  }[];
  const address = process.env.METALSYNTH_NODE_ADDRESS ?? routes[0]?.prefsrc;
  if (!address) throw new Error("no address for the node: set METALSYNTH_NODE_ADDRESS");
  return address;
}

/** A process of the node: its name, and where its output goes. */
interface Component {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
}

/** Starts the node; resolves once it is Ready and the cluster's default ServiceAccount exists. */
export async function startNode(e2eBinDir: string, setup: NodeSetup): Promise<RunningNode> {
  await claimRoot();
  const address = nodeAddress();
  const logs = path.join(NODE_ROOT, "logs");
  await mkdir(logs, { recursive: true });
  const components: Component[] = [];
  const sysctls = saveSysctls(["net/ipv4/ip_forward"]);
  let plane: ControlPlane | undefined;

  const launch = async (name: string, command: string, args: readonly string[]): Promise<Component> => {
    const log = path.join(logs, `${name}.log`);
    const fd = openSync(log, "a");
    const child = spawn(command, args, { stdio: ["ignore", fd, fd] });
    closeSync(fd);
    await appendFile(path.join(NODE_ROOT, "pids"), `${child.pid} ${command}\n`);
    const component = { name, child, log };
    components.push(component);
    return component;
  };
  const stopComponent = async (component: Component, signal: NodeJS.Signals = "SIGTERM"): Promise<void> => {
    const { child } = component;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    // A timer cleared once it exits, so that nothing keeps the test runner's process waiting.
    const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(killer);
  };
  const failed = (): string | undefined => {
    const dead = components.find(({ child }) => child.exitCode !== null || child.signalCode !== null);
    if (!dead) return undefined;
    const tail = readFileSync(dead.log, "utf8").slice(-4000);
    return `${dead.name} exited (${dead.child.exitCode ?? dead.child.signalCode}); the end of ${dead.log}:\n${tail}`;
  };
  const until = async (what: string, timeoutMs: number, check: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const died = failed();
      if (died) throw new Error(`waiting for ${what}: ${died}`);
      if (await check()) return;
      if (Date.now() > deadline)
        throw new Error(`${what}: not within ${timeoutMs / 1000} s (logs in ${logs})`);
      await sleep(250);
    }
  };

  const stop = async (): Promise<void> => {
    const admin = plane ? kubectlFor(plane.kubeconfig) : undefined;
    const byName = (name: string) => components.find((component) => component.name === name);
    // No controller makes new pods from here on; the kubelet stops every pod it runs, tearing down
    // each sandbox's network and unmounting its volumes, and confirms each deletion.
    const controllerManager = byName("kube-controller-manager");
    if (controllerManager) await stopComponent(controllerManager);
    const kubelet = byName("kubelet");
    if (admin && kubelet && kubelet.child.exitCode === null) {
      await admin(["delete", "pods", "--all", "--all-namespaces", "--grace-period=1", "--wait=false"]);
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline) {
        const left = await admin(["get", "pods", "--all-namespaces", "--no-headers", "--ignore-not-found"]);
        if (left.code === 0 && left.stdout.trim() === "") break;
        await sleep(500);
      }
    }
    for (const name of ["kubelet", "kube-proxy", "kube-scheduler"]) {
      const component = byName(name);
      if (component) await stopComponent(component);
    }
    const containerd = byName("containerd");
    if (containerd && containerd.child.exitCode === null) {
      // Anything still running (a pod the kubelet did not get to) is killed, so no shim outlives it.
      killTasks(socketOf());
      await stopComponent(containerd);
    }
    await plane?.stop();
    await clearNode();
    restoreSysctls(sysctls);
  };

  try {
    const pki = await createAuthority(path.join(NODE_ROOT, "pki"));
    const serving = await pki.issue(
      "apiserver",
      { commonName: "kube-apiserver" },
      {
        serverNames: [
          address,
          KUBERNETES_SERVICE_IP,
          "127.0.0.1",
          "kubernetes",
          "kubernetes.default",
          "kubernetes.default.svc",
          "kubernetes.default.svc.cluster.local",
        ],
      },
    );
    const kubeletClient = await pki.issue(
      "apiserver-kubelet-client",
      { commonName: "kube-apiserver-kubelet-client" },
      { client: true },
    );
    const auditPolicy = path.join(NODE_ROOT, "audit-policy.yaml");
    const auditLog = path.join(NODE_ROOT, "logs", "audit.log");
    await writeFile(auditPolicy, AUDIT_POLICY);
    plane = await startControlPlane(e2eBinDir, {
      address,
      certificateAuthority: pki.ca.cert,
      apiServerFlags: [
        `--tls-cert-file=${serving.cert}`,
        `--tls-private-key-file=${serving.key}`,
        `--client-ca-file=${pki.ca.cert}`,
        `--kubelet-client-certificate=${kubeletClient.cert}`,
        `--kubelet-client-key=${kubeletClient.key}`,
        // The kubelet is reached at the address it registers (pods' logs, exec), not by host name.
        "--kubelet-preferred-address-types=InternalIP",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        "--enable-bootstrap-token-auth=true",
        "--allow-privileged=true",
        `--audit-policy-file=${auditPolicy}`,
        `--audit-log-path=${auditLog}`,
        "--audit-log-format=json",
      ],
    });
    const admin = kubectlFor(plane.kubeconfig);
    const server = plane.server;

    // The kubelet's join: a bootstrap token, and kubeadm's bindings that let its group ask for a node
    // client certificate that is approved without a person.
    const tokenId = randomBytes(3).toString("hex");
    const tokenSecret = randomBytes(8).toString("hex");
    await must(admin, ["apply", "-f", "-"], bootstrapObjects(tokenId, tokenSecret));

    const kubeconfigs = path.join(NODE_ROOT, "kubeconfigs");
    await mkdir(kubeconfigs, { recursive: true });
    const clientKubeconfig = async (name: string, user: string, groups: string[] = []) => {
      const pair = await pki.issue(name, { commonName: user, organisations: groups }, { client: true });
      const file = path.join(kubeconfigs, `${name}.conf`);
      await writeFile(file, kubeconfig(server, pki.ca.cert, { client: pair }, user));
      return file;
    };
    const controllerManagerConfig = await clientKubeconfig(
      "kube-controller-manager",
      "system:kube-controller-manager",
    );
    const schedulerConfig = await clientKubeconfig("kube-scheduler", "system:kube-scheduler");
    const proxyConfig = await clientKubeconfig("kube-proxy", "system:kube-proxy");
    const bootstrapConfig = path.join(kubeconfigs, "bootstrap-kubelet.conf");
    await writeFile(
      bootstrapConfig,
      kubeconfig(server, pki.ca.cert, { token: `${tokenId}.${tokenSecret}` }, "kubelet-bootstrap"),
    );

    // containerd, with the stand-ins in its image store.
    const containerdDir = path.join(NODE_ROOT, "containerd");
    const socket = socketOf();
    const cniDir = path.join(NODE_ROOT, "cni");
    await mkdir(cniDir, { recursive: true });
    await mkdir(containerdDir, { recursive: true });
    await writeFile(
      path.join(containerdDir, "config.toml"),
      containerdConfig(socket, setup.images.pause, cniDir),
    );
    await launch("containerd", "containerd", ["--config", path.join(containerdDir, "config.toml")]);
    await until("containerd's socket", 30_000, () => ctr(socket, ["version"]).ok);
    const imported = ctr(socket, ["images", "import", setup.archive]);
    if (!imported.ok) throw new Error(`ctr images import ${setup.archive} failed: ${imported.output}`);
    await writeFile(path.join(cniDir, "10-metalsynth-e2e.conflist"), cniConfig());

    const securePort = async () => `--secure-port=${await freePort()}`;
    await launch("kube-controller-manager", path.join(setup.nodeBin, "kube-controller-manager"), [
      `--kubeconfig=${controllerManagerConfig}`,
      `--authentication-kubeconfig=${controllerManagerConfig}`,
      `--authorization-kubeconfig=${controllerManagerConfig}`,
      "--bind-address=127.0.0.1",
      await securePort(),
      "--leader-elect=false",
      "--controllers=*,bootstrapsigner,tokencleaner",
      "--use-service-account-credentials=true",
      `--cluster-signing-cert-file=${pki.ca.cert}`,
      `--cluster-signing-key-file=${pki.ca.key}`,
      `--root-ca-file=${pki.ca.cert}`,
      `--client-ca-file=${pki.ca.cert}`,
      "--allocate-node-cidrs=false",
      "--v=1",
    ]);
    await launch("kube-scheduler", path.join(setup.nodeBin, "kube-scheduler"), [
      `--kubeconfig=${schedulerConfig}`,
      `--authentication-kubeconfig=${schedulerConfig}`,
      `--authorization-kubeconfig=${schedulerConfig}`,
      "--bind-address=127.0.0.1",
      await securePort(),
      "--leader-elect=false",
      "--v=1",
    ]);

    const kubeletDir = path.join(NODE_ROOT, "kubelet");
    await mkdir(kubeletDir, { recursive: true });
    const kubeletConfig = path.join(NODE_ROOT, "kubelet-config.yaml");
    await writeFile(
      kubeletConfig,
      kubeletConfiguration({
        address,
        port: await freePort(),
        socket,
        ca: pki.ca.cert,
        logs: path.join(NODE_ROOT, "pod-logs"),
      }),
    );
    await launch("kubelet", path.join(setup.nodeBin, "kubelet"), [
      `--config=${kubeletConfig}`,
      `--bootstrap-kubeconfig=${bootstrapConfig}`,
      `--kubeconfig=${path.join(kubeconfigs, "kubelet.conf")}`,
      `--cert-dir=${path.join(NODE_ROOT, "kubelet-pki")}`,
      `--root-dir=${kubeletDir}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${address}`,
      "--v=1",
    ]);
    const proxyConfigFile = path.join(NODE_ROOT, "kube-proxy-config.yaml");
    await writeFile(proxyConfigFile, kubeProxyConfiguration(proxyConfig, await freePort(), await freePort()));
    await launch("kube-proxy", path.join(setup.nodeBin, "kube-proxy"), [
      `--config=${proxyConfigFile}`,
      "--v=1",
    ]);

    await until(`node ${NODE_NAME} Ready`, 180_000, async () => {
      const node = await admin([
        "get",
        "node",
        NODE_NAME,
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
      ]);
      return node.code === 0 && node.stdout === "True";
    });
    // What every pod of the rendered manifests relies on: the namespace's default ServiceAccount and
    // the cluster CA the kubelet projects into tokens' volumes.
    await until("the default ServiceAccount and kube-root-ca.crt", 60_000, async () => {
      const found = await admin([
        "get",
        "serviceaccount/default",
        "configmap/kube-root-ca.crt",
        "-n",
        "default",
      ]);
      return found.code === 0;
    });
    return {
      plane,
      stop,
      info: {
        kubeconfig: plane.kubeconfig,
        server,
        binDir: e2eBinDir,
        nodeName: NODE_NAME,
        address,
        auditLog,
        containerd: socket,
        setup,
      },
    };
  } catch (error) {
    await stop().catch((stopError: unknown) =>
      console.error("stopping the node after a failed start:", stopError),
    );
    throw error;
  }
}

/** containerd's socket. */
function socketOf(): string {
  return path.join(NODE_ROOT, "containerd", "containerd.sock");
}

/** `ctr --address <socket> -n k8s.io …`: whether it succeeded and what it printed. */
export function ctr(socket: string, args: readonly string[]): { ok: boolean; output: string } {
  try {
    const output = execFileSync("ctr", ["--address", socket, "--namespace", "k8s.io", ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { ok: true, output };
  } catch (error) {
    return { ok: false, output: String(Reflect.get(error as object, "stderr") ?? error) };
  }
}

/** Kills and deletes every task containerd still runs. */
function killTasks(socket: string): void {
  const tasks = ctr(socket, ["tasks", "list", "--quiet"]);
  if (!tasks.ok) return;
  for (const id of tasks.output.split("\n").filter(Boolean)) {
    ctr(socket, ["tasks", "kill", "--signal", "SIGKILL", id]);
    ctr(socket, ["tasks", "delete", "--force", id]);
  }
}

/**
 * Takes {@link NODE_ROOT} for this process: refuses while another live process holds it, and clears
 * what a run that died left behind.
 */
async function claimRoot(): Promise<void> {
  const owner = path.join(NODE_ROOT, "owner");
  if (existsSync(owner)) {
    const pid = Number(readFileSync(owner, "utf8").trim());
    if (pid !== process.pid && alive(pid))
      throw new Error(`another e2e node runs on this machine (process ${pid}, ${NODE_ROOT}); one at a time`);
    await clearNode();
  }
  await mkdir(NODE_ROOT, { recursive: true });
  await writeFile(owner, `${process.pid}\n`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes what the node leaves on the machine once its processes are gone, and, for a run that
 * died, ends its processes first: each one it started (by the process ids it recorded, if the id
 * still runs that program), the containerd shims serving its socket and whatever runs in the
 * kubelet's pod cgroups. Then: mounts under {@link NODE_ROOT} and the pod network namespaces'
 * mounts, kube-proxy's rules, the kubelet's canary chains, the CNI bridge, the pod cgroups, and the
 * directory itself.
 */
async function clearNode(): Promise<void> {
  const pidsFile = path.join(NODE_ROOT, "pids");
  if (existsSync(pidsFile)) {
    for (const line of readFileSync(pidsFile, "utf8").split("\n").filter(Boolean)) {
      const [pid, command] = line.split(" ");
      if (!pid || !command || !alive(Number(pid))) continue;
      if (runs(Number(pid), path.basename(command))) process.kill(Number(pid), "SIGKILL");
    }
  }
  const socket = socketOf();
  for (const pid of processIds()) {
    const cmdline = commandLine(pid);
    if (cmdline.includes("containerd-shim") && cmdline.includes(socket)) process.kill(pid, "SIGKILL");
  }
  for (const pid of podProcesses()) process.kill(pid, "SIGKILL");
  await sleep(200);
  unmountUnder(NODE_ROOT);
  unmountNetworkNamespaces();
  const proxy = findProxy();
  if (proxy) run(proxy, ["--cleanup"]);
  removeKubeletChains();
  run("ip", ["link", "delete", CNI_BRIDGE]);
  removePodCgroups();
  await rm(NODE_ROOT, { recursive: true, force: true });
}

/**
 * The kubelet's own iptables chains (kube-proxy's `--cleanup` leaves them): the canaries it watches
 * for a flush, and KUBE-FIREWALL, which INPUT and OUTPUT jump to.
 */
function removeKubeletChains(): void {
  const chains = ["KUBE-FIREWALL", "KUBE-KUBELET-CANARY", "KUBE-IPTABLES-HINT"];
  for (const tool of ["iptables", "ip6tables"]) {
    for (const table of ["filter", "nat", "mangle"]) {
      let rules = "";
      try {
        rules = execFileSync(`${tool}-save`, ["-t", table], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"],
        });
      } catch {
        continue;
      }
      for (const line of rules.split("\n")) {
        const jump = /^-A (\S+) -j (\S+)$/.exec(line);
        if (jump && chains.includes(jump[2] ?? "") && !chains.includes(jump[1] ?? ""))
          run(tool, ["-t", table, "-D", jump[1] ?? "", "-j", jump[2] ?? ""]);
      }
      for (const chain of chains) {
        if (!rules.includes(`:${chain} `)) continue;
        run(tool, ["-t", table, "-F", chain]);
        run(tool, ["-t", table, "-X", chain]);
      }
    }
  }
}

/** The kube-proxy of the newest node build, for `--cleanup` (its rules are the same in each). */
function findProxy(): string | undefined {
  const cache =
    process.env.METALSYNTH_E2E_CACHE ??
    path.join(
      process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? "/root", ".cache"),
      "metalsynth-e2e",
    );
  if (!existsSync(cache)) return undefined;
  const builds = readdirSync(cache)
    .filter((entry) => entry.startsWith("node-") && existsSync(path.join(cache, entry, "kube-proxy")))
    .map((entry) => path.join(cache, entry, "kube-proxy"))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return builds[0];
}

function run(command: string, args: readonly string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function processIds(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

function runs(pid: number, program: string): boolean {
  return (commandLine(pid).split(" ")[0] ?? "").endsWith(program);
}

/** Processes in the kubelet's pod cgroups (`kubepods`, in every cgroup v1 hierarchy that has one). */
function podProcesses(): number[] {
  const found = new Set<number>();
  for (const dir of podCgroupDirs()) {
    try {
      for (const pid of readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
        found.add(Number(pid));
    } catch {
      // Gone meanwhile.
    }
  }
  return [...found];
}

/** Every directory of the kubelet's pod cgroups, deepest first. */
function podCgroupDirs(): string[] {
  const dirs: string[] = [];
  const visit = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) if (entry.isDirectory()) visit(path.join(dir, entry.name));
    dirs.push(dir);
  };
  let hierarchies: string[] = [];
  try {
    hierarchies = readdirSync("/sys/fs/cgroup");
  } catch {
    return [];
  }
  for (const hierarchy of hierarchies) {
    const root = path.join("/sys/fs/cgroup", hierarchy, "kubepods");
    if (existsSync(root)) visit(root);
  }
  return dirs;
}

function removePodCgroups(): void {
  for (const dir of podCgroupDirs()) {
    try {
      rmdirSync(dir);
    } catch {
      // Still in use: reported by the caller's check, if it cares.
    }
  }
}

/** The mount points under `root`, deepest first. */
function mountsUnder(root: string): string[] {
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .map((point) => point.replace(/\\040/g, " "))
    .filter((point) => point === root || point.startsWith(`${root}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

function unmountUnder(root: string): void {
  for (let pass = 0; pass < 3; pass++) {
    const points = mountsUnder(root);
    if (points.length === 0) return;
    for (const point of points) if (!run("umount", [point])) run("umount", ["--lazy", point]);
  }
}

/** The network namespaces containerd's CRI made for pods (`/run/netns/cni-*`), unmounted and removed. */
function unmountNetworkNamespaces(): void {
  for (const dir of ["/run/netns", "/var/run/netns"]) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir).filter((name) => name.startsWith("cni-"))) {
      const file = path.join(dir, entry);
      if (mountsUnder(file).length > 0) run("umount", [file]);
      run("rm", ["-f", file]);
    }
  }
}

function saveSysctls(names: readonly string[]): Map<string, string> {
  return new Map(names.map((name) => [name, readFileSync(`/proc/sys/${name}`, "utf8").trim()]));
}

function restoreSysctls(saved: ReadonlyMap<string, string>): void {
  for (const [name, value] of saved) {
    try {
      writeFileSync(`/proc/sys/${name}`, `${value}\n`);
    } catch {
      // Not ours to insist on.
    }
  }
}

/** Only who writes BareMetalHosts, at the Metadata level (user, verb, object, outcome). */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, update, patch, delete]
    resources:
      - group: metal3.io
        resources: [baremetalhosts]
  - level: None
`;

/** The bootstrap token and kubeadm's bindings for the kubelet's join (kubeadm init's bootstrap-token phase). */
function bootstrapObjects(id: string, secret: string): string {
  const expiration = new Date(Date.now() + 2 * 3600_000).toISOString().replace(/\.\d+Z$/, "Z");
  const group = "system:bootstrappers:kubeadm:default-node-token";
  const binding = (name: string, role: string, subject: { kind: string; name: string }) => `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: "${name}" }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "${role}" }
subjects:
  - { apiGroup: rbac.authorization.k8s.io, kind: ${subject.kind}, name: "${subject.name}" }
`;
  return `apiVersion: v1
kind: Secret
metadata: { name: bootstrap-token-${id}, namespace: kube-system }
type: bootstrap.kubernetes.io/token
stringData:
  token-id: "${id}"
  token-secret: "${secret}"
  usage-bootstrap-authentication: "true"
  auth-extra-groups: "${group}"
  expiration: "${expiration}"
${binding("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", { kind: "Group", name: group })}${binding(
    "kubeadm:node-autoapprove-bootstrap",
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    { kind: "Group", name: group },
  )}${binding(
    "kubeadm:node-autoapprove-certificate-rotation",
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    { kind: "Group", name: "system:nodes" },
  )}${binding("kubeadm:apiserver-kubelet-client", "system:kubelet-api-admin", {
    kind: "User",
    name: "kube-apiserver-kubelet-client",
  })}`;
}

/**
 * containerd's configuration: its own root, state and socket under {@link NODE_ROOT}; the CRI with
 * runc and cgroupfs (no systemd here), the stand-in pause image, and the CNI plugins Debian installs.
 * `restrict_oom_score_adj`: root here lacks CAP_SYS_RESOURCE, so a container's OOM score may not go
 * below containerd's own; without it every sandbox fails to start ("can't get final child's PID
 * from pipe: EOF").
 */
function containerdConfig(socket: string, pause: string, cniDir: string): string {
  const dir = path.dirname(socket);
  return `version = 2
root = "${dir}/root"
state = "${dir}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pause}"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniDir}"
`;
}

/** One bridge for the node's pods, masquerading what leaves {@link POD_CIDR}. */
function cniConfig(): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "metalsynth-e2e",
      plugins: [
        {
          type: "bridge",
          bridge: CNI_BRIDGE,
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: POD_CIDR }]],
            routes: [{ dst: "0.0.0.0/0" }],
            dataDir: path.join(NODE_ROOT, "cni-ipam"),
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * The kubelet's configuration. The two settings this machine needs: `cgroupfs` (no systemd runs as
 * init) and `failCgroupV1: false` (cgroup v1, hybrid). Image garbage collection is off (the
 * stand-ins cannot be pulled again), eviction thresholds are low (a test machine's disk is shared),
 * no cluster DNS runs (pods get the node's resolv.conf).
 */
function kubeletConfiguration(options: {
  address: string;
  port: number;
  socket: string;
  ca: string;
  logs: string;
}): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${options.address}
port: ${options.port}
readOnlyPort: 0
healthzPort: 0
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix://${options.socket}
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: ${options.ca} }
authorization:
  mode: Webhook
rotateCertificates: true
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
failSwapOn: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
podLogsDir: ${options.logs}
`;
}

/** kube-proxy in iptables mode; no conntrack sysctls (they take privileges root lacks here). */
function kubeProxyConfiguration(kubeconfigFile: string, healthz: number, metrics: number): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${kubeconfigFile}
hostnameOverride: ${NODE_NAME}
clusterCIDR: ${CLUSTER_CIDR}
mode: iptables
nodePortAddresses: [primary]
healthzBindAddress: 127.0.0.1:${healthz}
metricsBindAddress: 127.0.0.1:${metrics}
iptables:
  localhostNodePorts: false
  syncPeriod: 10s
  minSyncPeriod: 0s
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`;
}
