import { clusterKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import { macSlip, normalizeMac } from "../mac.ts";
import { cidrProblem } from "../network.ts";
import { parseMemory } from "../quantity.ts";
import { FORMATS, hasFormat } from "../schema/formats.ts";
import type { WorkerRequestSpec } from "../schema/provisioning.ts";
import { reporter, type Resource } from "./resources.ts";
import { DNS1123_LABEL } from "../inventory/selector.ts";

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
  readonly cluster?: string;
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
  readonly cluster?: string;
  readonly masterPackages: readonly Package[];
  readonly workerPackages: readonly Package[];
}

/** A Cluster glue CR after normalisation. */
export interface ClusterGlue {
  readonly resource: Resource<"Cluster">;
  readonly cluster?: string;
  readonly provisioningCR?: string;
  readonly softwareCR?: string;
}

const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?$/;
const DEBIAN_VERSION = /^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;

/** Cluster types upstream BPA knew; metalsynth provisions bare metal only. */
const UNSUPPORTED_CLUSTER_TYPES: Readonly<Record<string, string>> = {
  "virtlet-vm": "virtlet VM clusters are not supported: metalsynth provisions bare-metal hosts only",
};

/** The `mac-format` message: what was written, what a MAC looks like, and the slip when it is a small one. */
function macFormatMessage(text: string): string {
  const slip = macSlip(text);
  return `${JSON.stringify(text)} is not ${FORMATS.mac.expected}${slip === undefined ? "" : ` (${slip})`}`;
}

/** The `cluster` label of a BPA CR, checked; problems become `cluster-label` issues. */
function clusterLabel(
  resource: Resource<"Provisioning" | "Software" | "Cluster">,
  issues: Issue[],
): string | undefined {
  const report = reporter(resource);
  const labels = resource.object.metadata.labels ?? {};
  const cluster = labels.cluster;
  if (cluster === undefined) {
    issues.push(
      report(
        "cluster-label",
        ["metadata", "labels"],
        `${resource.kind} needs label "cluster: <name>" naming its cluster`,
      ),
    );
    return undefined;
  }
  if (!DNS1123_LABEL.test(cluster)) {
    const suggestion = cluster
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 63);
    const hint = suggestion && DNS1123_LABEL.test(suggestion) ? ` (did you mean "${suggestion}"?)` : "";
    issues.push(
      report(
        "cluster-label",
        ["metadata", "labels", "cluster"],
        `"${cluster}" is not a DNS-1123 label: lowercase letters, digits and '-', at most 63${hint}`,
      ),
    );
    return undefined;
  }
  return cluster;
}

/** Normalises a Provisioning and runs the rules that need nothing but the CR itself. */
export function normalizeProvisioning(resource: Resource<"Provisioning">): {
  provisioning: Provisioning;
  issues: Issue[];
} {
  const issues: Issue[] = [];
  const cluster = clusterLabel(resource, issues);
  const report = reporter(resource, cluster && clusterKey(resource.namespace, cluster));
  const { spec, metadata } = resource.object;

  const clusterType = metadata.labels?.["cluster-type"];
  if (clusterType !== undefined) {
    const reason =
      UNSUPPORTED_CLUSTER_TYPES[clusterType] ??
      `cluster-type "${clusterType}" is not supported: remove the label for a bare-metal cluster`;
    issues.push(report("unsupported", ["metadata", "labels", "cluster-type"], reason));
  }

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
    if (!DNS1123_LABEL.test(label)) {
      issues.push(
        report(
          "node-label",
          path,
          `node label "${label}" is not a DNS-1123 label; it becomes the host name in hosts.ini`,
        ),
      );
    }
    if (request === null) return { kind: "sameAsMaster", role, label, path };
    let mac: string | undefined;
    let macProblem: string | undefined;
    if (request["mac-address"] !== undefined) {
      mac = normalizeMac(request["mac-address"]);
      if (mac === undefined) {
        macProblem = macFormatMessage(request["mac-address"]);
        issues.push(report("mac-format", [...path, "mac-address"], macProblem));
      }
    }
    let memoryBytes: number | undefined;
    if (request.memory !== undefined) {
      const parsed = parseMemory(request.memory);
      if ("problem" in parsed) issues.push(report("memory-format", [...path, "memory"], parsed.problem));
      else memoryBytes = parsed.bytes;
    }
    if (macProblem !== undefined) return { kind: "invalid", role, label, path, macProblem };
    const needs: ResourceNeeds = {
      ...(request.cpu === undefined ? {} : { cpus: request.cpu }),
      ...(memoryBytes === undefined ? {} : { memoryBytes }),
      sriov: request.sriov === true,
      qat: request.qat === true,
    };
    return mac === undefined
      ? { kind: "resources", role, label, path, ...needs }
      : { kind: "mac", role, label, path, mac, ...needs };
  }

  const masters = requests("master", spec.masters);
  const workers = requests("worker", spec.workers);
  if (masters.length === 0) {
    issues.push(
      report(
        "no-masters",
        spec.masters ? ["spec", "masters"] : ["spec"],
        "a Provisioning needs at least one entry under spec.masters",
      ),
    );
  }
  checkNodeEntries(masters, workers, report, issues);

  const plugins = spec.KUDPlugins ?? [];
  plugins.forEach((plugin, index) => {
    if (!hasFormat("plugin", plugin)) {
      issues.push(
        report("plugin-name", ["spec", "KUDPlugins", index], `"${plugin}" is not ${FORMATS.plugin.expected}`),
      );
    }
  });
  if (spec.PodSubnet !== undefined) {
    const problem = cidrProblem(spec.PodSubnet);
    if (problem) issues.push(report("pod-subnet", ["spec", "PodSubnet"], problem));
  }
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

/**
 * Node-label and MAC consistency inside one CR. A label may appear under both masters and workers
 * when it is the same host (upstream's "both roles" samples); anything else is ambiguous.
 */
function checkNodeEntries(
  masters: readonly NodeRequest[],
  workers: readonly NodeRequest[],
  report: ReturnType<typeof reporter>,
  issues: Issue[],
): void {
  const mastersByLabel = new Map<string, NodeRequest>();
  for (const master of masters) {
    const earlier = mastersByLabel.get(master.label);
    if (earlier) {
      issues.push(
        report(
          "node-label-duplicate",
          master.path,
          `node label "${master.label}" is already used by ${formatEntry(earlier)}`,
        ),
      );
    } else {
      mastersByLabel.set(master.label, master);
    }
    if (master.kind === "sameAsMaster") {
      issues.push(
        report(
          "node-ref",
          master.path,
          `master "${master.label}" is null: a master needs a mac-address or resource requirements (null entries belong under workers and mean "same host as that master")`,
        ),
      );
    }
  }
  const workersByLabel = new Map<string, NodeRequest>();
  for (const worker of workers) {
    const earlier = workersByLabel.get(worker.label);
    if (earlier) {
      issues.push(
        report(
          "node-label-duplicate",
          worker.path,
          `node label "${worker.label}" is already used by ${formatEntry(earlier)}`,
        ),
      );
      continue;
    }
    workersByLabel.set(worker.label, worker);
    const master = mastersByLabel.get(worker.label);
    if (worker.kind === "sameAsMaster") {
      if (!master) {
        issues.push(
          report(
            "node-ref",
            worker.path,
            `"${worker.label}" is null, meaning "same host as master ${worker.label}", but there is no such master (masters: ${[...mastersByLabel.keys()].join(", ") || "none"})`,
          ),
        );
      }
      continue;
    }
    if (master && !sameHostRequest(master, worker)) {
      issues.push(
        report(
          "node-label-duplicate",
          worker.path,
          `node label "${worker.label}" is also ${formatEntry(master)} with a different host; use the same mac-address, a null entry, or another label`,
        ),
      );
    }
  }
  const labelByMac = new Map<string, NodeRequest>();
  for (const entry of [...masters, ...workers]) {
    if (entry.kind !== "mac") continue;
    const earlier = labelByMac.get(entry.mac);
    if (!earlier) labelByMac.set(entry.mac, entry);
    else if (earlier.label !== entry.label) {
      issues.push(
        report(
          "mac-duplicate",
          [...entry.path, "mac-address"],
          `${entry.mac} is already the MAC of ${formatEntry(earlier)}; one host can't be two nodes`,
        ),
      );
    }
  }
}

function sameHostRequest(master: NodeRequest, worker: NodeRequest): boolean {
  return master.kind === "mac" && worker.kind === "mac" && master.mac === worker.mac;
}

function formatEntry(entry: NodeRequest): string {
  return `${entry.role} "${entry.label}" (${entry.path
    .slice(0, 3)
    .join(".")
    .replace(/\.(\d+)$/, "[$1]")})`;
}

/** Normalises a Software CR: the cluster it belongs to and its packages, each name and version checked. */
export function normalizeSoftware(resource: Resource<"Software">): { software: Software; issues: Issue[] } {
  const issues: Issue[] = [];
  const cluster = clusterLabel(resource, issues);
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
    let valid = true;
    if (!DEBIAN_PACKAGE.test(found.name)) {
      valid = false;
      issues.push(
        report(
          "package-name",
          namePath,
          `${JSON.stringify(found.name)} is not a Debian package name (lowercase letters, digits, + - . ; at least 2 characters)`,
        ),
      );
    }
    if (found.version !== undefined && !DEBIAN_VERSION.test(found.version)) {
      valid = false;
      issues.push(
        report(
          "package-version",
          versionPath,
          `${JSON.stringify(found.version)} is not a Debian version ([epoch:]upstream[-revision], e.g. 1.6-2.1ubuntu3)`,
        ),
      );
    }
    return valid ? [found] : [];
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
  const issues: Issue[] = [];
  const cluster = clusterLabel(resource, issues);
  const { provisioningCR, softwareCR } = resource.object.spec;
  const glue: ClusterGlue = {
    resource,
    ...(cluster === undefined ? {} : { cluster }),
    ...(provisioningCR === undefined ? {} : { provisioningCR }),
    ...(softwareCR === undefined ? {} : { softwareCR }),
  };
  return { glue, issues };
}
