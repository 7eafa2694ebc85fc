/**
 * The kubespray inventory KUD's installer reads (docs/contract.md §4.1), byte-compatible with what ICN BPA wrote.
 *
 * Upstream (`bpa-operator/pkg/controller/provisioning/provisioning_controller.go`) built each section
 * body as a string and saved it through go-ini v1.46 `NewRawSection` + `SaveTo`: an empty `DEFAULT`
 * section is skipped, every raw section is written as `[name]\n` + body + `\n` (`PrettySection`, the
 * last section included), and the `k8s-cluster:children` body has no trailing newline of its own.
 * That is where the blank lines between sections and the single final `kube-master\n` come from.
 * `[all]` lists masters, then workers (docs/contract.md §4.1); upstream's loop is reported to interleave them for
 * several masters, which changes no group (decision 0031).
 */
import type { DnsLabel, IpAddress } from "./checked.ts";

/**
 * A node as hosts.ini names it: its label (the host name in the cluster) and the address to SSH to,
 * both checked at the door (issue #21), so neither can add a host, a variable or a section.
 */
export interface InventoryNode {
  readonly label: DnsLabel;
  readonly ip: IpAddress;
}

/** The nodes of each kubespray group, after applying BPA's role rules once. */
export interface KudRoles {
  /** Every node once, masters first, each in CR order: the `[all]` section. */
  readonly all: readonly InventoryNode[];
  readonly masters: readonly InventoryNode[];
  /** The workers, or the masters when the cluster lists no workers (upstream: masters also run pods). */
  readonly workers: readonly InventoryNode[];
}

/** Section order exactly as upstream wrote them. */
const SECTIONS = [
  ["all", "all"],
  ["kube-master", "masters"],
  ["kube-node", "workers"],
  ["etcd", "masters"],
  ["ovn-central", "masters"],
  ["ovn-controller", "workers"],
  ["virtlet", "workers"],
] as const;

/**
 * The group names an Ansible inventory written by {@link hostsIni} holds: its sections, the
 * `k8s-cluster` parent, and Ansible's own `all` and `ungrouped`. A host named like one of them is
 * read as that group (ansible-inventory drops or merges it), so no node label may be one.
 */
export const HOSTS_INI_GROUPS: ReadonlySet<string> = new Set([
  ...SECTIONS.map(([section]) => section),
  "k8s-cluster",
  "ungrouped",
]);

/**
 * Applies BPA's role rules: no workers means the masters are also the workers; a label listed twice
 * (a host that is master and worker, or a repeated entry) appears once per group, with the address
 * of its first appearance.
 */
export function kudRoles(masters: readonly InventoryNode[], workers: readonly InventoryNode[]): KudRoles {
  const uniqueMasters = unique(masters);
  const uniqueWorkers = workers.length === 0 ? uniqueMasters : unique(workers);
  return {
    all: unique([...uniqueMasters, ...uniqueWorkers]),
    masters: uniqueMasters,
    workers: uniqueWorkers,
  };
}

/**
 * The hosts.ini text for a cluster's nodes (docs/contract.md §4.1). Sections `[all]`, `[kube-master]`,
 * `[kube-node]`, `[etcd]`, `[ovn-central]`, `[ovn-controller]`, `[virtlet]`, `[k8s-cluster:children]`,
 * separated by blank lines, ending with `kube-master\n`.
 */
export function hostsIni(masters: readonly InventoryNode[], workers: readonly InventoryNode[]): string {
  const roles = kudRoles(masters, workers);
  const bodies = SECTIONS.map(([section, group]) => {
    const body =
      group === "all"
        ? // Two spaces after the label: upstream's literal `label + "  ansible_ssh_host="`.
          roles.all.map((node) => `${node.label}  ansible_ssh_host=${node.ip} ansible_ssh_port=22\n`).join("")
        : roles[group].map((node) => `${node.label}\n`).join("");
    return `[${section}]\n${body}\n`;
  });
  return `${bodies.join("")}[k8s-cluster:children]\nkube-node\nkube-master\n`;
}

function unique(nodes: readonly InventoryNode[]): InventoryNode[] {
  const seen = new Set<string>();
  return nodes.filter((node) => !seen.has(node.label) && seen.add(node.label));
}
