import { sipKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import type { LabelSelector } from "../inventory/selector.ts";
import {
  ignoredWorkerNodePort,
  nodePort,
  nodePortRange,
  roleSelector,
  sipClusterName,
  sshAuthorizedKeys,
} from "../rules/sip.ts";
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

const ROLE_ORDER = ["ControlPlane", "Worker"];

/** Planning order of roles. */
export function compareRoles(a: string, b: string): number {
  const rank = (role: string) => (ROLE_ORDER.includes(role) ? ROLE_ORDER.indexOf(role) : ROLE_ORDER.length);
  return rank(a) - rank(b) || compareText(a, b);
}

/** Normalises a SIPCluster and runs the rules that need nothing but the CR itself (`synth/rules/sip.ts`). */
export function normalizeSipCluster(resource: Resource<"SIPCluster">): { sip: SipCluster; issues: Issue[] } {
  const report = reporter(resource, sipKey(resource));
  const { spec } = resource.object;
  const issues = sipClusterName(resource, report);

  const roles = Object.entries(spec.nodes)
    .sort(([a], [b]) => compareRoles(a, b))
    .map(([role, nodeSet]): SipRole => {
      const path: FieldPath = ["spec", "nodes", role];
      const problems = roleSelector(nodeSet.labelSelector, nodeSet.topologyKey, path, report);
      issues.push(...problems);
      return {
        role,
        selector: nodeSet.labelSelector,
        ...(nodeSet.topologyKey === undefined ? {} : { topologyKey: nodeSet.topologyKey }),
        active: nodeSet.count.active,
        standby: nodeSet.count.standby ?? 0,
        path,
        plannable: problems.length === 0,
      };
    });

  const services = spec.services ?? {};
  const ports: RequestedPort[] = [];
  const take = (checked: { ports: RequestedPort[]; issues: Issue[] }) => {
    ports.push(...checked.ports);
    issues.push(...checked.issues);
  };
  (services.loadBalancerControlPlane ?? []).forEach((service, index) =>
    take(
      nodePort(service.nodePort, ["spec", "services", "loadBalancerControlPlane", index, "nodePort"], report),
    ),
  );
  (services.jumpHost ?? []).forEach((service, index) => {
    const path: FieldPath = ["spec", "services", "jumpHost", index];
    take(nodePort(service.nodePort, [...path, "nodePort"], report));
    issues.push(...sshAuthorizedKeys(service.sshAuthorizedKeys ?? [], path, report));
  });
  (services.loadBalancerWorker ?? []).forEach((service, index) => {
    const path: FieldPath = ["spec", "services", "loadBalancerWorker", index];
    take(nodePortRange(service.nodePortRange, [...path, "nodePortRange"], report));
    issues.push(...ignoredWorkerNodePort(service.nodePort, [...path, "nodePort"], report));
  });
  return { sip: { resource, roles, services, ports }, issues };
}
