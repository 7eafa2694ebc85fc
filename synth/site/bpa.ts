import type { DnsLabel } from "../checked.ts";
import { clusterKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import { normalizeMac } from "../mac.ts";
import {
  clusterLabel,
  debianPackage,
  kudPlugins,
  macFormat,
  memory,
  nodeEntries,
  nodeLabel,
  noMasters,
  podSubnet,
  unsupportedClusterType,
} from "../rules/bpa.ts";
import type { WorkerRequestSpec } from "../schema/provisioning.ts";
import { reporter, type Resource } from "./resources.ts";

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

/** What an entry asks of its host; cpu and memory unset mean "any". */
export interface ResourceNeeds {
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

/** Normalises a Provisioning and runs the rules that need nothing but the CR itself (`synth/rules/bpa.ts`). */
export function normalizeProvisioning(resource: Resource<"Provisioning">): {
  provisioning: Provisioning;
  issues: Issue[];
} {
  const { cluster, issues } = clusterLabel(resource);
  const report = reporter(resource, cluster && clusterKey(resource.namespace, cluster));
  const { spec, metadata } = resource.object;
  const clusterType = metadata.labels?.["cluster-type"];
  issues.push(...unsupportedClusterType(clusterType, report));

  const requests = (
    role: Role,
    entries: readonly Record<string, WorkerRequestSpec | null>[] | undefined,
  ): NodeRequest[] =>
    (entries ?? []).flatMap((entry, index) =>
      Object.entries(entry).map(([label, value]) =>
        nodeRequest(role, label, value, ["spec", `${role}s`, index, label]),
      ),
    );
  function nodeRequest(
    role: Role,
    label: string,
    request: WorkerRequestSpec | null,
    path: FieldPath,
  ): NodeRequest {
    issues.push(...nodeLabel(label, path, report));
    if (request === null) return { kind: "sameAsMaster", role, label, path };
    const written = request["mac-address"];
    const mac = written === undefined ? undefined : normalizeMac(written);
    const malformed =
      written !== undefined && mac === undefined ? macFormat(written, path, report) : undefined;
    if (malformed) issues.push(malformed);
    const parsed = request.memory === undefined ? undefined : memory(request.memory, path, report);
    issues.push(...(parsed?.issues ?? []));
    const memoryBytes = parsed?.bytes;
    if (malformed) return { kind: "invalid", role, label, path, macProblem: malformed.message };
    // New keys before the spread: Node 20 builds `{ ...a, newKey }` ~25x slower (decision 0026).
    const needs: ResourceNeeds = {
      sriov: request.sriov === true,
      qat: request.qat === true,
      ...(request.cpu === undefined ? {} : { cpus: request.cpu }),
      ...(memoryBytes === undefined ? {} : { memoryBytes }),
    };
    return mac === undefined
      ? { kind: "resources", role, label, path, ...needs }
      : { kind: "mac", role, label, path, mac, ...needs };
  }

  const masters = requests("master", spec.masters);
  const workers = requests("worker", spec.workers);
  const plugins = spec.KUDPlugins ?? [];
  issues.push(
    ...noMasters(masters, spec.masters !== undefined, report),
    ...nodeEntries(masters, workers, report),
    ...kudPlugins(plugins, report),
    ...podSubnet(spec.PodSubnet, report),
  );
  const provisioning: Provisioning = {
    resource,
    ...(cluster === undefined ? {} : { cluster }),
    masters,
    workers,
    plugins,
    ...(spec.PodSubnet === undefined ? {} : { podSubnet: spec.PodSubnet }),
    supported: clusterType === undefined,
  };
  return { provisioning, issues };
}

/** Normalises a Software CR: the cluster it belongs to and its packages, each name and version checked. */
export function normalizeSoftware(resource: Resource<"Software">): { software: Software; issues: Issue[] } {
  const { cluster, issues } = clusterLabel(resource);
  const report = reporter(resource, cluster && clusterKey(resource.namespace, cluster));
  const packages = (field: "masterSoftware" | "workerSoftware"): Package[] =>
    (resource.object.spec[field] ?? []).flatMap((item, index): Package[] => {
      const path: FieldPath = ["spec", field, index];
      if (typeof item === "string") return checkPackage({ name: item }, path, path);
      return Object.entries(item).flatMap(([name, pin]) =>
        checkPackage({ name, version: pin.version }, [...path, name], [...path, name, "version"]),
      );
    });
  function checkPackage(found: Package, namePath: FieldPath, versionPath: FieldPath): Package[] {
    const problems = debianPackage(found, namePath, versionPath, report);
    issues.push(...problems);
    return problems.length === 0 ? [found] : [];
  }
  const software: Software = {
    resource,
    ...(cluster === undefined ? {} : { cluster }),
    masterPackages: packages("masterSoftware"),
    workerPackages: packages("workerSoftware"),
  };
  return { software, issues };
}

/** Normalises a Cluster glue CR (its references are checked across the site). */
export function normalizeClusterGlue(resource: Resource<"Cluster">): { glue: ClusterGlue; issues: Issue[] } {
  const { cluster, issues } = clusterLabel(resource);
  const { provisioningCR, softwareCR } = resource.object.spec;
  const glue: ClusterGlue = {
    resource,
    ...(cluster === undefined ? {} : { cluster }),
    ...(provisioningCR === undefined ? {} : { provisioningCR }),
    ...(softwareCR === undefined ? {} : { softwareCR }),
  };
  return { glue, issues };
}
