/**
 * The machines a test site's BareMetalHosts stand for, at the addresses the inventory gives them, so
 * that what the rendered files point at exists: each one a container of the test-host stand-in
 * (test/image/standins/test-host: sshd letting in root and ubuntu with the given keys, a stand-in
 * tenant kube-apiserver on 6443, a TCP server on each given port, a local package source) run by
 * podman with a network namespace of its own, joined to the node by a veth pair on one bridge. The
 * node routes to them as to any host on its network: the pods' traffic is masqueraded by the CNI
 * bridge, the installers' (host network) leaves the node directly.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { exec, type Result } from "../../support/kube.ts";
import type { NodeInfo } from "./node.ts";

/** The bridge on the node the test hosts hang off, with each host network's first address. */
export const HOSTS_BRIDGE = "ms-hosts0";
/** The label podman's containers of test hosts carry (a run that died leaves them to the next). */
const LABEL = "metalsynth-e2e-test-host";

/** The certificate and key test-host made for the stand-in API server. */
const HOST_SERVICE_FILES = ["/etc/host-services/cert.pem", "/etc/host-services/key.pem"];

/** A host to start. */
export interface TestHostSpec {
  readonly name: string;
  /** Its IPv4 address; the host's network is its /24, whose `.1` is the node's address on it. */
  readonly address: string;
  /** Ports a TCP server answers on (with `<name> <port>`), besides 22 and 6443. */
  readonly ports?: readonly number[];
}

/** A running test host. */
export interface TestHost {
  readonly name: string;
  readonly address: string;
  readonly container: string;
  /** `podman exec <container> args…` */
  exec(args: readonly string[]): Promise<Result>;
  /** Stops its stand-in API server and port servers (SSH stays). */
  stopServices(): Promise<void>;
  /** Starts them again. */
  startServices(): Promise<void>;
  /** Stops the whole host: nothing answers at its address any more. */
  stop(): Promise<void>;
}

/** Hosts started together, and their end. */
export interface TestHosts {
  readonly hosts: ReadonlyMap<string, TestHost>;
  get(name: string): TestHost;
  stop(): Promise<void>;
}

function ip(args: readonly string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** The host network's gateway: the node's address on the host's /24. */
function gatewayOf(address: string): string {
  return `${address.split(".").slice(0, 3).join(".")}.1`;
}

/** Removes the test hosts a run that died left (podman's containers of {@link LABEL}, the bridge). */
export function clearTestHosts(info: NodeInfo): void {
  const env = { ...process.env, CONTAINERS_CONF: info.setup.containersConf };
  const leftovers = execFileSync("podman", ["ps", "--all", "--quiet", "--filter", `label=${LABEL}`], {
    encoding: "utf8",
    env,
  })
    .split("\n")
    .filter(Boolean);
  if (leftovers.length > 0)
    execFileSync("podman", ["rm", "--force", "--time", "1", ...leftovers], { env, stdio: "ignore" });
  try {
    ip(["link", "delete", HOSTS_BRIDGE]);
  } catch {
    // None.
  }
}

/**
 * Starts `specs` as test hosts that let in `authorizedKeys` (as root and as ubuntu); resolves once
 * each one's SSH server answers at its address.
 */
export async function startTestHosts(
  info: NodeInfo,
  specs: readonly TestHostSpec[],
  authorizedKeys: readonly string[],
): Promise<TestHosts> {
  const env = { ...process.env, CONTAINERS_CONF: info.setup.containersConf };
  const podman = (args: readonly string[]) => exec("podman", args, { env });
  clearTestHosts(info);
  ip(["link", "add", HOSTS_BRIDGE, "type", "bridge"]);
  ip(["link", "set", HOSTS_BRIDGE, "up"]);
  for (const gateway of new Set(specs.map((spec) => gatewayOf(spec.address)))) {
    ip(["address", "add", `${gateway}/24`, "dev", HOSTS_BRIDGE]);
  }
  const run = randomBytes(2).toString("hex");
  const hosts = new Map<string, TestHost>();
  const stopAll = async () => {
    const containers = [...hosts.values()].map((host) => host.container);
    if (containers.length > 0) await podman(["rm", "--force", "--time", "1", ...containers]);
    clearTestHosts(info);
  };
  try {
    for (const [index, spec] of specs.entries()) {
      const container = `metalsynth-e2e-host-${spec.name}-${run}`;
      const started = await podman([
        "run",
        "--detach",
        "--network=none",
        `--hostname=${spec.name}`,
        `--name=${container}`,
        `--label=${LABEL}=${run}`,
        "--env",
        `AUTHORIZED_KEYS=${authorizedKeys.join("\n")}`,
        info.setup.images["test-host"],
        "/usr/local/bin/test-host",
        spec.name,
        ...(spec.ports ?? []).map(String),
      ]);
      if (started.code !== 0) throw new Error(`podman run ${container}: ${started.stderr}`);
      const pid = (await podman(["inspect", "--format", "{{.State.Pid}}", container])).stdout.trim();
      // The veth's outer end on the bridge, its inner end the host's eth0 in its namespace.
      const outer = `msh${run}${index}`;
      ip(["link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", pid]);
      ip(["link", "set", outer, "master", HOSTS_BRIDGE, "up"]);
      const inside = (args: readonly string[]) =>
        execFileSync("nsenter", ["--target", pid, "--net", "ip", ...args], {
          stdio: ["ignore", "ignore", "pipe"],
        });
      inside(["address", "add", `${spec.address}/24`, "dev", "eth0"]);
      inside(["link", "set", "eth0", "up"]);
      inside(["link", "set", "lo", "up"]);
      inside(["route", "add", "default", "via", gatewayOf(spec.address)]);
      hosts.set(spec.name, {
        name: spec.name,
        address: spec.address,
        container,
        exec: (args) => podman(["exec", container, ...args]),
        async stopServices() {
          const result = await podman(["exec", container, "sh", "-c", "kill $(cat /run/host-services.pid)"]);
          if (result.code !== 0) throw new Error(`stopping ${spec.name}'s services: ${result.stderr}`);
        },
        async startServices() {
          const args = [spec.name, ...HOST_SERVICE_FILES, ...(spec.ports ?? []).map(String)].join(" ");
          const result = await podman([
            "exec",
            container,
            "sh",
            "-c",
            `python3 /usr/local/bin/host-services ${args} </dev/null >/dev/null 2>&1 & echo $! >/run/host-services.pid`,
          ]);
          if (result.code !== 0) throw new Error(`starting ${spec.name}'s services: ${result.stderr}`);
          await waitForPort(spec.address, 6443, 10_000);
        },
        async stop() {
          await podman(["rm", "--force", "--time", "1", container]);
        },
      });
    }
    for (const host of hosts.values()) await waitForPort(host.address, 22, 30_000);
  } catch (error) {
    await stopAll();
    throw error;
  }
  return {
    hosts,
    get(name) {
      const host = hosts.get(name);
      if (!host) throw new Error(`no test host ${name}`);
      return host;
    },
    stop: stopAll,
  };
}

/** Resolves once something accepts a TCP connection at `address:port`. */
export async function waitForPort(address: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await connects(address, port))) {
    if (Date.now() > deadline) throw new Error(`nothing answers at ${address}:${port} after ${timeoutMs} ms`);
    await sleep(200);
  }
}

function connects(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(port, address, () => done(true));
  });
}
