/**
 * Ports for servers a test starts as separate processes (etcd, kube-apiserver, the webhook, a
 * container's published port), which must be told their port before they bind it.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * The kernel's range for the local port of outgoing connections. A port from it that was free a
 * moment ago can be taken by any connection opened since (a CI run failed so: kube-apiserver's port
 * went to one of the many connections the e2e files open in parallel), so servers get ports below it.
 */
function ephemeralRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low !== undefined && high !== undefined && low > 0 && high >= low) return { low, high };
  } catch {
    // Not Linux: take Linux's default.
  }
  return { low: 32768, high: 60999 };
}

/** Ports below this are left to well-known and registered services. */
const LOWEST = 10_000;

/** Whether a server can listen on `port` of 127.0.0.1 now. */
async function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback TCP port nothing listens on now, outside the range outgoing connections draw from.
 * Random, so that test files starting servers at the same time rarely pick the same one; callers
 * that cannot tolerate the rare clash retry (see `startControlPlane`).
 */
export async function freePort(): Promise<number> {
  const { low } = ephemeralRange();
  const span = low - LOWEST;
  if (span <= 0) throw new Error(`the ephemeral port range starts at ${low}: no room below it`);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * span);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${low} after 100 tries`);
}
