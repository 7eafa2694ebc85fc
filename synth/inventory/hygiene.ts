/**
 * Inventory hygiene Metal3's own webhook does not check (decision 0052): one machine registered twice,
 * as two BareMetalHosts with one BMC address (`bmc-duplicate`), which two clusters could then share.
 * A warning on each host, naming the others: nothing is chosen yet, and which one is wrong the user
 * knows. Two hosts with one address are found where it matters, among the addresses a plan renders
 * (`rules/addresses.ts`).
 */
import { formatPath, type FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import type { Host } from "./host.ts";

const BMC_ADDRESS: FieldPath = ["spec", "bmc", "address"];

/** The hygiene findings of `hosts`, in host order. */
export function hygieneIssues(hosts: readonly Host[]): Issue[] {
  const byBmc = new Map<string, Host[]>();
  for (const host of hosts) {
    if (host.bmc === undefined) continue;
    const key = bmcIdentity(host.bmc.address);
    const sharing = byBmc.get(key);
    if (sharing === undefined) byBmc.set(key, [host]);
    else sharing.push(host);
  }
  const issues: Issue[] = [];
  for (const [address, sharing] of byBmc) {
    if (sharing.length < 2) continue;
    for (const host of sharing)
      issues.push(
        bmcDuplicate(
          host,
          `BareMetalHost ${host.id} has BMC address ${host.bmc?.address ?? address}, as ${others(sharing, host)} ${sharing.length > 2 ? "do" : "does"}: one machine registered twice would serve two clusters; delete the extra BareMetalHost`,
        ),
      );
  }
  return issues.sort((a, b) => compareText(a.host ?? "", b.host ?? "") || compareText(a.message, b.message));
}

/**
 * A BMC address as the machine it reaches: case and a trailing slash aside. The port stays part of
 * it: virtual BMCs (vbmc, sushy-tools) serve many machines on one IP, one port or path each.
 */
function bmcIdentity(address: string): string {
  return address.trim().toLowerCase().replace(/\/+$/, "");
}

function others(sharing: readonly Host[], host: Host): string {
  return sharing
    .filter((other) => other !== host)
    .map((other) => other.id)
    .join(", ");
}

function bmcDuplicate(host: Host, message: string): Issue {
  return {
    rule: "bmc-duplicate",
    severity: "warning",
    path: formatPath(BMC_ADDRESS),
    message,
    host: host.id,
    ...(host.source && { source: host.source }),
  };
}
