/**
 * Inventory hygiene Metal3's own webhook does not check (decision 0052): one machine registered twice
 * (two BareMetalHosts with one BMC address: `bmc-duplicate`), and two hosts with one IP on a NIC or a
 * networkData network (`ip-duplicate`), which would put two hosts behind one address in `hosts.ini`
 * and the load balancers' backends. Warnings, one per host, naming the others: the snapshot may be
 * right and the cluster wrong, and nothing here is chosen yet.
 */
import { formatPath, type FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import type { RuleId } from "../rule-catalogue.ts";
import type { Host } from "./host.ts";

/** The hygiene findings of `hosts`, in host order. */
export function hygieneIssues(hosts: readonly Host[]): Issue[] {
  const byBmc = new Map<string, Host[]>();
  const byIp = new Map<string, Host[]>();
  for (const host of hosts) {
    if (host.bmc !== undefined) addTo(byBmc, bmcIdentity(host.bmc.address), host);
    for (const ip of addressesOf(host).keys()) addTo(byIp, ip, host);
  }
  const issues: Issue[] = [];
  for (const [address, sharing] of byBmc) {
    if (sharing.length < 2) continue;
    for (const host of sharing)
      issues.push(
        hygieneIssue(
          "bmc-duplicate",
          host,
          ["spec", "bmc", "address"],
          `BareMetalHost ${host.id} has BMC address ${host.bmc?.address ?? address}, as ${others(sharing, host)} ${sharing.length > 2 ? "do" : "does"}: one machine registered twice would serve two clusters; delete the extra BareMetalHost`,
        ),
      );
  }
  for (const [ip, sharing] of byIp) {
    if (sharing.length < 2) continue;
    for (const host of sharing)
      issues.push(
        hygieneIssue(
          "ip-duplicate",
          host,
          addressesOf(host).get(ip) ?? [],
          `BareMetalHost ${host.id} reports IP ${ip}, as ${others(sharing, host)} ${sharing.length > 2 ? "do" : "does"}: hosts.ini and load-balancer backends would reach one of them under both names; fix the addresses`,
        ),
      );
  }
  return issues.sort((a, b) => compareText(a.host ?? "", b.host ?? "") || compareText(a.message, b.message));
}

/**
 * Every distinct address of a host that can reach a rendered file, NIC addresses and networkData's,
 * with where the BareMetalHost says it.
 */
function addressesOf(host: Host): Map<string, FieldPath> {
  const addresses = new Map<string, FieldPath>();
  for (const nic of host.nics) {
    if (nic.ipv4 !== undefined) addresses.set(nic.ipv4, NICS);
    if (nic.ipv6 !== undefined) addresses.set(nic.ipv6.toLowerCase(), NICS);
  }
  for (const ip of Object.values(host.networks)) {
    const key = ip.toLowerCase();
    if (!addresses.has(key)) addresses.set(key, NETWORK_DATA);
  }
  return addresses;
}

const NICS: FieldPath = ["status", "hardware", "nics"];
const NETWORK_DATA: FieldPath = ["spec", "networkData"];

/**
 * A BMC address as the machine it reaches: case and a trailing slash aside. The port stays part of
 * it: virtual BMCs (vbmc, sushy-tools) serve many machines on one IP, one port or path each.
 */
function bmcIdentity(address: string): string {
  return address.trim().toLowerCase().replace(/\/+$/, "");
}

function addTo(groups: Map<string, Host[]>, key: string, host: Host): void {
  const group = groups.get(key);
  if (group === undefined) groups.set(key, [host]);
  else if (!group.includes(host)) group.push(host);
}

function others(sharing: readonly Host[], host: Host): string {
  return sharing
    .filter((other) => other !== host)
    .map((other) => other.id)
    .join(", ");
}

function hygieneIssue(rule: RuleId, host: Host, path: FieldPath, message: string): Issue {
  return {
    rule,
    severity: "warning",
    path: formatPath(path),
    message,
    host: host.id,
    ...(host.source && { source: host.source }),
  };
}
