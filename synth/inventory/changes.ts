/**
 * What changed between two inventories, host by host, in the facts metalsynth reads (docs/contract.md §1.3):
 * what `metalsynth inventory pull` shows a reviewer before a new snapshot is committed. Two hosts
 * differ exactly when their canonical snapshot entries differ (see canonical.ts), so a change this
 * module reports is one the snapshot file shows, and nothing else.
 */
import { compareText } from "../issue.ts";
import { canonicalHost, canonicalSecret } from "./canonical.ts";
import { diskText, type Host, type Nic } from "./host.ts";

/** One host that appears, disappears or changes. */
export interface HostChange {
  /** `namespace/name` of the BareMetalHost. */
  readonly host: string;
  readonly status: "added" | "removed" | "changed";
  /** For a changed host, one short line per fact that differs (`nic ens1f0 ip 10.0.0.1 → 10.0.0.2`). */
  readonly changes: readonly string[];
}

/**
 * The hosts of `after` that are new, those of `before` that are gone, and those whose facts differ,
 * sorted by id. Hosts whose facts are equal are left out, however differently their files are written.
 */
export function inventoryChanges(before: readonly Host[], after: readonly Host[]): HostChange[] {
  const old = new Map(before.map((host) => [host.id, host]));
  const next = new Map(after.map((host) => [host.id, host]));
  const changes: HostChange[] = [];
  for (const id of [...new Set([...old.keys(), ...next.keys()])].sort(compareText)) {
    const a = old.get(id);
    const b = next.get(id);
    if (a === undefined) changes.push({ host: id, status: "added", changes: [] });
    else if (b === undefined) changes.push({ host: id, status: "removed", changes: [] });
    else if (!sameFacts(a, b)) changes.push({ host: id, status: "changed", changes: hostChanges(a, b) });
  }
  return changes;
}

/** Whether two hosts would be written the same into a snapshot (their source aside). */
export function sameFacts(a: Host, b: Host): boolean {
  return snapshotEntry(a) === snapshotEntry(b);
}

/** A host's snapshot objects as JSON: their keys are written in one fixed order, so text compares. */
function snapshotEntry(host: Host): string {
  const secret = host.networkData?.found
    ? canonicalSecret(host.networkData.namespace, host.networkData.name, host.networks)
    : undefined;
  return JSON.stringify([canonicalHost(host), secret]);
}

/** The facts of `b` that differ from those of `a`, one line each. */
export function hostChanges(a: Host, b: Host): string[] {
  const lines: string[] = [];
  const value = (what: string, before: string | undefined, after: string | undefined): void => {
    if (before !== after) lines.push(`${what} ${before ?? "unset"} → ${after ?? "unset"}`);
  };
  lines.push(...mapChanges("label", a.labels, b.labels));
  value("boot MAC", a.bootMac, b.bootMac);
  lines.push(...nicChanges(a.nics, b.nics));
  value("cpus", count(a.cpus), count(b.cpus));
  value("cpu arch", a.cpuArch, b.cpuArch);
  value("cpu model", a.cpuModel, b.cpuModel);
  value("cpu flags", a.cpuFlags?.join(" "), b.cpuFlags?.join(" "));
  value("disks", a.disks?.map(diskText).join(", "), b.disks?.map(diskText).join(", "));
  value("memory", memory(a.memoryBytes), memory(b.memoryBytes));
  value("provisioning state", a.provisioningState, b.provisioningState);
  value("bmc address", a.bmc?.address, b.bmc?.address);
  value("bmc credentials", a.bmc?.credentialsName, b.bmc?.credentialsName);
  value("networkData", secretName(a), secretName(b));
  if (a.networkData !== undefined && b.networkData !== undefined)
    value("networkData Secret", found(a), found(b));
  lines.push(...mapChanges("network", a.networks, b.networks));
  // Every fact differs the same way but the NIC order: it matters only where NICs share a MAC or a
  // name, and then it decides which address is used.
  if (lines.length === 0 && !sameFacts(a, b))
    lines.push("nic order (which address a shared MAC or name gets)");
  return lines;
}

/** `label rack r01 → r02`, `label rack=r01 added`, `label rack removed (was r01)`, keys sorted. */
function mapChanges(
  what: string,
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort(compareText);
  return keys.flatMap((key) => {
    const a = Object.hasOwn(before, key) ? before[key] : undefined;
    const b = Object.hasOwn(after, key) ? after[key] : undefined;
    if (a === b) return [];
    if (a === undefined) return [`${what} ${key}=${b ?? ""} added`];
    if (b === undefined) return [`${what} ${key} removed (was ${a})`];
    return [`${what} ${key} ${a} → ${b}`];
  });
}

/**
 * NIC changes: by name where a name has one NIC on both sides (`nic ens1f0 ip a → b`, `nic ens1f0
 * mac a → b`), otherwise as NICs added and removed.
 */
function nicChanges(before: readonly Nic[], after: readonly Nic[]): string[] {
  const lines: string[] = [];
  const names = [...new Set([...before, ...after].map((nic) => nic.name))].sort(compareText);
  for (const name of names) {
    const a = before.filter((nic) => nic.name === name);
    const b = after.filter((nic) => nic.name === name);
    const [one] = a;
    const [other] = b;
    if (a.length === 1 && b.length === 1 && one !== undefined && other !== undefined) {
      const label = `nic ${nicName(one)}`;
      if (one.mac !== other.mac) lines.push(`${label} mac ${one.mac} → ${other.mac}`);
      if (one.ipv4 !== other.ipv4) lines.push(`${label} ip ${one.ipv4 ?? "none"} → ${other.ipv4 ?? "none"}`);
      if (one.ipv6 !== other.ipv6)
        lines.push(`${label} ipv6 ${one.ipv6 ?? "none"} → ${other.ipv6 ?? "none"}`);
      if (one.speedGbps !== other.speedGbps) lines.push(`${label} speed ${speed(one)} → ${speed(other)}`);
      continue;
    }
    const key = (nic: Nic) => [nic.mac, nic.ipv4 ?? "", nic.ipv6 ?? "", nic.speedGbps ?? ""].join(" ");
    const kept = new Set(a.map(key));
    const now = new Set(b.map(key));
    for (const nic of a)
      if (!now.has(key(nic))) lines.push(`nic ${nicName(nic)} removed (${describeNic(nic)})`);
    for (const nic of b)
      if (!kept.has(key(nic))) lines.push(`nic ${nicName(nic)} added (${describeNic(nic)})`);
  }
  return lines;
}

function nicName(nic: Nic): string {
  return nic.name === "" ? "(unnamed)" : nic.name;
}

/** `25 Gbps`, `unknown`. */
function speed(nic: Nic): string {
  return nic.speedGbps === undefined ? "unknown" : `${nic.speedGbps} Gbps`;
}

function describeNic(nic: Nic): string {
  return [nic.mac, nic.ipv4, nic.ipv6].filter((part) => part !== undefined).join(", ");
}

function count(cpus: number | undefined): string {
  return cpus === undefined ? "unknown" : String(cpus);
}

/** `256Gi`, `1536Mi`, `unknown`. */
function memory(bytes: number | undefined): string {
  if (bytes === undefined) return "unknown";
  const mebibytes = bytes / 2 ** 20;
  return mebibytes % 1024 === 0 ? `${mebibytes / 1024}Gi` : `${mebibytes}Mi`;
}

function secretName(host: Host): string | undefined {
  return host.networkData && `${host.networkData.namespace}/${host.networkData.name}`;
}

function found(host: Host): string {
  return host.networkData?.found ? "present" : "missing";
}
