/**
 * `ip-duplicate` (decision 0052): two hosts at one address in what a plan renders. `hosts.ini`, the
 * cluster ConfigMaps and the load balancers' backends would then reach one machine under two names.
 * Only addresses a rendered file holds count: the SIP sample's storage networks repeat addresses from
 * host to host, and nothing metalsynth writes reaches them.
 */
import type { IpAddress } from "../checked.ts";
import { formatPath, type FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import type { Host } from "../inventory/host.ts";

/** One address a plan writes into a rendered file, and what it is there for. */
export interface RenderedAddress {
  readonly ip: IpAddress;
  readonly host: Host;
  /** Where the host says it: `status.hardware.nics`, `spec.networkData`. */
  readonly field: FieldPath;
  /** `edge-a/alpha master master-1`, `edge/tenant role ControlPlane on oam-ipv4`. */
  readonly use: string;
}

/** A warning on each host whose rendered address another host has too, naming the other uses. */
export function addressClashes(addresses: readonly RenderedAddress[]): Issue[] {
  const byIp = new Map<string, RenderedAddress[]>();
  for (const address of addresses) {
    const key = address.ip.toLowerCase();
    const known = byIp.get(key);
    if (known === undefined) byIp.set(key, [address]);
    else known.push(address);
  }
  const issues: Issue[] = [];
  for (const [ip, uses] of byIp) {
    if (new Set(uses.map((use) => use.host.id)).size < 2) continue;
    for (const address of uses) {
      const others = uses.filter((other) => other.host.id !== address.host.id);
      const named = others.map((other) => `${other.host.id} for ${other.use}`).join(", ");
      issues.push({
        rule: "ip-duplicate",
        severity: "warning",
        path: formatPath(address.field),
        message: `BareMetalHost ${address.host.id} serves ${address.use} at ${ip}, as ${named} ${others.length > 1 ? "do" : "does"}: the rendered files would reach one machine under both names; fix the addresses`,
        host: address.host.id,
        ...(address.host.source && { source: address.host.source }),
      });
    }
  }
  return issues.sort((a, b) => compareText(a.host ?? "", b.host ?? "") || compareText(a.message, b.message));
}
