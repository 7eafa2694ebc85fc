/**
 * The rules of a SIPCluster (SPEC §2): its name, role selectors and topology keys, NodePorts and SSH
 * keys, and the two that look beyond the CR: NodePorts used twice in the site, and a topology key no
 * matching host carries. The normaliser in `synth/site/sip.ts` calls the first ones as it reads a CR.
 */
import { sipKey } from "../cluster-key.ts";
import type { FieldPath } from "../field-path.ts";
import { compareText, type Issue } from "../issue.ts";
import type { Host } from "../inventory/host.ts";
import { labelKeyProblem, selectorProblems, type LabelSelector } from "../inventory/selector.ts";
import { editDistance } from "../mac.ts";
import { reporter, type Reporter, type Resource } from "../site/resources.ts";
import type { RequestedPort, SipCluster, SipRole } from "../site/sip.ts";

const NODE_PORT_MIN = 30000;
const NODE_PORT_MAX = 32767;
const MAX_WORKER_PORTS = 100;

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

/** `sip-cluster-name`: the name becomes the value of a SIP label on every host of the cluster. */
export function sipClusterName(resource: Resource<"SIPCluster">, report: Reporter): Issue[] {
  if (resource.name.length <= MAX_LABEL_VALUE) return [];
  return [
    report(
      "sip-cluster-name",
      ["metadata", "name"],
      `"${resource.name}" has ${resource.name.length} characters; the sip.airshipit.org/cluster-name label on its hosts holds at most ${MAX_LABEL_VALUE}`,
    ),
  ];
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

/** `ssh-key`: every `sshAuthorizedKeys` entry of a jump host is an OpenSSH public key. */
export function sshAuthorizedKeys(keys: readonly string[], path: FieldPath, report: Reporter): Issue[] {
  return keys.flatMap((key, index) => {
    const problem = sshPublicKeyProblem(key);
    return problem ? [report("ssh-key", [...path, "sshAuthorizedKeys", index], problem)] : [];
  });
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
