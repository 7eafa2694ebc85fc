/**
 * The canonical inventory snapshot that `metalsynth inventory pull` writes (decision 0023): for each
 * host, a trimmed BareMetalHost holding only the facts metalsynth reads (docs/contract.md §1.3), and a trimmed
 * networkData Secret holding only `networks[].id → ip_address`. Every map's keys are sorted, every
 * list is sorted, and nothing volatile (resourceVersion, timestamps, power state, operation history)
 * is kept, so refreshing an unchanged cluster gives the same bytes and a changed NIC one changed line.
 *
 * It is an ordinary snapshot: the loader reads it like any dump, and reading it gives the same hosts,
 * so the same plan, as reading the objects it was made from.
 */
import type { IpAddress } from "../checked.ts";
import { compareText } from "../issue.ts";
import { toYaml } from "../codec/yaml-output.ts";
import { DETACHED_ANNOTATION, PAUSED_ANNOTATION, SET_ASIDE_ANNOTATION } from "./bmh.ts";
import {
  ipForInterface,
  ipForMac,
  type Availability,
  type Host,
  type Nic,
  type SetAsideHost,
} from "./host.ts";
import { NETWORK_DATA_KEY } from "./network-data.ts";

/** How a snapshot file written by `metalsynth inventory pull` begins; files that do are its own. */
export const SNAPSHOT_MARKER = "# metalsynth inventory pull:";

/** How {@link canonicalFiles} spreads hosts over files. */
export interface CanonicalLayout {
  /**
   * A label whose value names the file of a host within its namespace (`<namespace>/<value>.yaml`),
   * such as a rack label. Hosts without it go to `<namespace>.yaml`.
   * @default undefined (one file per namespace)
   */
  readonly fileLabel?: string;
}

const MEBIBYTE = 2 ** 20;

/**
 * The snapshot files for `hosts`, as paths relative to `inventory/` (POSIX separators) → content.
 * Hosts are sorted by name within a file; each found networkData Secret follows the hosts, in the
 * file of the first host (by id) that names it.
 */
export function canonicalFiles(
  hosts: readonly Host[],
  layout: CanonicalLayout = {},
  setAside: readonly SetAsideHost[] = [],
): Map<string, string> {
  const files = new Map<string, SnapshotFile>();
  const placed = new Set<string>();
  for (const host of [...hosts].sort((a, b) => compareText(a.id, b.id))) {
    const value = layout.fileLabel === undefined ? undefined : host.labels[layout.fileLabel];
    const group = value === undefined || value === "" ? undefined : value;
    // Label values are [A-Za-z0-9._-] and start and end alphanumeric: always a plain file name.
    const file = group === undefined ? `${host.namespace}.yaml` : `${host.namespace}/${group}.yaml`;
    let entry = files.get(file);
    if (!entry) {
      entry = {
        namespace: host.namespace,
        ...(group !== undefined && { group }),
        hosts: [],
        secrets: new Map(),
      };
      files.set(file, entry);
    }
    entry.hosts.push(host);
    const reference = host.networkData;
    if (reference?.found !== true) continue;
    const key = `${reference.namespace}/${reference.name}`;
    if (placed.has(key)) continue;
    placed.add(key);
    entry.secrets.set(key, canonicalSecret(reference.namespace, reference.name, host.networks));
  }
  const texts = new Map<string, string>();
  if (setAside.length > 0) texts.set(SET_ASIDE_FILE, setAsideFile(setAside));
  for (const [file, entry] of [...files].sort(([a], [b]) => compareText(a, b))) {
    const documents = [
      ...entry.hosts.sort((a, b) => compareText(a.name, b.name)).map(canonicalHost),
      ...[...entry.secrets].sort(([a], [b]) => compareText(a, b)).map(([, secret]) => secret),
    ];
    texts.set(
      file,
      `${fileHeader(entry, layout)}${documents.map((document) => toYaml(document)).join("---\n")}`,
    );
  }
  return texts;
}

/**
 * The file of the hosts the loader set aside. No namespace's file can have its name: a namespace is
 * a DNS label, which has no underscore.
 */
export const SET_ASIDE_FILE = "_set-aside.yaml";

/**
 * The hosts the pull could not read cleanly, so the snapshot never loses a host (decision 0052): each
 * as a BareMetalHost with its identity as written, its MACs (a CR naming one hears why it can't have
 * it) and the set-aside annotation, which the loader reads back into the same rule and reason.
 */
function setAsideFile(hosts: readonly SetAsideHost[]): string {
  const header =
    `${SNAPSHOT_MARKER} the BareMetalHosts it could not read cleanly, set aside with their\n` +
    `# reasons: no cluster gets them until their objects are fixed and pulled again. Never apply it.\n`;
  const documents = [...hosts]
    .sort((a, b) => compareText(a.id, b.id))
    .map((host) => {
      const slash = host.id.indexOf("/");
      return {
        apiVersion: "metal3.io/v1alpha1",
        kind: "BareMetalHost",
        metadata: {
          annotations: { [SET_ASIDE_ANNOTATION]: `${host.rule}: ${host.reason}` },
          name: host.id.slice(slash + 1),
          namespace: host.id.slice(0, slash),
        },
        ...(host.macs.length > 0 && { status: { hardware: { nics: host.macs.map((mac) => ({ mac })) } } }),
      };
    });
  return `${header}${documents.map((document) => toYaml(document)).join("---\n")}`;
}

/** One file of the snapshot, while it is put together. */
interface SnapshotFile {
  readonly namespace: string;
  /** The value of the layout's file label its hosts have; none for the namespace's own file. */
  readonly group?: string;
  readonly hosts: Host[];
  /** `namespace/name` → the trimmed Secret. */
  readonly secrets: Map<string, Record<string, unknown>>;
}

/** What the file is, that it is written by the pull, and that it must never be applied. */
function fileHeader(file: SnapshotFile, layout: CanonicalLayout): string {
  const which =
    layout.fileLabel === undefined
      ? ""
      : file.group === undefined
        ? ` without a ${layout.fileLabel} label`
        : ` labelled ${layout.fileLabel}=${file.group}`;
  return (
    `${SNAPSHOT_MARKER} the BareMetalHosts of namespace ${file.namespace}${which},\n` +
    `# only the fields metalsynth reads. Refresh with \`metalsynth inventory pull\`; never apply it to a\n` +
    `# cluster (its Secrets hold only the networkData addresses).\n`
  );
}

/**
 * The trimmed BareMetalHost of a host: labels, BMC address and credentials Secret *name*, boot MAC,
 * networkData reference, hardware summary (CPUs, RAM, NICs) and provisioning state. Keys sorted.
 */
export function canonicalHost(host: Host): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  const labels = Object.keys(host.labels).sort(compareText);
  if (labels.length > 0) {
    // fromEntries, so a "__proto__" label stays a label.
    metadata["labels"] = Object.fromEntries(labels.map((key) => [key, host.labels[key]]));
  }
  const availability = host.availability;
  const annotations = availabilityAnnotations(availability);
  if (annotations !== undefined) metadata["annotations"] = annotations;
  if (availability?.deletionTimestamp !== undefined)
    metadata["deletionTimestamp"] = availability.deletionTimestamp;
  metadata["name"] = host.name;
  metadata["namespace"] = host.namespace;

  const spec: Record<string, unknown> = {};
  if (host.bmc !== undefined) {
    spec["bmc"] = {
      address: host.bmc.address,
      ...(host.bmc.credentialsName !== undefined && { credentialsName: host.bmc.credentialsName }),
    };
  }
  if (host.bootMac !== undefined) spec["bootMACAddress"] = host.bootMac;
  if (availability?.consumer !== undefined) {
    const { kind, namespace, name } = availability.consumer;
    spec["consumerRef"] = { kind, name, ...(namespace !== undefined && { namespace }) };
  }
  if (host.networkData !== undefined) {
    spec["networkData"] = { name: host.networkData.name, namespace: host.networkData.namespace };
  }
  if (availability?.offline) spec["online"] = false;

  const status: Record<string, unknown> = {};
  const hardware: Record<string, unknown> = {};
  const cpu = {
    ...(host.cpuArch !== undefined && { arch: host.cpuArch }),
    ...(host.cpus !== undefined && { count: host.cpus }),
    ...(host.cpuFlags !== undefined && { flags: host.cpuFlags }),
    ...(host.cpuModel !== undefined && { model: host.cpuModel }),
  };
  if (Object.keys(cpu).length > 0) hardware["cpu"] = cpu;
  hardware["nics"] = orderedNics(host).flatMap(nicEntries);
  if (host.memoryBytes !== undefined) hardware["ramMebibytes"] = host.memoryBytes / MEBIBYTE;
  if (host.disks !== undefined)
    hardware["storage"] = host.disks.map(({ sizeBytes, rotational }) => ({
      ...(rotational !== undefined && { rotational }),
      sizeBytes,
    }));
  // A hardware block with nothing in it reads as no hardware details, which is what it says.
  if (
    Object.keys(cpu).length > 0 ||
    host.memoryBytes !== undefined ||
    host.nics.length > 0 ||
    host.disks !== undefined
  ) {
    status["hardware"] = hardware;
  }
  if (availability?.errorType !== undefined) status["errorType"] = availability.errorType;
  if (availability?.operationalStatus !== undefined)
    status["operationalStatus"] = availability.operationalStatus;
  if (availability?.poweredOff) status["poweredOn"] = false;
  if (host.provisioningState !== undefined) status["provisioning"] = { state: host.provisioningState };

  return {
    apiVersion: "metal3.io/v1alpha1",
    kind: "BareMetalHost",
    metadata,
    ...(Object.keys(spec).length > 0 && { spec }),
    ...(Object.keys(status).length > 0 && { status }),
  };
}

/** The pause and detach annotations a host has, keys sorted; `undefined` when it has neither. */
function availabilityAnnotations(availability: Availability | undefined): Record<string, string> | undefined {
  const annotations: [string, string][] = [];
  if (availability?.paused !== undefined) annotations.push([PAUSED_ANNOTATION, availability.paused]);
  if (availability?.detached !== undefined) annotations.push([DETACHED_ANNOTATION, availability.detached]);
  return annotations.length === 0
    ? undefined
    : Object.fromEntries(annotations.sort(([a], [b]) => compareText(a, b)));
}

/**
 * A networkData Secret holding only what the loader keeps of one: `networks[].id → ip_address`, as
 * plain `stringData` so a reviewer reads the addresses. No other key of the Secret, and no other part
 * of network_data (links, routes, DNS servers), is ever written.
 */
export function canonicalSecret(
  namespace: string,
  name: string,
  networks: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const entries = Object.keys(networks)
    .sort(compareText)
    .map((id) => ({ id, ip_address: networks[id] }));
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
    stringData: { [NETWORK_DATA_KEY]: toYaml({ networks: entries }) },
  };
}

/**
 * One raw NIC entry per address, as BMH status lists dual-stack NICs (the loader merges entries of
 * the same MAC and name back into one NIC, IPv4 first). Keys sorted; an unknown name is left out.
 */
function nicEntries(nic: Nic): Record<string, unknown>[] {
  const entry = (ip: string | undefined) => ({
    ...(ip !== undefined && { ip }),
    mac: nic.mac,
    ...(nic.name !== "" && { name: nic.name }),
    ...(nic.speedGbps !== undefined && { speedGbps: nic.speedGbps }),
  });
  if (nic.ipv4 === undefined && nic.ipv6 === undefined) return [entry(undefined)];
  return [nic.ipv4, nic.ipv6].filter((ip) => ip !== undefined).map(entry);
}

/**
 * The host's NICs sorted by name, MAC and addresses, unless the order carries meaning: when several
 * NICs share a MAC (a bond and its first member) or a name, the first one with an address answers
 * "which IP has this MAC / this interface" (docs/contract.md §1.3). If sorting would change any such answer, the
 * inspection's order is kept, so the snapshot never changes a plan.
 */
export function orderedNics(host: Host): readonly Nic[] {
  const sorted = [...host.nics].sort(
    (a, b) =>
      compareText(a.name, b.name) ||
      compareText(a.mac, b.mac) ||
      compareText(a.ipv4 ?? "", b.ipv4 ?? "") ||
      compareText(a.ipv6 ?? "", b.ipv6 ?? ""),
  );
  const resorted: Host = { ...host, nics: sorted };
  const sameAnswers =
    host.nics.every((nic) => ipForMac(host, nic.mac) === ipForMac(resorted, nic.mac)) &&
    host.nics.every((nic) => nicAddress(host, nic.name) === nicAddress(resorted, nic.name));
  return sameAnswers ? sorted : host.nics;
}

/** The address a SIP interface of this name gets from the NICs alone (networkData left aside). */
function nicAddress(host: Host, name: string): string | undefined {
  // No prototype: an interface named like an Object method must not find one.
  const networks: Record<string, IpAddress> = Object.create(null) as Record<string, IpAddress>;
  return ipForInterface({ ...host, networks }, name);
}
