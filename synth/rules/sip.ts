/**
 * The rules of a SIPCluster (docs/contract.md §2): its name, role selectors and topology keys, NodePorts and SSH
 * keys, and the two that look beyond the CR: NodePorts used twice in the site, and a topology key no
 * matching host carries. The normaliser in `synth/site/sip.ts` calls the first ones as it reads a CR.
 */
import {
  EXPECTED,
  authorizedKeyProblem,
  parseAuthorizedKey,
  parseDnsLabel,
  parseDnsSubdomain,
  parseImageReference,
  parseInterfaceId,
  type AuthorizedKey,
  type DnsLabel,
  type DnsSubdomain,
  type ImageReference,
  type InterfaceId,
} from "../checked.ts";
import { sipKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import { labelKeyProblem, selectorProblems, type LabelSelector } from "../inventory/selector.ts";
import { editDistance } from "../mac.ts";
import { reporter } from "./reporter.ts";
import type { Reporter, Resource } from "../model/resource.ts";
import type { RequestedPort, SipCluster, SipRole } from "../model/sip.ts";

const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;
const MAX_WORKER_PORTS = 100;

/** Longest Kubernetes label value: a SIPCluster's name becomes one on each of its hosts. */
const MAX_LABEL_VALUE = 63;

/**
 * `sip-cluster-name`: the name becomes the value of a SIP label on every host of the cluster and the
 * last part of its Service, Job and Role names, so it must be a DNS-1123 label. The checked name, or
 * a finding.
 */
export function sipClusterName(
  resource: Resource<"SIPCluster">,
  report: Reporter,
): { name?: DnsLabel; issues: Issue[] } {
  const name = parseDnsLabel(resource.name);
  if (name !== undefined) return { name, issues: [] };
  const why =
    resource.name.length > MAX_LABEL_VALUE
      ? `has ${resource.name.length} characters; the sip.airshipit.org/cluster-name label on its hosts holds at most ${MAX_LABEL_VALUE}`
      : `is not ${EXPECTED.dnsLabel}: it names the cluster's Services, which take no '.'`;
  return { issues: [report("sip-cluster-name", ["metadata", "name"], `"${resource.name}" ${why}`)] };
}

/** `selector-invalid`, `topology-key`: a role's label selector and topology key, as label syntax. */
export function roleSelector(
  selector: LabelSelector,
  topologyKey: string | undefined,
  path: FieldPath,
  report: Reporter,
): Issue[] {
  const issues = selectorProblems(selector).map((problem) =>
    report("selector-invalid", [...path, "labelSelector", ...problem.path], problem.message),
  );
  const problem = topologyKey === undefined ? undefined : labelKeyProblem(topologyKey);
  if (problem) issues.push(report("topology-key", [...path, "topologyKey"], problem));
  return issues;
}

/** `node-port`: a fixed NodePort must be in the NodePort range; 0 lets Kubernetes choose. */
export function nodePort(
  port: number,
  path: FieldPath,
  report: Reporter,
): { ports: RequestedPort[]; issues: Issue[] } {
  if (port === 0) return { ports: [], issues: [] };
  if (port < NODE_PORT_MIN || port > NODE_PORT_MAX) {
    return {
      ports: [],
      issues: [
        report(
          "node-port",
          path,
          `nodePort ${port} is outside the NodePort range ${NODE_PORT_MIN}–${NODE_PORT_MAX} (0 lets Kubernetes choose)`,
        ),
      ],
    };
  }
  return { ports: [{ port, path }], issues: [] };
}

/** `node-port`: a worker load balancer's range must be ordered, small, and inside the NodePort range. */
export function nodePortRange(
  range: { readonly start: number; readonly end: number },
  path: FieldPath,
  report: Reporter,
): { ports: RequestedPort[]; issues: Issue[] } {
  const { start, end } = range;
  const problem =
    start > end
      ? `nodePortRange is reversed: start ${start} > end ${end}`
      : end - start + 1 > MAX_WORKER_PORTS
        ? `nodePortRange ${start}–${end} has ${end - start + 1} ports; at most ${MAX_WORKER_PORTS} (each becomes a frontend and a Service port)`
        : start < NODE_PORT_MIN || end > NODE_PORT_MAX
          ? `nodePortRange ${start}–${end} leaves the NodePort range ${NODE_PORT_MIN}–${NODE_PORT_MAX}`
          : undefined;
  if (problem) return { ports: [], issues: [report("node-port", path, problem)] };
  const ports: RequestedPort[] = [];
  for (let port = start; port <= end; port++) ports.push({ port, path });
  return { ports, issues: [] };
}

/**
 * `field-ignored`: a worker load balancer's `nodePort`. SIP's CRD of some releases requires it (all
 * services shared one struct; treasuremap's SIPClusters set it), but SIP listens on `nodePortRange`
 * only, and so does metalsynth. Accepted, as SIP does, with a warning so nobody waits for that port.
 */
export function ignoredWorkerNodePort(port: number | undefined, path: FieldPath, report: Reporter): Issue[] {
  if (port === undefined) return [];
  return [
    report(
      "field-ignored",
      path,
      `nodePort ${port} is ignored, as SIP ignores it: a worker load balancer listens on nodePortRange (remove nodePort unless your SIP release's CRD requires it)`,
    ),
  ];
}

/**
 * `ssh-key`: every `sshAuthorizedKeys` entry of a jump host is one OpenSSH public key line. The
 * checked keys (those that pass), and a finding for each that does not.
 */
export function sshAuthorizedKeys(
  keys: readonly string[],
  path: FieldPath,
  report: Reporter,
): { keys: AuthorizedKey[]; issues: Issue[] } {
  const checked: AuthorizedKey[] = [];
  const issues: Issue[] = [];
  keys.forEach((key, index) => {
    const line = parseAuthorizedKey(key);
    if (line !== undefined) checked.push(line);
    else
      issues.push(report("ssh-key", [...path, "sshAuthorizedKeys", index], authorizedKeyProblem(key) ?? ""));
  });
  return { keys: checked, issues };
}

/**
 * `name-invalid`: the jump host's `nodeSSHPrivateKeys` names the Secret its pod mounts, so it must be
 * an object name (the API server would refuse the Deployment otherwise).
 */
export function secretReference(
  name: string,
  path: FieldPath,
  report: Reporter,
): { name?: DnsSubdomain; issues: Issue[] } {
  const checked = parseDnsSubdomain(name);
  if (checked !== undefined) return { name: checked, issues: [] };
  const message = `${JSON.stringify(name)} is not a Secret name: expected ${EXPECTED.dnsSubdomain}`;
  return { issues: [report("name-invalid", path, message)] };
}

/**
 * `schema`: a service's `nodeInterfaceId` is a network id or interface name; it is written into
 * haproxy.cfg's header, so a line break there would add a directive.
 */
export function serviceInterface(
  id: string,
  path: FieldPath,
  report: Reporter,
): { nodeInterfaceId?: InterfaceId; issues: Issue[] } {
  const checked = parseInterfaceId(id);
  if (checked !== undefined) return { nodeInterfaceId: checked, issues: [] };
  const message = `${JSON.stringify(id)} is not ${EXPECTED.interfaceId}`;
  return { issues: [report("schema", [...path, "nodeInterfaceId"], message)] };
}

/**
 * `schema`: a service's `image` is a container image reference. `""` means unset, as upstream SIP
 * reads it (its CRD requires the key, and SIP puts its default image in for an empty one).
 */
export function serviceImage(
  image: string | undefined,
  path: FieldPath,
  report: Reporter,
): { image?: ImageReference; issues: Issue[] } {
  if (image === undefined || image === "") return { issues: [] };
  const checked = parseImageReference(image);
  if (checked !== undefined) return { image: checked, issues: [] };
  return {
    issues: [report("schema", [...path, "image"], `${JSON.stringify(image)} is not ${EXPECTED.image}`)],
  };
}

/** `node-port` across the site: two services on the same NodePort can't both be created. */
export function nodePortClashes(sips: readonly SipCluster[]): Issue[] {
  const owners = new Map<number, { key: string; port: RequestedPort }>();
  const issues: Issue[] = [];
  for (const sip of [...sips].sort((a, b) => compareText(a.resource.key, b.resource.key))) {
    const reported = new Set<string>();
    for (const port of sip.ports) {
      const owner = owners.get(port.port);
      if (!owner) {
        owners.set(port.port, { key: sip.resource.key, port });
        continue;
      }
      const pathKey = `${port.path.join(".")}:${owner.key}`;
      if (reported.has(pathKey)) continue; // a clashing range is reported once, not per port
      reported.add(pathKey);
      const where = owner.key === sip.resource.key ? "another service of this SIPCluster" : owner.key;
      issues.push(
        reporter(sip.resource, sipKey(sip.resource))(
          "node-port",
          port.path,
          `nodePort ${port.port} is already used by ${where} (${owner.port.path.join(".")})`,
        ),
      );
    }
  }
  return issues;
}

/**
 * `topology-key` that needs the inventory: a valid label key that no host the role's selector
 * matches carries, so every host is unconstrained and the role's hosts may share a rack. The usual
 * cause is a typo, so the message names the closest key those hosts do carry.
 */
export function unusedTopologyKey(role: SipRole, candidates: readonly Host[], report: Reporter): Issue[] {
  const key = role.topologyKey;
  // No candidates at all is a no-fit, reported on its own.
  if (key === undefined || candidates.length === 0) return [];
  if (candidates.some((host) => host.labels[key] !== undefined)) return [];
  const carried = new Set(candidates.flatMap((host) => Object.keys(host.labels)));
  const closest = [...carried]
    .map((label) => ({ label, distance: editDistance(key, label) }))
    .sort((a, b) => a.distance - b.distance || compareText(a.label, b.label))[0];
  const hint = closest ? ` (did you mean ${closest.label}?)` : " (they carry no labels)";
  return [
    report(
      "topology-key",
      [...role.path, "topologyKey"],
      `no host matching the labelSelector (${candidates.length} hosts) carries label "${key}", so it would constrain nothing${hint}`,
    ),
  ];
}
