/**
 * Inventory hygiene Metal3's own webhook does not check (decision 0052): one machine registered twice,
 * as two BareMetalHosts with one BMC address (`bmc-duplicate`), which two clusters could then share.
 * A warning on each host, naming the others: nothing is chosen yet, and which one is wrong the user
 * knows. Two hosts with one address are found where it matters, among the addresses a plan renders
 * (`rules/addresses.ts`).
 */
import { formatPath, type FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import type { RuleId } from "../rule-catalogue.ts";
import type { Host } from "./host.ts";

/** The hygiene findings of `hosts`, in host order. */
export function hygieneIssues(hosts: readonly Host[]): Issue[] {
  const byBmc = new Map<string, Host[]>();
  for (const host of hosts) if (host.bmc !== undefined) addTo(byBmc, bmcIdentity(host.bmc.address), host);
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
  return issues.sort((a, b) => compareText(a.host ?? "", b.host ?? "") || compareText(a.message, b.message));
}

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
