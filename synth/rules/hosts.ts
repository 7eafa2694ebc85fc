/**
 * Rules that hold a request against the inventory: the host a MAC names, or the host planning chose,
 * must exist, belong to no other cluster, have an address, have what the entry asks for and be
 * installed; and `no-fit` when no host will do. Planning decides which host; these say what is wrong.
 */
import { formatPath, type FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import { ipForMac, type Host } from "../inventory/host.ts";
import type { Inventory } from "../inventory/inventory.ts";
import { macEntryRule, rejections } from "./filters.ts";
import type { HostFilter } from "./filters/plugin.ts";
import type { MacRequest } from "../model/bpa.ts";
import type { Derived, PlanCache } from "../model/plan-cache.ts";
import type { Reporter } from "../model/resource.ts";
import type { SipRole } from "../model/sip.ts";

/**
 * `mac-unknown`: the MAC names no host; the message suggests the closest MAC the inventory has. When
 * the MAC is one of a host the loader set aside (decision 0031), the finding is that host's rule
 * (`name-invalid`, `address-invalid`, `inventory-invalid`) as an error: the CR needs a host that
 * can't serve, and says which and why.
 */
export function macUnknown(
  inventory: Pick<Inventory, "setAsideByMac" | "closestMac" | "hosts">,
  mac: string,
  path: FieldPath,
  report: Reporter,
  cache: PlanCache,
): Issue {
  const aside = inventory.setAsideByMac(mac);
  if (aside !== undefined) {
    const where = aside.source ? ` (${aside.source.file}:${aside.source.line})` : "";
    return {
      host: aside.id,
      ...report(
        aside.rule,
        [...path, "mac-address"],
        `${mac} is a MAC of BareMetalHost ${JSON.stringify(aside.id)}${where}, which is set aside: ${aside.reason}; fix the host in the inventory`,
      ),
    };
  }
  const closest = inventory.closestMac(mac);
  const hint = closest ? ` (closest: ${closest.mac} on ${closest.host.id})` : " (the inventory has no hosts)";
  return report(
    "mac-unknown",
    [...path, "mac-address"],
    `${mac} matches no BareMetalHost${hint}${uninspectedHint(inventory, cache)}`,
  );
}

/** `ip-missing` for a MAC entry: the NIC with that MAC has no usable address. */
export function macWithoutIp(host: Host, mac: string, path: FieldPath, report: Reporter): Issue[] {
  if (ipForMac(host, mac) !== undefined) return [];
  const onHost = aboutHost(report, host);
  const macPath = [...path, "mac-address"];
  if (!inspected(host)) {
    return [
      onHost(
        "ip-missing",
        macPath,
        `NIC ${mac} of host ${host.id} has no usable IP address: host ${host.id} has not been inspected yet (no hardware details, no NIC IPs): take a new snapshot once inspection is done`,
      ),
    ];
  }
  const withIp = host.nics
    .filter((nic) => nic.ipv4)
    .map((nic) => `${nic.mac} (${nic.name || "unnamed"}, ${nic.ipv4})`);
  const hint =
    withIp.length > 0 ? `; NICs with an IPv4: ${withIp.join(", ")}` : "; the host reports no IPv4 on any NIC";
  return [onHost("ip-missing", macPath, `NIC ${mac} of host ${host.id} has no usable IP address${hint}`)];
}

/** `ip-missing` for a host chosen by resources: it has no address hosts.ini could use. */
export function chosenHostWithoutIp(
  host: Host,
  ip: string | undefined,
  subject: string,
  path: FieldPath,
  report: Reporter,
): Issue[] {
  if (ip !== undefined) return [];
  const onHost = aboutHost(report, host);
  return [
    onHost("ip-missing", path, `host ${host.id}, chosen for ${subject}, reports no IP address on any NIC`),
  ];
}

/**
 * `cpu-insufficient`, `memory-insufficient`, `sriov-missing`, `qat-missing` and `resources-unknown`:
 * the host a MAC entry names, through the same filters best fit uses (`needs`: the entry's
 * `resourceFilters`), each rejection found in the words of the filter that made it (`rules/filters/`).
 */
export function missingResources(
  request: MacRequest,
  needs: readonly HostFilter[],
  host: Host,
  report: Reporter,
): Issue[] {
  const onHost = aboutHost(report, host);
  return rejections(needs, host).flatMap((found) => {
    const target = macEntryRule(found);
    if (target === undefined) return [];
    const { rule, message } = target.finding(found, host);
    const field = typeof target.field === "string" ? [target.field] : target.field;
    return [onHost(rule, [...request.path, ...field], message)];
  });
}

/** `no-fit`: no free host satisfies a resource-only entry; `histogram` says why, host by host. */
export function nodeNoFit(subject: string, histogram: string, path: FieldPath, report: Reporter): Issue {
  return report("no-fit", path, `no host for ${subject}: ${histogram}`);
}

/** `no-fit`: a role found fewer free matching hosts than it asks for; `histogram` says why. */
export function roleNoFit(role: SipRole, found: number, histogram: string, report: Reporter): Issue {
  const wanted = role.active + role.standby;
  return report(
    "no-fit",
    role.path,
    `role ${role.role} needs ${wanted} hosts (active ${role.active} + standby ${role.standby}), found ${found}: ${histogram}`,
  );
}

/** `host-not-ready`: KUD installs on an OS that is already there. */
export function hostNotReady(host: Host, path: FieldPath, report: Reporter): Issue[] {
  if (host.osInstalled) return [];
  const onHost = aboutHost(report, host);
  const state =
    host.provisioningState === undefined
      ? "has no provisioning state yet (no status: not inspected or provisioned)"
      : `is in provisioning state "${host.provisioningState}"`;
  return [
    onHost(
      "host-not-ready",
      path,
      `host ${host.id} ${state}; KUD needs an installed OS (provisioned or externally provisioned)`,
    ),
  ];
}

/**
 * `host-claimed` for a MAC entry: the host it names already belongs to another cluster (`why` it
 * does), or another cluster's MAC entry names it too and no lock decides between them (the first
 * cluster key keeps it, `requestedIn` that cluster's CR).
 */
export function macHostClaimed(
  host: Host,
  mac: string,
  holder: { readonly cluster: string } & ({ readonly why: string } | { readonly requestedIn: string }),
  path: FieldPath,
  report: Reporter,
): Issue {
  const onHost = aboutHost(report, host);
  const taken =
    "why" in holder
      ? `already belongs to ${holder.cluster}: ${holder.why}`
      : `is already requested by mac-address for cluster ${holder.cluster} in ${holder.requestedIn}; a host belongs to at most one cluster`;
  return onHost("host-claimed", [...path, "mac-address"], `host ${host.id} (${mac}) ${taken}`);
}

/**
 * `mac-duplicate` for two MACs of one host: entries under two node labels of one CR name the same
 * host by different NICs, so it would be two nodes. The same MAC twice is found in the CR alone
 * (`nodeEntries` in `bpa.ts`); this case needs the inventory.
 */
export function hostNamedTwice(
  host: Host,
  request: MacRequest,
  earlier: MacRequest,
  report: Reporter,
): Issue {
  const entry = `${earlier.role} "${earlier.label}" (${formatPath(earlier.path.slice(0, 3))})`;
  return aboutHost(report, host)(
    "mac-duplicate",
    [...request.path, "mac-address"],
    `${request.mac} is a NIC of host ${host.id}, which ${entry} names by ${earlier.mac}; one host can't be two nodes`,
  );
}

/** `report`, tagging each finding with the host it is about, so the site map can mark that host. */
function aboutHost(report: Reporter, host: Host): Reporter {
  return (rule, path, message) => ({ host: host.id, ...report(rule, path, message) });
}

/**
 * Whether the BMH's hardware was inspected: without `status.hardware` (or a HardwareData) the
 * snapshot knows nothing but the boot MAC, so neither resources nor NIC addresses can be read.
 */
function inspected(host: Host): boolean {
  return host.nics.length > 0 || host.cpus !== undefined || host.memoryBytes !== undefined;
}

/** The hosts of an inventory (by its host list) not inspected yet, listed once a plan on the first unknown MAC. */
const UNINSPECTED: Derived<readonly Host[], readonly Host[]> = {
  derive: (hosts) => hosts.filter((host) => !inspected(host)),
};

/**
 * For `mac-unknown`: hosts not inspected yet list no NICs beyond their boot MAC, so the MAC may well
 * be one of theirs; the message says so instead of letting the closest MAC look like the answer.
 */
function uninspectedHint(inventory: Pick<Inventory, "hosts">, cache: PlanCache): string {
  const hosts = cache.get(UNINSPECTED, inventory.hosts);
  if (hosts.length === 0) return "";
  const named = hosts.slice(0, 3).map((host) => host.id);
  const more = hosts.length > named.length ? `, … (${hosts.length} in all)` : "";
  const count = hosts.length === 1 ? "1 host has" : `${hosts.length} hosts have`;
  const nics = hosts.length === 1 ? "its NICs are" : "their NICs are";
  return `; ${count} not been inspected yet, so ${nics} unknown: ${named.join(", ")}${more}`;
}
