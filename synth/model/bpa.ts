/** A BPA cluster's CRs after normalisation: what planning and the rules read (decision 0049). */
import type { CpuFlag, CpuModelMatch, DnsLabel } from "../checked.ts";
import type { FieldPath } from "../field-path.ts";
import type { Resource } from "./resource.ts";
import type { CPU_ARCHES } from "../schema/hardware.ts";

/** A CPU architecture a node may ask for. */
export type CpuArch = (typeof CPU_ARCHES)[number];

/** A node's part in a BPA cluster. */
export type Role = "master" | "worker";

/** What every `- <label>: {…}` entry of `spec.masters` / `spec.workers` has. */
interface NodeEntry {
  readonly role: Role;
  /** The node label: the host's name in the cluster and in hosts.ini. */
  readonly label: string;
  /** Field path of the entry's value, `["spec", "masters", 0, "master-1"]`. */
  readonly path: FieldPath;
}

/**
 * What an entry or a SIP node set asks of its host's inspected hardware (`hardware`, a metalsynth
 * extension, decision 0065); each field unset means "any".
 */
export interface HardwareNeeds {
  /** `hardware.arch`: the host's `status.hardware.cpu.arch`, exactly. */
  readonly arch?: CpuArch;
  /** `hardware.cpuModel`, folded: text the host's folded `status.hardware.cpu.model` contains. */
  readonly cpuModel?: CpuModelMatch;
  /** `hardware.cpuFlags`: flags the host's `status.hardware.cpu.flags` must all list, sorted, once each. */
  readonly cpuFlags?: readonly CpuFlag[];
  /** `hardware.nicSpeedGbps`: the host's fastest NIC (`status.hardware.nics[].speedGbps`), at least. */
  readonly nicSpeedGbps?: number;
  /** `hardware.disk`: one disk of the host has all of these. */
  readonly disk?: DiskNeeds;
}

/** What one disk of the host must be; at least one field is set. */
export interface DiskNeeds {
  /** `minSizeGibibytes` × 2^30: the disk's `sizeBytes`, at least. */
  readonly minSizeBytes?: number;
  /** The disk's `rotational`, exactly: false asks for a solid-state disk. */
  readonly rotational?: boolean;
}

/** What an entry asks of its host; cpu and memory unset mean "any". */
export interface ResourceNeeds extends HardwareNeeds {
  /** Logical CPUs, at least. */
  readonly cpus?: number;
  /** Memory in bytes, at least. */
  readonly memoryBytes?: number;
  /** The host must be labelled SR-IOV capable (workers only). */
  readonly sriov: boolean;
  /** The host must be labelled QAT capable (workers only). */
  readonly qat: boolean;
}

/** An entry with a mac-address: that host, checked against the resources it asks for. */
export interface MacRequest extends NodeEntry, ResourceNeeds {
  readonly kind: "mac";
  /** Normalised (`aa:bb:cc:dd:ee:ff`). */
  readonly mac: string;
}

/** An entry without a mac-address: any free host that has the resources (best fit). */
export interface ResourceRequest extends NodeEntry, ResourceNeeds {
  readonly kind: "resources";
}

/** A null worker entry (`- master-1:`): the same host as the master with this label. */
export interface SameAsMasterRequest extends NodeEntry {
  readonly kind: "sameAsMaster";
}

/**
 * An entry whose mac-address is malformed (reported as `mac-format`): never planned by resources,
 * but `explain` shows it with this message.
 */
export interface InvalidRequest extends NodeEntry {
  readonly kind: "invalid";
  /** The `mac-format` message. */
  readonly macProblem: string;
}

/** One `- <label>: {…}` entry of `spec.masters` / `spec.workers`, normalised, by how it asks for a host. */
export type NodeRequest = MacRequest | ResourceRequest | SameAsMasterRequest | InvalidRequest;

/** A Provisioning after normalisation: the cluster it builds and each node's request. */
export interface Provisioning {
  readonly resource: Resource<"Provisioning">;
  /** `metadata.labels.cluster`, undefined when missing or invalid (reported as `cluster-label`). */
  readonly cluster?: DnsLabel;
  readonly masters: readonly NodeRequest[];
  readonly workers: readonly NodeRequest[];
  readonly plugins: readonly string[];
  readonly podSubnet?: string;
  /** False for recognised-but-unsupported modes (virtlet VMs): reported, never planned. */
  readonly supported: boolean;
}

/** A Debian package, optionally pinned. */
export interface Package {
  readonly name: string;
  readonly version?: string;
}

/** A Software CR after normalisation. */
export interface Software {
  readonly resource: Resource<"Software">;
  readonly cluster?: DnsLabel;
  readonly masterPackages: readonly Package[];
  readonly workerPackages: readonly Package[];
}

/** A Cluster glue CR after normalisation. */
export interface ClusterGlue {
  readonly resource: Resource<"Cluster">;
  readonly cluster?: DnsLabel;
  readonly provisioningCR?: string;
  readonly softwareCR?: string;
}
