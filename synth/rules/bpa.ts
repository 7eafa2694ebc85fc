/**
 * The rules of the BPA kinds that need nothing but the CR itself (docs/contract.md §2): the `cluster` label,
 * node entries, MAC and memory syntax, KUD plugins, the pod subnet, Debian packages. The normalisers
 * in `synth/site/bpa.ts` call them as they read a CR.
 */
import { parseDnsLabel, type DnsLabel } from "../checked.ts";
import type { FieldPath } from "../field-path.ts";
import { HOSTS_INI_GROUPS } from "../hosts-ini.ts";
import type { Issue } from "../issue.ts";
import { macSlip } from "../mac.ts";
import { cidrProblem } from "../network.ts";
import { parseMemory } from "../quantity.ts";
import { FORMATS, hasFormat } from "../schema/formats.ts";
import type { NodeRequest, Package } from "../model/bpa.ts";
import { reporter } from "./reporter.ts";
import type { Reporter, Resource } from "../model/resource.ts";

const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?$/;
const DEBIAN_VERSION = /^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;

/** Cluster types upstream BPA knew; metalsynth provisions bare metal only. */
const UNSUPPORTED_CLUSTER_TYPES: Readonly<Record<string, string>> = {
  "virtlet-vm": "virtlet VM clusters are not supported: metalsynth provisions bare-metal hosts only",
};

/** `cluster-label`: the `cluster` label of a BPA CR, when it is a valid one. */
export function clusterLabel(resource: Resource<"Provisioning" | "Software" | "Cluster">): {
  cluster?: DnsLabel;
  issues: Issue[];
} {
  const report = reporter(resource);
  const labels = resource.object.metadata.labels ?? {};
  const cluster = labels.cluster;
  if (cluster === undefined) {
    return {
      issues: [
        report(
          "cluster-label",
          ["metadata", "labels"],
          `${resource.kind} needs label "cluster: <name>" naming its cluster`,
        ),
      ],
    };
  }
  const checked = parseDnsLabel(cluster);
  if (checked === undefined) {
    const suggestion = cluster
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 63);
    const hint = suggestion && parseDnsLabel(suggestion) ? ` (did you mean "${suggestion}"?)` : "";
    return {
      issues: [
        report(
          "cluster-label",
          ["metadata", "labels", "cluster"],
          `"${cluster}" is not a DNS-1123 label: lowercase letters, digits and '-', at most 63${hint}`,
        ),
      ],
    };
  }
  return { cluster: checked, issues: [] };
}

/** `unsupported`: a `cluster-type` label (upstream's VM mode) metalsynth does not provision. */
export function unsupportedClusterType(clusterType: string | undefined, report: Reporter): Issue[] {
  if (clusterType === undefined) return [];
  const reason =
    UNSUPPORTED_CLUSTER_TYPES[clusterType] ??
    `cluster-type "${clusterType}" is not supported: remove the label for a bare-metal cluster`;
  return [report("unsupported", ["metadata", "labels", "cluster-type"], reason)];
}

/**
 * `node-label`: the label becomes the host name in hosts.ini, so it must be a DNS-1123 label and not
 * the name of one of its groups.
 */
export function nodeLabel(label: string, path: FieldPath, report: Reporter): Issue[] {
  if (HOSTS_INI_GROUPS.has(label)) {
    return [
      report(
        "node-label",
        path,
        `node label "${label}" is the name of a group of hosts.ini; Ansible would read the host as that group (choose another name)`,
      ),
    ];
  }
  if (parseDnsLabel(label) !== undefined) return [];
  return [
    report(
      "node-label",
      path,
      `node label "${label}" is not a DNS-1123 label; it becomes the host name in hosts.ini`,
    ),
  ];
}

/**
 * `mac-format`: what was written, what a MAC looks like, and the slip when it is a small one. The
 * caller has found that `text` does not normalise.
 */
export function macFormat(text: string, path: FieldPath, report: Reporter): Issue {
  const slip = macSlip(text);
  return report(
    "mac-format",
    [...path, "mac-address"],
    `${JSON.stringify(text)} is not ${FORMATS.mac.expected}${slip === undefined ? "" : ` (${slip})`}`,
  );
}

/** `memory-format`: the entry's memory in bytes, unless it is not an unambiguous quantity. */
export function memory(
  value: string | number,
  path: FieldPath,
  report: Reporter,
): { bytes?: number; issues: Issue[] } {
  const parsed = parseMemory(value);
  if ("problem" in parsed) return { issues: [report("memory-format", [...path, "memory"], parsed.problem)] };
  return { bytes: parsed.bytes, issues: [] };
}

/** `no-masters`: a Provisioning builds nothing without a master. */
export function noMasters(masters: readonly NodeRequest[], written: boolean, report: Reporter): Issue[] {
  if (masters.length > 0) return [];
  return [
    report(
      "no-masters",
      written ? ["spec", "masters"] : ["spec"],
      "a Provisioning needs at least one entry under spec.masters",
    ),
  ];
}

/** `plugin-name`: each KUD plugin is passed to the installer as one argument. */
export function kudPlugins(plugins: readonly string[], report: Reporter): Issue[] {
  return plugins.flatMap((plugin, index) =>
    hasFormat("plugin", plugin)
      ? []
      : [
          report(
            "plugin-name",
            ["spec", "KUDPlugins", index],
            `"${plugin}" is not ${FORMATS.plugin.expected}`,
          ),
        ],
  );
}

/** `pod-subnet`: the PodSubnet must be a CIDR. */
export function podSubnet(subnet: string | undefined, report: Reporter): Issue[] {
  const problem = subnet === undefined ? undefined : cidrProblem(subnet);
  return problem ? [report("pod-subnet", ["spec", "PodSubnet"], problem)] : [];
}

/**
 * `node-label-duplicate`, `node-ref`, `mac-duplicate`: node-label and MAC consistency inside one CR. A label may appear under both masters and workers
 * when it is the same host (upstream's "both roles" samples); anything else is ambiguous.
 */
export function nodeEntries(
  masters: readonly NodeRequest[],
  workers: readonly NodeRequest[],
  report: Reporter,
): Issue[] {
  const issues: Issue[] = [];
  // The first entry of a label within its list is the one later entries are compared with.
  const firstOfLabel = (byLabel: Map<string, NodeRequest>, entry: NodeRequest): boolean => {
    const earlier = byLabel.get(entry.label);
    if (!earlier) {
      byLabel.set(entry.label, entry);
      return true;
    }
    issues.push(
      report(
        "node-label-duplicate",
        entry.path,
        `node label "${entry.label}" is already used by ${formatEntry(earlier)}`,
      ),
    );
    return false;
  };
  const mastersByLabel = new Map<string, NodeRequest>();
  for (const master of masters) {
    firstOfLabel(mastersByLabel, master);
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
    if (!firstOfLabel(workersByLabel, worker)) continue;
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
  return issues;
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

/** `package-name`, `package-version`: Debian syntax, so nothing but a package reaches the install script. */
export function debianPackage(
  found: Package,
  namePath: FieldPath,
  versionPath: FieldPath,
  report: Reporter,
): Issue[] {
  const issues: Issue[] = [];
  if (!DEBIAN_PACKAGE.test(found.name)) {
    issues.push(
      report(
        "package-name",
        namePath,
        `${JSON.stringify(found.name)} is not a Debian package name (lowercase letters, digits, + - . ; at least 2 characters)`,
      ),
    );
  }
  if (found.version !== undefined && !DEBIAN_VERSION.test(found.version)) {
    issues.push(
      report(
        "package-version",
        versionPath,
        `${JSON.stringify(found.version)} is not a Debian version ([epoch:]upstream[-revision], e.g. 1.6-2.1ubuntu3)`,
      ),
    );
  }
  return issues;
}
