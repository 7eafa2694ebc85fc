import type { CpuFlag, DnsLabel, DnsSubdomain, IpAddress } from "../checked.ts";
import { clusterKey, type ClusterKey } from "../cluster-key.ts";
import type { SourcePosition } from "../issue.ts";
import type { RuleId } from "../rule-catalogue.ts";
import { formatBytes } from "../quantity.ts";
import { sameData } from "../same-data.ts";

/** One network interface of a host, after de-duplicating dual-stack repeats (docs/contract.md §1.3). */
export interface Nic {
  /** Interface name as the BMH reports it (`enp1s0`), `""` when unknown. */
  readonly name: string;
  /** Normalised MAC (`aa:bb:cc:dd:ee:ff`). */
  readonly mac: string;
  /** The interface's IPv4 address, if any (link-local IPv6 `fe80::…%if` is ignored). */
  readonly ipv4?: IpAddress;
  /** A global IPv6 address, used only when the NIC has no IPv4. */
  readonly ipv6?: IpAddress;
  /** `speedGbps` as inspection reports it; `undefined` when it reports none (or 0, Ironic's unknown). */
  readonly speedGbps?: number;
}

/** One disk of a host, from `status.hardware.storage`. */
export interface Disk {
  readonly sizeBytes: number;
  /** `undefined` when inspection does not say. */
  readonly rotational?: boolean;
}

/** A disk in words: `960Gi solid-state`, `4Ti rotational`, `500Gi`. */
export function diskText(disk: Disk): string {
  const kind = disk.rotational === undefined ? "" : disk.rotational ? " rotational" : " solid-state";
  return `${formatBytes(disk.sizeBytes)}${kind}`;
}

/** The networkData Secret a BareMetalHost names in `spec.networkData`. */
export interface NetworkDataRef {
  /** The reference's namespace, or the host's own when the reference has none. */
  readonly namespace: string;
  readonly name: string;
  /**
   * Whether the snapshot held that Secret ({@link Host.networks} then has its addresses). Kept so an
   * inventory can be written back without losing the difference between a Secret with no addresses
   * and a missing one (`metalsynth inventory pull`).
   */
  readonly found: boolean;
}

/** The SIP labels that say which SIPCluster a host serves today. */
export interface SipOwnership {
  readonly namespace: string;
  readonly name: string;
  readonly nodeType: string;
}

/**
 * The SIP labels of a host that carries some of the three but not all: set by hand, or left half
 * applied or half removed. Airship SIP counts a host with `cluster-name` as taken, so metalsynth
 * counts any partial set as a claim (decision 0032): never a free host.
 */
export interface PartialSipLabels {
  readonly namespace?: string;
  readonly name?: string;
  readonly nodeType?: string;
}

/**
 * Why a host can take no new node (docs/contract.md §1.3, decision 0052), one code per family of facts;
 * `contested`: the webhook's Allocations disagree about it (decision 0056).
 */
export type UnavailableReason =
  "consumed" | "deleting" | "off" | "broken" | "paused" | "detached" | "contested";

/** One reason a host is not available, with the BareMetalHost fields that say so, in their own words. */
export interface Unavailable {
  readonly reason: UnavailableReason;
  /** `spec.consumerRef: Metal3Machine edge-a/worker-0`, `status.operationalStatus: error`. */
  readonly fact: string;
}

/** What a BareMetalHost's `spec.consumerRef` names; the kind is `consumer` when the ref has none. */
export interface ConsumerRef {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/**
 * The availability facts of a BareMetalHost that is not simply free to use, as Cluster API Provider
 * Metal3 reads them before it chooses a host (consumer, deletion, power, errors, pause and detach
 * annotations). Only what makes the host unavailable is kept, so a healthy host has none and an
 * inventory snapshot of it does not change when it powers on.
 */
export interface Availability {
  /** `spec.consumerRef`: who consumes the host (a Cluster API provider's machine, usually). */
  readonly consumer?: ConsumerRef;
  /** `metadata.deletionTimestamp`: the host is being deleted. */
  readonly deletionTimestamp?: string;
  /** `spec.online: false`. */
  readonly offline?: true;
  /** `status.poweredOn: false`. */
  readonly poweredOff?: true;
  /** `status.operationalStatus` when it is `error` or `detached`. */
  readonly operationalStatus?: string;
  /** `status.errorType`, when set. */
  readonly errorType?: string;
  /** The `baremetalhost.metal3.io/paused` annotation's value, when the host has it. */
  readonly paused?: string;
  /** The `baremetalhost.metal3.io/detached` annotation's value, when the host has it. */
  readonly detached?: string;
  /** What the facts above and the provisioning state mean, consumer first: never empty. */
  readonly reasons: readonly Unavailable[];
}

/**
 * The facts metalsynth uses about one BareMetalHost (docs/contract.md §1.3), normalised once at load time so
 * rules and planning never look at raw YAML.
 */
export interface Host {
  /** `namespace/name`: the stable identity and the tie-break key of every ordering. */
  readonly id: string;
  /** Checked at load: it reaches object namespaces and the lock. */
  readonly namespace: DnsLabel;
  /** Checked at load: it reaches haproxy.cfg, ssh_config, host tables and the lock. */
  readonly name: DnsSubdomain;
  readonly labels: Readonly<Record<string, string>>;
  /** `spec.bootMACAddress`, normalised: the NIC whose IP a resource-chosen node gets. */
  readonly bootMac?: string;
  /** Every distinct MAC (boot MAC and all NICs), normalised, sorted. */
  readonly macs: readonly string[];
  /** NICs from `status.hardware.nics` (or the HardwareData), one per MAC+name. */
  readonly nics: readonly Nic[];
  /** Logical CPUs (`hardware.cpu.count`); `undefined` means unknown, never 0. */
  readonly cpus?: number;
  /** RAM in bytes (`hardware.ramMebibytes` × 2^20); `undefined` means unknown. */
  readonly memoryBytes?: number;
  /** `hardware.cpu.arch` (`x86_64`, `aarch64`); `undefined` means unknown. */
  readonly cpuArch?: string;
  /** `hardware.cpu.model` as reported (`Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz`); `undefined` means unknown. */
  readonly cpuModel?: string;
  /** `hardware.cpu.flags`, lower case, sorted, once each; `undefined` when the inspection lists none. */
  readonly cpuFlags?: readonly CpuFlag[];
  /** `hardware.storage`, smallest first; `undefined` when the inspection lists no disk of known size. */
  readonly disks?: readonly Disk[];
  /** `feature.metalsynth.io/sriov: "true"` */
  readonly sriov: boolean;
  /** `feature.metalsynth.io/qat: "true"` */
  readonly qat: boolean;
  /** `status.provisioning.state`, `undefined` when the snapshot has no status. */
  readonly provisioningState?: string;
  /** True when the state is `provisioned` or `externally provisioned`. */
  readonly osInstalled: boolean;
  /** Why the host can take no new node; `undefined` when nothing says so (decision 0052). */
  readonly availability?: Availability;
  /** networkData `networks[].id` → `ip_address`, from the Secret named by `spec.networkData`. */
  readonly networks: Readonly<Record<string, IpAddress>>;
  /** `spec.networkData`, when the host names a Secret. */
  readonly networkData?: NetworkDataRef;
  /** `spec.bmc.address` and the credentials Secret's name (referenced, never read). */
  readonly bmc?: { readonly address: string; readonly credentialsName?: DnsSubdomain };
  /** Current SIP owner from the host's labels, if all three labels are present. */
  readonly sipOwner?: SipOwnership;
  /** The SIP labels the host has when it has some but not all three (then `sipOwner` is unset). */
  readonly sipPartial?: PartialSipLabels;
  /** Where the BMH was defined, for messages. */
  readonly source?: SourcePosition;
}

/**
 * A BareMetalHost the loader set aside because one of its facts failed its check (a name that is not
 * a Kubernetes name, an address that is not one address, a MAC another host has too): it is not in
 * the inventory, so no cluster gets it, and a CR that names it by MAC is told why (decision 0031).
 */
export interface SetAsideHost {
  /** `namespace/name` as written (possibly not a valid name: that may be why it is set aside). */
  readonly id: string;
  /** Its MACs, normalised, so a CR naming one hears why the host can't serve. */
  readonly macs: readonly string[];
  /** The rule its first bad fact broke. */
  readonly rule: RuleId;
  /** What is wrong with it, for the CR's finding. */
  readonly reason: string;
  readonly source?: SourcePosition;
}

/**
 * Why `host` can take no new node of `cluster`: every reason, except a consumer when `cluster` holds
 * the host already (its machine provider consuming a host metalsynth gave it is the plan working).
 */
export function unavailableFor(host: Host, holdsIt: boolean): readonly Unavailable[] {
  const reasons = host.availability?.reasons ?? NOTHING_UNAVAILABLE;
  return holdsIt && reasons.some((found) => found.reason === "consumed")
    ? reasons.filter((found) => found.reason !== "consumed")
    : reasons;
}

const NOTHING_UNAVAILABLE: readonly Unavailable[] = Object.freeze([]);

/** The reasons as a message words them: `spec.online: false; status.poweredOn: false`. */
export function unavailableText(reasons: readonly Unavailable[]): string {
  return reasons.map((found) => found.fact).join("; ");
}

/**
 * Whether two reads of a host found the same facts (and the same source position): field by field,
 * for the webhook, which asks it of every host on every re-read. Stricter than `sameFacts`
 * (changes.ts), which compares the hosts' snapshot entries for `inventory pull`: 64 ms against
 * 320 ms for 10,000 hosts. A difference only this one sees costs an evaluation, nothing more.
 */
export function sameHost(a: Host, b: Host): boolean {
  return sameData(a, b);
}

/**
 * The SIPCluster the host's SIP labels assign it to, if they do: all three labels, or a partial set
 * that names the cluster's namespace and name (the role is unknown, but the owner is not).
 */
export function sipOwnerKey(host: Host): ClusterKey | undefined {
  const owner = host.sipOwner ?? host.sipPartial;
  return owner?.namespace !== undefined && owner.name !== undefined
    ? clusterKey(owner.namespace, owner.name)
    : undefined;
}

/** The IP for a MAC (docs/contract.md §1.3): the IPv4 of the NIC with that MAC, else its global IPv6. */
export function ipForMac(host: Host, mac: string): IpAddress | undefined {
  const nics = host.nics.filter((nic) => nic.mac === mac);
  return nics.find((nic) => nic.ipv4)?.ipv4 ?? nics.find((nic) => nic.ipv6)?.ipv6;
}

/**
 * The IP for a SIP `nodeInterfaceId` (docs/contract.md §1.3): the networkData network with that id, else the IPv4
 * of the NIC whose name equals the id.
 */
export function ipForInterface(host: Host, interfaceId: string): IpAddress | undefined {
  return host.networks[interfaceId] ?? host.nics.find((nic) => nic.name === interfaceId && nic.ipv4)?.ipv4;
}
