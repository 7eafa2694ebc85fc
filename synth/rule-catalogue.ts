/**
 * The rule catalogue (docs/contract.md §2): every rule id with its severity, a one-line summary and the module
 * that holds its check. The rules proper live in `synth/rules/`, one module per family: `bpa.ts`
 * (Provisioning, Software, Cluster CRs), `sip.ts` (SIPCluster), `site.ts` (across CRs), `hosts.ts`
 * (a request against the inventory), `names.ts` (what clusters render), `schema.ts` and `secrets.ts`
 * (reading a CR); a host filter's plugin in `rules/filters/` reports what the host a MAC entry names
 * lacks. Findings about the input files themselves (`yaml-syntax`, `too-large`,
 * `file-unread`, `no-objects`, `inventory-*`) are made by the readers that meet them, named here.
 * Every layer of synth/ reports findings, so the catalogue sits under all of them (decision 0049).
 */

/** How bad a finding is: errors stop synth and deny admission, warnings are reported only. */
export type Severity = "error" | "warning";

/**
 * Every rule by id. Ids are a public contract (CI scripts grep for them), so they never change once
 * released; `module` is the repository path of the code that reports it.
 */
export const RULES = {
  "yaml-syntax": {
    severity: "error",
    summary: "file is not valid YAML/JSON, is binary, or expands too many aliases",
    module: "synth/codec/read-documents.ts",
  },
  "file-unread": {
    severity: "error",
    summary:
      "a path under specs/ or inventory/ (or a site file) can't be read: a symbolic link that leaves the site, dangles or loops, no permission, not a regular file",
    module: "gitops/files.ts",
  },
  "no-objects": {
    severity: "warning",
    summary: "a file holds no object metalsynth reads there, so nothing in it is used",
    module: "gitops/site-reader.ts",
  },
  "too-large": {
    severity: "error",
    summary: "document over the Kubernetes object size limit (1.5 MiB)",
    module: "synth/documents.ts",
  },
  "unknown-kind": {
    severity: "error",
    summary: "document kind/apiVersion is not one metalsynth reads here",
    module: "synth/rules/schema.ts",
  },
  "duplicate-object": {
    severity: "error",
    summary: "the same kind/namespace/name defined twice",
    module: "synth/rules/site.ts",
  },
  schema: {
    severity: "error",
    summary: "CR does not match its schema (unknown field, wrong type)",
    module: "synth/rules/schema.ts",
  },
  "cluster-label": {
    severity: "error",
    summary: "BPA CR without a valid `cluster` label",
    module: "synth/rules/bpa.ts",
  },
  "sip-cluster-name": {
    severity: "error",
    summary:
      "SIPCluster name is not a DNS-1123 label: it becomes the value of a SIP label on its hosts and names its Services",
    module: "synth/rules/sip.ts",
  },
  "node-label": {
    severity: "error",
    summary:
      "node label is not a DNS-1123 label (it becomes a host name), or is the name of a hosts.ini group",
    module: "synth/rules/bpa.ts",
  },
  "node-ref": {
    severity: "error",
    summary: "a null entry that names no master, or a null master",
    module: "synth/rules/bpa.ts",
  },
  "cluster-ref": {
    severity: "error",
    summary: "Cluster CR names a Provisioning/Software CR that does not fit",
    module: "synth/rules/site.ts",
  },
  "no-masters": { severity: "error", summary: "Provisioning without masters", module: "synth/rules/bpa.ts" },
  "node-label-duplicate": {
    severity: "error",
    summary: "the same node label twice with different hosts",
    module: "synth/rules/bpa.ts",
  },
  "mac-format": { severity: "error", summary: "malformed MAC address", module: "synth/rules/bpa.ts" },
  "mac-duplicate": {
    severity: "error",
    // Two MACs of one host under two labels is the same mistake; only the inventory shows it (hosts.ts).
    summary: "the same MAC (or two MACs of one host) for two different node labels in one CR",
    module: "synth/rules/bpa.ts",
  },
  "mac-unknown": {
    severity: "error",
    summary: "MAC matches no BareMetalHost",
    module: "synth/rules/hosts.ts",
  },
  "ip-missing": {
    severity: "error",
    summary: "the matched NIC / interface has no usable IP",
    module: "synth/rules/hosts.ts",
  },
  "host-claimed": {
    severity: "error",
    summary: "the host already belongs to another cluster",
    module: "synth/rules/hosts.ts",
  },
  "cpu-insufficient": {
    severity: "error",
    summary: "host has fewer CPUs than requested",
    module: "synth/rules/filters/cpus.ts",
  },
  "memory-insufficient": {
    severity: "error",
    summary: "host has less memory than requested",
    module: "synth/rules/filters/memory.ts",
  },
  "memory-format": {
    severity: "error",
    summary: "memory is not an unambiguous Kubernetes quantity",
    module: "synth/rules/bpa.ts",
  },
  "sriov-missing": {
    severity: "error",
    summary: "host is not labelled SR-IOV capable",
    module: "synth/rules/filters/sriov.ts",
  },
  "qat-missing": {
    severity: "error",
    summary: "host is not labelled QAT capable",
    module: "synth/rules/filters/qat.ts",
  },
  "arch-mismatch": {
    severity: "error",
    summary: "host's CPU architecture is not the one its entry's hardware.arch asks for",
    module: "synth/rules/filters/arch.ts",
  },
  "cpu-model-mismatch": {
    severity: "error",
    summary: "host's CPU model does not contain its entry's hardware.cpuModel",
    module: "synth/rules/filters/cpu-model.ts",
  },
  "cpu-flags-missing": {
    severity: "error",
    summary: "host's CPU lacks a flag its entry's hardware.cpuFlags asks for",
    module: "synth/rules/filters/cpu-flags.ts",
  },
  "nic-speed-insufficient": {
    severity: "error",
    summary: "host has no NIC as fast as its entry's hardware.nicSpeedGbps",
    module: "synth/rules/filters/nic-speed.ts",
  },
  "disk-insufficient": {
    severity: "error",
    summary: "host has no disk of the size and kind its entry's hardware.disk asks for",
    module: "synth/rules/filters/disk.ts",
  },
  "resources-unknown": {
    severity: "warning",
    summary: "requested resource can't be checked (no hardware details)",
    module: "synth/rules/filters/plugin.ts",
  },
  "host-not-ready": {
    severity: "warning",
    summary: "host's OS is not installed yet",
    module: "synth/rules/hosts.ts",
  },
  "no-fit": {
    severity: "error",
    summary: "a resource-only entry or a SIP role cannot be satisfied",
    module: "synth/rules/hosts.ts",
  },
  "plugin-name": {
    severity: "error",
    summary: "KUD plugin name is not [a-z0-9][a-z0-9-]*",
    module: "synth/rules/bpa.ts",
  },
  "pod-subnet": { severity: "error", summary: "PodSubnet is not a valid CIDR", module: "synth/rules/bpa.ts" },
  "package-name": {
    severity: "error",
    summary: "not a valid Debian package name",
    module: "synth/rules/bpa.ts",
  },
  "package-version": {
    severity: "error",
    summary: "not a valid Debian package version",
    module: "synth/rules/bpa.ts",
  },
  "selector-invalid": { severity: "error", summary: "bad label selector", module: "synth/rules/sip.ts" },
  "topology-key": {
    severity: "error",
    summary: "topologyKey is not a valid label key, or no host the role's selector matches carries it",
    module: "synth/rules/sip.ts",
  },
  "node-port": {
    severity: "error",
    summary: "nodePort out of range, reversed/oversized range, or used twice",
    module: "synth/rules/sip.ts",
  },
  "field-ignored": {
    severity: "warning",
    summary:
      "an upstream field metalsynth accepts but ignores, as upstream does (a worker load balancer's nodePort)",
    module: "synth/rules/sip.ts",
  },
  "ssh-key": {
    severity: "error",
    summary: "sshAuthorizedKeys entry is not an OpenSSH public key",
    module: "synth/rules/sip.ts",
  },
  "secret-inline": {
    severity: "error",
    summary: "private key or password inside a CR",
    module: "synth/rules/secrets.ts",
  },
  unsupported: {
    severity: "error",
    summary: "recognised but unsupported mode (e.g. virtlet-vm)",
    module: "synth/rules/bpa.ts",
  },
  "name-invalid": {
    severity: "error",
    summary:
      "a namespace, CR name, BareMetalHost name or other name that reaches an object name, file path or config file is not a valid Kubernetes name (a warning on a BareMetalHost no CR names: the host is set aside)",
    module: "synth/rules/schema.ts",
  },
  "address-invalid": {
    severity: "error",
    summary:
      "an IP from a NIC or a networkData Secret is not a single IPv4/IPv6 address (a warning on a BareMetalHost no CR names: the host is set aside)",
    module: "synth/inventory/load.ts",
  },
  "auth-config": {
    severity: "error",
    summary:
      "a SIPCluster's auth service the tenant could not log in with: no address or an automatic nodePort for its issuer URL, no serving certificate the tenant's API server can trust, no client, no connector nor static user, a client, connector or user twice, a connector field both written and taken from a Secret",
    module: "synth/rules/auth.ts",
  },
  "name-clash": {
    severity: "error",
    summary:
      "two clusters would render objects (kind, namespace, name) or files with one name; names both CRs",
    module: "synth/rules/names.ts",
  },
  "lock-invalid": {
    severity: "error",
    summary:
      "rendered/metalsynth.lock.yaml is empty, not a lock, malformed, or contradicts itself (one host in two clusters or two SIP roles, an unknown role)",
    module: "synth/rules/lock.ts",
  },
  "inventory-invalid": {
    severity: "error",
    summary:
      "an inventory object can't be used (bad MAC, missing name); a MAC two hosts share sets both aside (a warning until a CR names them)",
    module: "synth/inventory/load.ts",
  },
  "host-vanished": {
    severity: "error",
    summary:
      "a host the lock or an Allocation gives to a live cluster is missing from the snapshot (or set aside): its node stays until the host is released",
    module: "synth/rules/availability.ts",
  },
  "host-unavailable": {
    severity: "error",
    summary:
      "a CR names a host that is consumed by another consumer, being deleted, powered off, broken, paused or detached (a warning for a host the lock keeps)",
    module: "synth/rules/availability.ts",
  },
  "bmc-duplicate": {
    severity: "warning",
    summary: "two BareMetalHosts share one BMC address: one machine registered twice",
    module: "synth/inventory/hygiene.ts",
  },
  "ip-duplicate": {
    severity: "warning",
    summary:
      "two hosts a plan uses have one address in what it renders (hosts.ini, a cluster ConfigMap, load-balancer backends)",
    module: "synth/rules/addresses.ts",
  },
  "metadata-invalid": {
    severity: "error",
    summary:
      "a CR's own label keys or values, or annotation keys, break Kubernetes' grammar (they are copied into specs.yaml)",
    module: "synth/rules/schema.ts",
  },
  "inventory-unmatched": {
    severity: "warning",
    summary:
      "a HardwareData or networkData Secret that matches no BareMetalHost, or a networkData Secret a BareMetalHost names that the inventory lacks",
    module: "synth/inventory/load.ts",
  },
  "review-budget": {
    severity: "error",
    summary:
      "the webhook stopped reviewing a CR after its review budget (1.5 s in a review worker): an object that costly to place is refused at admission; `validate` has no budget",
    module: "webhook/review-pool.ts",
  },
} as const satisfies Record<string, { severity: Severity; summary: string; module: string }>;

/** A stable rule id from {@link RULES}. */
export type RuleId = keyof typeof RULES;
