import { sipKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import {
  ignoredWorkerNodePort,
  nodePort,
  nodePortRange,
  roleSelector,
  secretReference,
  serviceImage,
  serviceInterface,
  sipClusterName,
  sshAuthorizedKeys,
} from "../rules/sip.ts";
import { authService } from "../rules/auth.ts";
import { reporter } from "../rules/reporter.ts";
import { hardwareNeeds } from "./hardware.ts";
import type { Resource } from "../model/resource.ts";
import type { RequestedPort, SipCluster, SipRole, SipServices } from "../model/sip.ts";

const ROLE_ORDER = ["ControlPlane", "Worker"];

/** Planning order of roles. */
export function compareRoles(a: string, b: string): number {
  const rank = (role: string) => (ROLE_ORDER.includes(role) ? ROLE_ORDER.indexOf(role) : ROLE_ORDER.length);
  return rank(a) - rank(b) || compareText(a, b);
}

/** Normalises a SIPCluster and runs the rules that need nothing but the CR itself (`synth/rules/sip.ts`). */
export function normalizeSipCluster(resource: Resource<"SIPCluster">): { sip?: SipCluster; issues: Issue[] } {
  const report = reporter(resource, sipKey(resource));
  const { spec } = resource.object;
  const { name, issues } = sipClusterName(resource, report);

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
        needs: { sriov: false, qat: false, ...hardwareNeeds(nodeSet.hardware) },
        path,
        plannable: problems.length === 0,
      };
    });

  const specs = spec.services ?? {};
  const ports: RequestedPort[] = [];
  const take = (checked: { ports: RequestedPort[]; issues: Issue[] }) => {
    ports.push(...checked.ports);
    issues.push(...checked.issues);
  };
  /**
   * The service with its image (an empty one is unset) and interface id checked, or `undefined`
   * when the id is not one (reported; the service can't be rendered).
   */
  const checkedService = <T extends { readonly image?: string; readonly nodeInterfaceId: string }>(
    service: T,
    path: FieldPath,
  ) => {
    const { image, issues: imageProblems } = serviceImage(service.image, path, report);
    const { nodeInterfaceId, issues: idProblems } = serviceInterface(service.nodeInterfaceId, path, report);
    issues.push(...imageProblems, ...idProblems);
    return nodeInterfaceId === undefined ? undefined : { ...service, image, nodeInterfaceId };
  };
  const present = <T>(value: T | undefined): value is T => value !== undefined;
  const services: SipServices = {
    ...(specs.loadBalancerControlPlane && {
      loadBalancerControlPlane: specs.loadBalancerControlPlane
        .map((service, index) => {
          const path: FieldPath = ["spec", "services", "loadBalancerControlPlane", index];
          take(nodePort(service.nodePort, [...path, "nodePort"], report));
          return checkedService(service, path);
        })
        .filter(present),
    }),
    ...(specs.jumpHost && {
      jumpHost: specs.jumpHost
        .map((service, index) => {
          const path: FieldPath = ["spec", "services", "jumpHost", index];
          take(nodePort(service.nodePort, [...path, "nodePort"], report));
          const keys = sshAuthorizedKeys(service.sshAuthorizedKeys ?? [], path, report);
          issues.push(...keys.issues);
          const secret = secretReference(service.nodeSSHPrivateKeys, [...path, "nodeSSHPrivateKeys"], report);
          issues.push(...secret.issues);
          const checked = checkedService(service, path);
          if (checked === undefined || secret.name === undefined) return undefined;
          return { ...checked, sshAuthorizedKeys: keys.keys, nodeSSHPrivateKeys: secret.name };
        })
        .filter(present),
    }),
    ...(specs.auth && {
      auth: specs.auth
        .map((service, index) => {
          const fallback = specs.loadBalancerControlPlane?.[0]?.clusterIP;
          const checked = authService(service, ["spec", "services", "auth", index], report, fallback);
          take({ ports: [...checked.ports], issues: [...checked.issues] });
          return checked.auth;
        })
        .filter(present),
    }),
    ...(specs.loadBalancerWorker && {
      loadBalancerWorker: specs.loadBalancerWorker
        .map((service, index) => {
          const path: FieldPath = ["spec", "services", "loadBalancerWorker", index];
          take(nodePortRange(service.nodePortRange, [...path, "nodePortRange"], report));
          issues.push(...ignoredWorkerNodePort(service.nodePort, [...path, "nodePort"], report));
          return checkedService(service, path);
        })
        .filter(present),
    }),
  };
  // A name that is no DNS label can't name the cluster's objects: the CR is reported, not planned.
  return name === undefined ? { issues } : { sip: { resource, name, roles, services, ports }, issues };
}
