import { clusterKey, type ClusterKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import { labelKeyProblem, selectorProblems, type LabelSelector } from "../inventory/selector.ts";
import type { SipClusterSpec } from "../schema/sipcluster.ts";
import { reporter, type Resource } from "./resources.ts";

/** One role of a SIPCluster (`spec.nodes.<role>`), normalised. */
export interface SipRole {
  readonly role: string;
  readonly selector: LabelSelector;
  readonly topologyKey?: string;
  readonly active: number;
  readonly standby: number;
  readonly path: FieldPath;
  /** False when the selector or topology key is invalid: reported once, not planned (no knock-on no-fit). */
  readonly plannable: boolean;
}

/** A NodePort a SIP service asks for, with where it was written (for site-wide clash reports). */
export interface RequestedPort {
  readonly port: number;
  readonly path: FieldPath;
}

/** A SIPCluster after normalisation. */
export interface SipCluster {
  readonly resource: Resource<"SIPCluster">;
  /** Roles in planning order: ControlPlane, Worker, then any other role by name (SPEC §3.2). */
  readonly roles: readonly SipRole[];
  readonly services: NonNullable<SipClusterSpec["spec"]["services"]>;
  /** Every fixed NodePort the services ask for (0 = auto is not listed). */
  readonly ports: readonly RequestedPort[];
}

const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;
const MAX_WORKER_PORTS = 100;
const ROLE_ORDER = ["ControlPlane", "Worker"];

/** OpenSSH public key types, as `ssh-keygen` writes them at the start of a `.pub` line. */
const SSH_KEY_TYPES = [
  "ssh-ed25519",
  "ssh-rsa",
  "ssh-dss",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
];

/** Longest Kubernetes label value: a SIPCluster's name becomes one on each of its hosts. */
const MAX_LABEL_VALUE = 63;

/** A SIPCluster's cluster identity (SPEC §1.2), as its lock entries and SIP labels name it. */
export function sipKey(resource: Pick<Resource<"SIPCluster">, "namespace" | "name">): ClusterKey {
  return clusterKey(resource.namespace, resource.name);
}

/** Planning order of roles. */
export function compareRoles(a: string, b: string): number {
  const rank = (role: string) => (ROLE_ORDER.includes(role) ? ROLE_ORDER.indexOf(role) : ROLE_ORDER.length);
  return rank(a) - rank(b) || compareText(a, b);
}

/** Normalises a SIPCluster and runs the rules that need nothing but the CR itself. */
export function normalizeSipCluster(resource: Resource<"SIPCluster">): { sip: SipCluster; issues: Issue[] } {
  const issues: Issue[] = [];
  const report = reporter(resource, sipKey(resource));
  const { spec } = resource.object;
  if (resource.name.length > MAX_LABEL_VALUE)
    issues.push(
      report(
        "sip-cluster-name",
        ["metadata", "name"],
        `"${resource.name}" has ${resource.name.length} characters; the sip.airshipit.org/cluster-name label on its hosts holds at most ${MAX_LABEL_VALUE}`,
      ),
    );

  const roles = Object.entries(spec.nodes)
    .sort(([a], [b]) => compareRoles(a, b))
    .map(([role, nodeSet]): SipRole => {
      const path: FieldPath = ["spec", "nodes", role];
      const before = issues.length;
      for (const problem of selectorProblems(nodeSet.labelSelector)) {
        issues.push(report("selector-invalid", [...path, "labelSelector", ...problem.path], problem.message));
      }
      if (nodeSet.topologyKey !== undefined) {
        const problem = labelKeyProblem(nodeSet.topologyKey);
        if (problem) issues.push(report("topology-key", [...path, "topologyKey"], problem));
      }
      return {
        role,
        selector: nodeSet.labelSelector,
        ...(nodeSet.topologyKey === undefined ? {} : { topologyKey: nodeSet.topologyKey }),
        active: nodeSet.count.active,
        standby: nodeSet.count.standby ?? 0,
        path,
        plannable: issues.length === before,
      };
    });

  const services = spec.services ?? {};
  const ports: RequestedPort[] = [];
  const checkPort = (port: number, path: FieldPath) => {
    if (port === 0) return; // 0 lets Kubernetes pick a free NodePort
    if (port < NODE_PORT_MIN || port > NODE_PORT_MAX) {
      issues.push(
        report(
          "node-port",
          path,
          `nodePort ${port} is outside the NodePort range ${NODE_PORT_MIN}–${NODE_PORT_MAX} (0 lets Kubernetes choose)`,
        ),
      );
      return;
    }
    ports.push({ port, path });
  };
  (services.loadBalancerControlPlane ?? []).forEach((service, index) =>
    checkPort(service.nodePort, ["spec", "services", "loadBalancerControlPlane", index, "nodePort"]),
  );
  (services.jumpHost ?? []).forEach((service, index) => {
    const path: FieldPath = ["spec", "services", "jumpHost", index];
    checkPort(service.nodePort, [...path, "nodePort"]);
    (service.sshAuthorizedKeys ?? []).forEach((key, keyIndex) => {
      const problem = sshPublicKeyProblem(key);
      if (problem) issues.push(report("ssh-key", [...path, "sshAuthorizedKeys", keyIndex], problem));
    });
  });
  (services.loadBalancerWorker ?? []).forEach((service, index) => {
    const path: FieldPath = ["spec", "services", "loadBalancerWorker", index, "nodePortRange"];
    const { start, end } = service.nodePortRange;
    if (start > end) {
      issues.push(report("node-port", path, `nodePortRange is reversed: start ${start} > end ${end}`));
    } else if (end - start + 1 > MAX_WORKER_PORTS) {
      issues.push(
        report(
          "node-port",
          path,
          `nodePortRange ${start}–${end} has ${end - start + 1} ports; at most ${MAX_WORKER_PORTS} (each becomes a frontend and a Service port)`,
        ),
      );
    } else if (start < NODE_PORT_MIN || end > NODE_PORT_MAX) {
      issues.push(
        report(
          "node-port",
          path,
          `nodePortRange ${start}–${end} leaves the NodePort range ${NODE_PORT_MIN}–${NODE_PORT_MAX}`,
        ),
      );
    } else {
      for (let port = start; port <= end; port++) ports.push({ port, path });
    }
  });
  return { sip: { resource, roles, services, ports }, issues };
}

/**
 * Why a line is not an OpenSSH public key, or undefined. Checks the type, that the blob is base64 and
 * that the blob names the same key type (what `ssh-keygen -l` checks first).
 */
export function sshPublicKeyProblem(line: string): string | undefined {
  const [type = "", blob = ""] = line.trim().split(/\s+/);
  if (!SSH_KEY_TYPES.includes(type)) {
    return `not an OpenSSH public key: expected "<type> <base64> [comment]" with type ${SSH_KEY_TYPES.slice(0, 3).join(", ")}, …`;
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return `the ${type} key's data is not base64`;
  const decoded = Buffer.from(blob, "base64");
  const length = decoded.length >= 4 ? decoded.readUInt32BE(0) : 0;
  if (decoded.subarray(4, 4 + length).toString("latin1") !== type) {
    return `the key data does not contain a ${type} key (truncated or pasted from another key?)`;
  }
  return undefined;
}
