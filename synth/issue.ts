/**
 * The rule catalogue's vocabulary: every finding metalsynth reports is an {@link Issue} with a stable
 * rule id (SPEC §2). Issues are values; code throws only for bugs.
 */

/** How bad a finding is: errors stop synth and deny admission, warnings are reported only. */
export type Severity = "error" | "warning";

/**
 * Every rule id with its severity and a one-line summary. Ids are a public contract (CI scripts grep
 * for them), so they never change once released.
 */
export const RULES = {
  "yaml-syntax": {
    severity: "error",
    summary: "file is not valid YAML/JSON, is binary, or expands too many aliases",
  },
  "file-unread": {
    severity: "error",
    summary:
      "a path under specs/ or inventory/ (or a site file) can't be read: a symbolic link that leaves the site, dangles or loops, no permission, not a regular file",
  },
  "no-objects": {
    severity: "warning",
    summary: "a file holds no object metalsynth reads there, so nothing in it is used",
  },
  "too-large": { severity: "error", summary: "document over the Kubernetes object size limit (1.5 MiB)" },
  "unknown-kind": { severity: "error", summary: "document kind/apiVersion is not one metalsynth reads here" },
  "duplicate-object": { severity: "error", summary: "the same kind/namespace/name defined twice" },
  schema: { severity: "error", summary: "CR does not match its schema (unknown field, wrong type)" },
  "cluster-label": { severity: "error", summary: "BPA CR without a valid `cluster` label" },
  "sip-cluster-name": {
    severity: "error",
    summary: "SIPCluster name longer than 63 characters: it becomes the value of a SIP label on its hosts",
  },
  "node-label": { severity: "error", summary: "node label is not a DNS-1123 label (it becomes a host name)" },
  "node-ref": { severity: "error", summary: "a null entry that names no master, or a null master" },
  "cluster-ref": {
    severity: "error",
    summary: "Cluster CR names a Provisioning/Software CR that does not fit",
  },
  "no-masters": { severity: "error", summary: "Provisioning without masters" },
  "node-label-duplicate": { severity: "error", summary: "the same node label twice with different hosts" },
  "mac-format": { severity: "error", summary: "malformed MAC address" },
  "mac-duplicate": { severity: "error", summary: "the same MAC for two different node labels in one CR" },
  "mac-unknown": { severity: "error", summary: "MAC matches no BareMetalHost" },
  "ip-missing": { severity: "error", summary: "the matched NIC / interface has no usable IP" },
  "host-claimed": { severity: "error", summary: "the host already belongs to another cluster" },
  "cpu-insufficient": { severity: "error", summary: "host has fewer CPUs than requested" },
  "memory-insufficient": { severity: "error", summary: "host has less memory than requested" },
  "memory-format": { severity: "error", summary: "memory is not an unambiguous Kubernetes quantity" },
  "sriov-missing": { severity: "error", summary: "host is not labelled SR-IOV capable" },
  "qat-missing": { severity: "error", summary: "host is not labelled QAT capable" },
  "resources-unknown": {
    severity: "warning",
    summary: "requested resource can't be checked (no hardware details)",
  },
  "host-not-ready": { severity: "warning", summary: "host's OS is not installed yet" },
  "no-fit": { severity: "error", summary: "a resource-only entry or a SIP role cannot be satisfied" },
  "plugin-name": { severity: "error", summary: "KUD plugin name is not [a-z0-9][a-z0-9-]*" },
  "pod-subnet": { severity: "error", summary: "PodSubnet is not a valid CIDR" },
  "package-name": { severity: "error", summary: "not a valid Debian package name" },
  "package-version": { severity: "error", summary: "not a valid Debian package version" },
  "selector-invalid": { severity: "error", summary: "bad label selector" },
  "topology-key": {
    severity: "error",
    summary: "topologyKey is not a valid label key, or no host the role's selector matches carries it",
  },
  "node-port": {
    severity: "error",
    summary: "nodePort out of range, reversed/oversized range, or used twice",
  },
  "ssh-key": { severity: "error", summary: "sshAuthorizedKeys entry is not an OpenSSH public key" },
  "secret-inline": { severity: "error", summary: "private key or password inside a CR" },
  unsupported: { severity: "error", summary: "recognised but unsupported mode (e.g. virtlet-vm)" },
  "inventory-invalid": {
    severity: "error",
    summary: "an inventory object can't be used (bad MAC, missing name)",
  },
  "inventory-unmatched": {
    severity: "warning",
    summary:
      "a HardwareData or networkData Secret that matches no BareMetalHost, or a networkData Secret a BareMetalHost names that the inventory lacks",
  },
} as const satisfies Record<string, { severity: Severity; summary: string }>;

/** A stable rule id from {@link RULES}. */
export type RuleId = keyof typeof RULES;

/** Where a finding points in the user's files; lines and columns are 1-based. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** One finding. `path` is a field path such as `spec.masters[0].master-1.mac-address`. */
export interface Issue {
  readonly rule: RuleId;
  readonly severity: Severity;
  /** Field path inside the object, `""` for the whole document. */
  readonly path: string;
  readonly message: string;
  /** `namespace/cluster` the finding belongs to, when it belongs to one. */
  readonly cluster?: string;
  /** `Kind/namespace/name` of the object the finding is about (the webhook reports only its own). */
  readonly object?: string;
  readonly source?: SourcePosition;
}

/** Builds an issue with the catalogue's severity for `rule`. */
export function issue(
  rule: RuleId,
  path: string,
  message: string,
  extra: { cluster?: string; object?: string; source?: SourcePosition } = {},
): Issue {
  return { rule, severity: RULES[rule].severity, path, message, ...extra };
}

/**
 * One finding as text (SPEC §7): `<file>:<line>:<col>: <severity>[<rule>] <path>: <message>`, the
 * path left out for findings about a whole document (decision 0005).
 */
export function issueText(found: Issue): string {
  const where = found.source ? `${found.source.file}:${found.source.line}:${found.source.column}: ` : "";
  const path = found.path === "" ? "" : `${found.path}: `;
  return `${where}${found.severity}[${found.rule}] ${path}${found.message}`;
}

/** True when any issue is an error (warnings never block). */
export function hasErrors(issues: readonly Issue[]): boolean {
  return issues.some((found) => found.severity === "error");
}

/**
 * The report order of SPEC §7: by file, line, column, then rule and path so that findings on the same
 * spot are stable too.
 */
export function compareIssues(a: Issue, b: Issue): number {
  return (
    compareText(a.source?.file ?? "", b.source?.file ?? "") ||
    (a.source?.line ?? 0) - (b.source?.line ?? 0) ||
    (a.source?.column ?? 0) - (b.source?.column ?? 0) ||
    compareText(a.rule, b.rule) ||
    compareText(a.path, b.path) ||
    compareText(a.message, b.message)
  );
}

/** Locale-independent string order (never `localeCompare`: output must not depend on the machine). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
