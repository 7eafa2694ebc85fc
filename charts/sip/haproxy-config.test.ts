import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDnsSubdomain, parseIpAddress } from "../../synth/checked.ts";
import { checked } from "../../test/builders/inventory.ts";
import { haproxyConfig, type HaproxyConfigProps, type HaproxyServer } from "./haproxy-config.ts";

/** A server from text, through the parsers the door uses. */
function server(name: string, ip: string): HaproxyServer {
  return { name: checked(parseDnsSubdomain, name), ip: checked(parseIpAddress, ip) };
}

const PREAMBLE = [
  "global",
  "  log stdout format raw local0 notice",
  "  maxconn 4096",
  "",
  "defaults",
  "  mode tcp",
  "  log global",
  "  option tcplog",
  "  option dontlognull",
  "  option log-health-checks",
  "  retries 1",
  "  option redispatch",
  "  timeout queue 30s",
  "  timeout connect 10s",
  "  timeout client 600s",
  "  timeout server 600s",
  "  timeout check 5s",
  "",
  "frontend health",
  "  mode http",
  "  bind *:8404",
  "  monitor-uri /healthz",
];

const CONTROL_PLANE: HaproxyConfigProps = {
  title: "lb-cp",
  listeners: [{ name: "kube-apiserver", port: 6443 }],
  servers: [server("cp-1", "10.41.0.11"), server("cp-2.metal3-b", "fd00:41::12")],
  check: "kube-apiserver",
};

const WORKER: HaproxyConfigProps = {
  title: "lb-wk",
  listeners: [
    { name: "port-30100", port: 30100 },
    { name: "port-30101", port: 30101 },
  ],
  servers: [server("wk-1", "10.41.0.21")],
  check: "tcp",
};

const hasHaproxy = (() => {
  try {
    execFileSync("haproxy", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("haproxyConfig's door (issue #21 cases 1 and 2)", () => {
  it.each([
    ["an address carrying a server line", "cp-1", "10.41.0.11:6443 check\n    server evil 6.6.6.6"],
    ["a host name carrying a server line", "a-node\n      server evil 6.6.6.6:6443", "10.41.0.11"],
  ])("can't be handed %s: the parsers refuse it and plain text does not compile", (_, name, ip) => {
    expect(parseDnsSubdomain(name) === undefined || parseIpAddress(ip) === undefined).toBe(true);
    // @ts-expect-error servers take only a DnsSubdomain and an IpAddress, which only the parsers make.
    const write = () => haproxyConfig({ ...WORKER, servers: [{ name, ip }] });
    expect(write).toBeTypeOf("function");
  });
});

describe("haproxyConfig", () => {
  it("writes a TCP frontend per listener and every server, checked with the API server's /readyz", () => {
    expect(haproxyConfig(CONTROL_PLANE)).toBe(
      [
        "# lb-cp: written by metalsynth (SPEC 4.2), do not edit.",
        ...PREAMBLE,
        "",
        "frontend kube-apiserver",
        "  bind *:6443",
        "  default_backend kube-apiserver-backend",
        "",
        "backend kube-apiserver-backend",
        "  balance roundrobin",
        "  option httpchk GET /readyz",
        "  http-check expect status 200",
        "  default-server check check-ssl verify none inter 5s downinter 2s fall 4 rise 2 on-marked-down shutdown-sessions",
        "  server cp-1 10.41.0.11:6443",
        "  server cp-2.metal3-b fd00:41::12:6443",
        "",
      ].join("\n"),
    );
  });

  it("checks worker ports with a TCP connect, each server on the frontend's own port", () => {
    expect(haproxyConfig(WORKER)).toBe(
      [
        "# lb-wk: written by metalsynth (SPEC 4.2), do not edit.",
        ...PREAMBLE,
        "",
        "frontend port-30100",
        "  bind *:30100",
        "  default_backend port-30100-backend",
        "",
        "backend port-30100-backend",
        "  balance roundrobin",
        "  default-server check inter 5s fall 3 rise 2",
        "  server wk-1 10.41.0.21:30100",
        "",
        "frontend port-30101",
        "  bind *:30101",
        "  default_backend port-30101-backend",
        "",
        "backend port-30101-backend",
        "  balance roundrobin",
        "  default-server check inter 5s fall 3 rise 2",
        "  server wk-1 10.41.0.21:30101",
        "",
      ].join("\n"),
    );
  });

  // Runs where HAProxy is installed (`apt-get install haproxy`); the byte tests above pin the text.
  it.skipIf(!hasHaproxy).each([
    ["control plane", CONTROL_PLANE],
    ["worker", WORKER],
    ["a backend without servers", { ...WORKER, servers: [] }],
  ])("is accepted by `haproxy -c` without warnings: %s", async (_, props) => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), "metalsynth-haproxy-")), "haproxy.cfg");
    await writeFile(file, haproxyConfig(props));
    const result = spawnSync("haproxy", ["-c", "-f", file], { encoding: "utf8" });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: "" });
  });
});
