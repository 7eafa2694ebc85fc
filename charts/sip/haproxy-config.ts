import type { DnsSubdomain, IpAddress } from "../../synth/checked.ts";

/** Port of HAProxy's own health endpoint (`monitor-uri`), which the pod's probes ask. */
export const HAPROXY_HEALTH_PORT = 8404;
/** Path of HAProxy's own health endpoint. */
export const HAPROXY_HEALTH_PATH = "/healthz";

/**
 * A backend server: a member host by name, at its address on the service's interface. Both are
 * checked at the door (issue #21): neither can hold a space or a line break, so neither can add a
 * server or a directive.
 */
export interface HaproxyServer {
  readonly name: DnsSubdomain;
  readonly ip: IpAddress;
}

/** One TCP frontend and the backend it forwards to. */
export interface HaproxyListener {
  /** Frontend name; the backend is `<name>-backend`. */
  readonly name: string;
  /** Port HAProxy binds in the pod; the servers are reached on the same port. */
  readonly port: number;
}

/** How backends decide a server is up. */
export type HaproxyHealthCheck = "kube-apiserver" | "tcp";

/** What {@link haproxyConfig} writes. */
export interface HaproxyConfigProps {
  /** Named in the header comment, so a config read from a pod says where it came from. */
  readonly title: string;
  readonly listeners: readonly HaproxyListener[];
  /**
   * Every backend gets every server, each on the listener's port and health-checked: servers that
   * serve nothing yet (standby hosts, hosts not made nodes) are expected, and the checks skip them.
   */
  readonly servers: readonly HaproxyServer[];
  readonly check: HaproxyHealthCheck;
}

/**
 * Health checks per backend kind. The API server is asked `GET /readyz` over TLS without verifying
 * its certificate (HAProxy has no CA for the tenant cluster; `/readyz` is public), so a member whose
 * apiserver is up but not ready gets no traffic, and its sessions are cut when it is marked down so
 * long watches reconnect to a healthy member. The API server answers 500 for a few seconds while a
 * member joins: `fall 4` with `downinter 2s` rides that out. Worker ports carry anything (ingress,
 * NodePorts of the tenant), so a TCP connect is all that can be checked. HAProxy starts a checked
 * server as up but takes it down on its first failed check, so an idle host is out of rotation within
 * one `inter` of start, and back `rise` checks after it starts serving.
 */
const CHECKS: Readonly<Record<HaproxyHealthCheck, readonly string[]>> = {
  "kube-apiserver": [
    "option httpchk GET /readyz",
    "http-check expect status 200",
    "default-server check check-ssl verify none inter 5s downinter 2s fall 4 rise 2 on-marked-down shutdown-sessions",
  ],
  tcp: ["default-server check inter 5s fall 3 rise 2"],
};

/**
 * An `haproxy.cfg` that balances TCP connections over `servers`, one frontend per listener. It runs
 * in the foreground (the image's entrypoint passes `-W -db`), logs to stdout, and writes no files: no
 * pidfile, stats socket or chroot, so the pod's root filesystem stays read-only. Only directives
 * HAProxy 2.3 (upstream SIP's default image) already knows are used.
 */
export function haproxyConfig(props: HaproxyConfigProps): string {
  const lines = [
    `# ${props.title}: written by metalsynth (SPEC 4.2), do not edit.`,
    "global",
    "  log stdout format raw local0 notice",
    // Without a limit HAProxy sizes itself from the open-file limit, which container runtimes set
    // to a million: far more memory than the pod's limit allows.
    "  maxconn 4096",
    "",
    "defaults",
    "  mode tcp",
    "  log global",
    "  option tcplog",
    // Probes and port scans open and close connections without data: don't log them.
    "  option dontlognull",
    "  option log-health-checks",
    "  retries 1",
    // Backends list idle hosts too (docs/contract.md §4.2): a connection sent to one before its first check
    // failed is retried on another server instead of failing.
    "  option redispatch",
    "  timeout queue 30s",
    "  timeout connect 10s",
    // Long idle periods are normal: `kubectl exec` sessions, `kubectl logs -f`, watches.
    "  timeout client 600s",
    "  timeout server 600s",
    "  timeout check 5s",
    "",
    "frontend health",
    "  mode http",
    `  bind *:${HAPROXY_HEALTH_PORT}`,
    `  monitor-uri ${HAPROXY_HEALTH_PATH}`,
  ];
  for (const listener of props.listeners) {
    lines.push(
      "",
      `frontend ${listener.name}`,
      `  bind *:${listener.port}`,
      `  default_backend ${listener.name}-backend`,
      "",
      `backend ${listener.name}-backend`,
      "  balance roundrobin",
      ...CHECKS[props.check].map((line) => `  ${line}`),
      // HAProxy takes the text after the last colon as the port, so IPv6 needs no brackets.
      ...props.servers.map((server) => `  server ${server.name} ${server.ip}:${listener.port}`),
    );
  }
  return `${lines.join("\n")}\n`;
}
