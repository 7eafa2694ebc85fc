/**
 * Fixture builders for the inventory: raw BareMetalHosts as a snapshot holds them, normalised `Host`s
 * for rule and planning tests, and a seeded generator of realistic region-sized snapshots for
 * memory tests and the benchmark. Every call returns fresh objects.
 */
import { stringify } from "yaml";
import { parseDnsLabel, parseDnsSubdomain, parseIpAddress, type DnsLabel } from "../../synth/checked.ts";
import {
  QAT_LABEL,
  SIP_LABELS,
  SRIOV_LABEL,
  availabilityOf,
  isOsInstalled,
  type AvailabilityFacts,
  sipOwnerOf,
  sipPartialOf,
} from "../../synth/inventory/bmh.ts";
import type { Host, Nic } from "../../synth/inventory/host.ts";
import { Inventory, type BestFit } from "../../synth/inventory/inventory.ts";

/** The rack label convention of the SIP samples (topologyKey in SIPClusters). */
export const RACK_LABEL = "vino.airshipit.org/rack";
/** The flavor label of the SIP samples. */
export const FLAVOR_LABEL = "vino.airshipit.org/flavor";

/** A raw object as a snapshot file holds it. */
export type RawObject = Record<string, unknown>;

/** One NIC of a raw BMH; several `ip`s repeat the NIC per address, as dual-stack dumps do. */
export interface RawNicOptions {
  readonly name: string;
  readonly mac: string;
  readonly ip?: string | readonly string[];
}

/** Overrides for {@link makeBmh}. `null` removes a field the default would set. */
export interface BmhOptions {
  /** @default "node-0" */
  readonly name?: string;
  /** `null` omits `metadata.namespace`, as the upstream SIP samples do. @default "metal3" */
  readonly namespace?: string | null;
  readonly labels?: Readonly<Record<string, string>>;
  /** Sets `vino.airshipit.org/rack`. */
  readonly rack?: string;
  /** Sets `feature.metalsynth.io/sriov: "true"`. */
  readonly sriov?: boolean;
  /** Sets `feature.metalsynth.io/qat: "true"`. */
  readonly qat?: boolean;
  /** `spec.bootMACAddress`; `null` omits it. @default a MAC derived from namespace/name */
  readonly bootMac?: string | null;
  /** `status.hardware.nics`. @default one NIC `enp1s0` with the boot MAC and an IPv4 */
  readonly nics?: readonly RawNicOptions[];
  /** `status.hardware.cpu.count`; `null` omits it. @default 16 */
  readonly cpus?: number | null;
  /** `status.hardware.ramMebibytes`; `null` omits it. @default 65536 (64 GiB) */
  readonly ramMebibytes?: number | null;
  /** `false` omits `status.hardware` entirely (a host not inspected yet). @default true */
  readonly hardware?: boolean;
  /** `status.provisioning.state`; `null` omits it. @default "provisioned" */
  readonly state?: string | null;
  /** `spec.networkData`. */
  readonly networkData?: { readonly name: string; readonly namespace?: string };
  /** `spec.bmc`; `null` omits it. @default an IPMI address and `<name>-bmc-secret` */
  readonly bmc?: { readonly address: string; readonly credentialsName?: string } | null;
}

/** A fresh raw `metal3.io/v1alpha1` BareMetalHost, shaped like `kubectl get bmh -o yaml` output. */
export function makeBmh(options: BmhOptions = {}): RawObject {
  const name = options.name ?? "node-0";
  const namespace = options.namespace === undefined ? "metal3" : options.namespace;
  const id = `${namespace ?? "default"}/${name}`;
  const bootMac = options.bootMac === undefined ? macFor(id, 0) : options.bootMac;
  const labels: Record<string, string> = {
    ...(options.rack !== undefined && { [RACK_LABEL]: options.rack }),
    ...(options.sriov && { [SRIOV_LABEL]: "true" }),
    ...(options.qat && { [QAT_LABEL]: "true" }),
    ...options.labels,
  };
  const nics = options.nics ?? [{ name: "enp1s0", mac: bootMac ?? macFor(id, 0), ip: ipFor(id, 0) }];
  const cpus = options.cpus === undefined ? 16 : options.cpus;
  const ramMebibytes = options.ramMebibytes === undefined ? 65536 : options.ramMebibytes;
  const state = options.state === undefined ? "provisioned" : options.state;
  const bmc =
    options.bmc === undefined
      ? { address: `redfish://${ipFor(id, 9)}/redfish/v1/Systems/1`, credentialsName: `${name}-bmc-secret` }
      : options.bmc;
  const hardware = {
    ...(cpus !== null && { cpu: { arch: "x86_64", count: cpus, model: "Intel Xeon" } }),
    nics: nics.flatMap((nic) => {
      const ips = nic.ip === undefined ? [undefined] : typeof nic.ip === "string" ? [nic.ip] : nic.ip;
      return ips.map((ip) => ({
        name: nic.name,
        mac: nic.mac,
        ...(ip !== undefined && { ip }),
        model: "0x8086 0x1572",
      }));
    }),
    ...(ramMebibytes !== null && { ramMebibytes }),
  };
  return {
    apiVersion: "metal3.io/v1alpha1",
    kind: "BareMetalHost",
    metadata: {
      name,
      ...(namespace !== null && { namespace }),
      ...(Object.keys(labels).length > 0 && { labels }),
    },
    spec: {
      online: true,
      ...(bmc !== null && { bmc: { ...bmc } }),
      ...(bootMac !== null && { bootMACAddress: bootMac }),
      ...(options.networkData && { networkData: { ...options.networkData } }),
    },
    status: {
      ...(options.hardware !== false && { hardware }),
      ...(state !== null && { provisioning: { state } }),
    },
  };
}

/** A copy of a raw object without `kind` and `apiVersion`, as typed lists from the API server print items. */
export function kindless(object: RawObject): RawObject {
  const copy = { ...object };
  delete copy["kind"];
  delete copy["apiVersion"];
  return copy;
}

/** A host's facts without where they were read from, to compare hosts read from different files. */
export function factsOf(host: Host): Omit<Host, "source"> {
  const facts: Omit<Host, "source"> & { source?: unknown } = { ...host };
  delete facts.source;
  return facts;
}

/** A NIC for {@link makeHost}, its addresses as text: the builder checks them as the loader does. */
export interface NicOptions {
  readonly name: string;
  readonly mac: string;
  readonly ipv4?: string;
  readonly ipv6?: string;
  readonly speedGbps?: number;
}

/**
 * Overrides for {@link makeHost}: any Host field, plus the rack label. `id` follows namespace/name.
 * Names and addresses are plain text, checked by the loader's own parsers (a bad one throws).
 */
export interface HostOptions extends Partial<
  Omit<Host, "id" | "namespace" | "name" | "nics" | "networks" | "bmc" | "availability">
> {
  /** What the BareMetalHost says of its availability, read as the loader reads it with the state. */
  readonly availabilityFacts?: AvailabilityFacts;
  readonly namespace?: string;
  readonly bmc?: { readonly address: string; readonly credentialsName?: string };
  readonly name?: string;
  readonly nics?: readonly NicOptions[];
  readonly networks?: Readonly<Record<string, string>>;
  /** Sets `vino.airshipit.org/rack`. */
  readonly rack?: string;
}

/**
 * `text` through `parse`, or a thrown error: test data is made by the same parsers as real input
 * (issue #21), never by a cast, so a fixture can't hold what the loader would refuse.
 */
export function checked<T>(parse: (text: string) => T | undefined, text: string): T {
  const value = parse(text);
  if (value === undefined)
    throw new Error(`test fixture: ${JSON.stringify(text)} does not pass ${parse.name}`);
  return value;
}

/** A DNS-1123 label from text, through the door's parser (a cluster's or namespace's name in a fixture). */
export function dnsLabel(text: string): DnsLabel {
  return checked(parseDnsLabel, text);
}

/** A {@link Nic} from text, its addresses checked. */
export function makeNic(options: NicOptions): Nic {
  return {
    name: options.name,
    mac: options.mac,
    ...(options.ipv4 !== undefined && { ipv4: checked(parseIpAddress, options.ipv4) }),
    ...(options.ipv6 !== undefined && { ipv6: checked(parseIpAddress, options.ipv6) }),
    ...(options.speedGbps !== undefined && { speedGbps: options.speedGbps }),
  };
}

/**
 * A fresh normalised {@link Host}. Derived fields stay consistent with the labels the loader reads
 * them from: `sriov: true` adds the SR-IOV label, a SIP-labelled host gets its `sipOwner` (or its
 * `sipPartial`, with some of the SIP labels), `macs`
 * follow the NICs. Passing `cpus: undefined` explicitly makes the resources unknown.
 */
export function makeHost(options: HostOptions = {}): Host {
  const namespace = options.namespace ?? "metal3";
  const name = options.name ?? "node-0";
  const id = `${namespace}/${name}`;
  const labels: Record<string, string> = {
    ...(options.rack !== undefined && { [RACK_LABEL]: options.rack }),
    ...(options.sriov && { [SRIOV_LABEL]: "true" }),
    ...(options.qat && { [QAT_LABEL]: "true" }),
    ...(options.sipOwner && {
      [SIP_LABELS.namespace]: options.sipOwner.namespace,
      [SIP_LABELS.name]: options.sipOwner.name,
      [SIP_LABELS.nodeType]: options.sipOwner.nodeType,
    }),
    ...options.labels,
  };
  const nics: readonly Nic[] = (
    options.nics ?? [{ name: "enp1s0", mac: macFor(id, 0), ipv4: ipFor(id, 0) }]
  ).map(makeNic);
  const macs = options.macs ?? [...new Set(nics.map((nic) => nic.mac))].sort();
  const cpus = "cpus" in options ? options.cpus : 16;
  const memoryBytes = "memoryBytes" in options ? options.memoryBytes : 64 * 2 ** 30;
  const provisioningState = "provisioningState" in options ? options.provisioningState : "provisioned";
  const sipOwner = sipOwnerOf(labels);
  const sipPartial = sipOwner ? undefined : sipPartialOf(labels);
  const availability = availabilityOf(options.availabilityFacts, provisioningState);
  return {
    id,
    namespace: checked(parseDnsLabel, namespace),
    name: checked(parseDnsSubdomain, name),
    labels,
    macs: [...macs],
    nics,
    ...(cpus !== undefined && { cpus }),
    ...(memoryBytes !== undefined && { memoryBytes }),
    ...(options.cpuArch !== undefined && { cpuArch: options.cpuArch }),
    ...(options.cpuModel !== undefined && { cpuModel: options.cpuModel }),
    ...(options.cpuFlags !== undefined && { cpuFlags: options.cpuFlags }),
    ...(options.disks !== undefined && { disks: options.disks }),
    sriov: labels[SRIOV_LABEL] === "true",
    qat: labels[QAT_LABEL] === "true",
    ...(provisioningState !== undefined && { provisioningState }),
    osInstalled: options.osInstalled ?? isOsInstalled(provisioningState),
    ...(availability && { availability }),
    networks: Object.fromEntries(
      Object.entries(options.networks ?? {}).map(([id, ip]) => [id, checked(parseIpAddress, ip)]),
    ),
    ...(options.bmc && {
      bmc: {
        address: options.bmc.address,
        ...(options.bmc.credentialsName !== undefined && {
          credentialsName: checked(parseDnsSubdomain, options.bmc.credentialsName),
        }),
      },
    }),
    ...(options.bootMac !== undefined && { bootMac: options.bootMac }),
    ...(options.networkData && { networkData: { ...options.networkData } }),
    ...(sipOwner && { sipOwner }),
    ...(sipPartial && { sipPartial }),
    ...(options.source && { source: { ...options.source } }),
  };
}

/** Every host a best-fit walk offers, in its order: a walk that accepts none. */
export function everyFitting(
  candidates: Pick<BestFit, "firstFitting">,
  minCpus = 0,
  minMemoryBytes = 0,
): Host[] {
  const offered: Host[] = [];
  candidates.firstFitting(minCpus, minMemoryBytes, (host) => {
    offered.push(host);
    return false;
  });
  return offered;
}

/** An {@link Inventory} of `hosts` (Hosts, or overrides for {@link makeHost}). */
export function makeInventory(hosts: readonly (Host | HostOptions)[]): Inventory {
  return new Inventory(hosts.map((host) => (isHost(host) ? host : makeHost(host))));
}

function isHost(value: Host | HostOptions): value is Host {
  return "id" in value;
}

/** Options of {@link generateBmhs}. */
export interface GenerateOptions {
  /** Seed of the PRNG: the same seed always gives the same snapshot. */
  readonly seed: number;
  /** @default "site" */
  readonly namespace?: string;
  /** Hosts per rack. @default 20 */
  readonly rackSize?: number;
}

const CPU_COUNTS = [8, 16, 24, 32, 48, 64, 96, 128] as const;
const RAM_GIB = [32, 64, 96, 128, 192, 256, 384, 512, 768, 1024] as const;

/**
 * Raw objects of a realistic region snapshot with `count` hosts: racks of ~20, 8–128 CPUs, 32–1024 GiB,
 * 2–4 NICs (some dual-stack, with link-local addresses), ~5% without hardware details, ~25% with a
 * networkData Secret (half base64 `data`, half YAML `stringData`), ~20% SR-IOV, ~10% QAT, ~10% owned
 * by a SIP cluster. Lazy, so a 100k-host file can be written without holding it; deterministic for a
 * seed (a small PRNG, never Math.random). MACs are unique for up to 2^32 hosts; NIC and BMC addresses for
 * up to 2^20, so no two of 100,000 hosts share a BMC (bmc-duplicate).
 */
export function* generateBmhs(count: number, options: GenerateOptions): Generator<RawObject> {
  const random = mulberry32(options.seed);
  const pick = <T>(values: readonly [T, ...T[]]): T =>
    values[Math.floor(random() * values.length)] ?? values[0];
  const namespace = options.namespace ?? "site";
  const rackSize = options.rackSize ?? 20;
  for (let index = 0; index < count; index++) {
    const rack = `r${String(Math.floor(index / rackSize) + 1).padStart(4, "0")}`;
    const position = (index % rackSize) + 1;
    const name = `${rack}n${String(position).padStart(2, "0")}`;
    const nicCount = 2 + Math.floor(random() * 3);
    const dualStack = random() < 0.3;
    const nics: RawNicOptions[] = [];
    for (let nic = 0; nic < nicCount; nic++) {
      const mac = generatedMac(index, nic);
      const ipv4 = `10.${nic * 16 + ((index >>> 16) & 15)}.${(index >>> 8) & 255}.${index & 255}`;
      const ips =
        dualStack && nic === 0
          ? [ipv4, `fd00:${nic}::${hostHextets(index)}`, `fe80::${hostHextets(index)}%eno${nic + 1}`]
          : ipv4;
      nics.push({ name: `eno${nic + 1}`, mac, ip: ips });
    }
    const inspected = random() >= 0.05;
    const withNetworkData = random() < 0.25;
    const sip = random() < 0.1;
    const labels: Record<string, string> = {
      [FLAVOR_LABEL]: position <= 3 ? "control-plane" : "worker",
      "vino.airshipit.org/host": name,
      ...(sip && {
        [SIP_LABELS.namespace]: "tenant-a",
        [SIP_LABELS.name]: `cluster-${(Math.floor(index / rackSize) % 7) + 1}`,
        [SIP_LABELS.nodeType]: position <= 3 ? "ControlPlane" : "Worker",
      }),
    };
    const cpus = pick(CPU_COUNTS);
    const state = inspected
      ? pick(["provisioned", "provisioned", "provisioned", "externally provisioned", "available", "ready"])
      : pick(["registering", "inspecting"]);
    const bmh = makeBmh({
      name,
      namespace,
      rack,
      labels,
      sriov: random() < 0.2,
      qat: random() < 0.1,
      bootMac: generatedMac(index, 0),
      nics,
      cpus,
      ramMebibytes: pick(RAM_GIB) * 1024,
      hardware: inspected,
      state,
      bmc: {
        address: `redfish+https://10.${200 + ((index >>> 16) & 15)}.${(index >>> 8) & 255}.${index & 255}/redfish/v1/Systems/System.Embedded.1`,
        credentialsName: `${name}-bmc-credentials`,
      },
      ...(withNetworkData && { networkData: { name: `${name}-networkdata`, namespace } }),
    });
    // Bulk that real dumps carry and the loader must skip over cheaply.
    const metadata = bmh["metadata"];
    if (isObject(metadata)) {
      metadata["uid"] = `${hex(index, 8)}-3bd8-43b9-b899-${hex(index * 2654435761, 12)}`;
      metadata["resourceVersion"] = String(1000 + index);
      metadata["finalizers"] = ["baremetalhost.metal3.io"];
    }
    const status = bmh["status"];
    if (isObject(status)) {
      status["operationalStatus"] = "OK";
      status["poweredOn"] = true;
      const hardware = status["hardware"];
      if (isObject(hardware)) {
        hardware["storage"] = [
          { name: "/dev/sda", sizeBytes: 960 * 10 ** 9, rotational: false, model: "SSD" },
        ];
        hardware["systemVendor"] = { manufacturer: "Dell Inc.", productName: "PowerEdge R740xd" };
      }
    }
    yield bmh;
    if (withNetworkData) yield networkDataSecret(`${name}-networkdata`, namespace, index, random() < 0.5);
  }
}

/** A `kind: List` of {@link generateBmhs}, as `kubectl get bmh,secret -A -o yaml` prints it. */
export function generateBmhList(count: number, options: GenerateOptions): RawObject {
  return {
    apiVersion: "v1",
    kind: "List",
    items: [...generateBmhs(count, options)],
    metadata: { resourceVersion: "" },
  };
}

/** A networkData Secret in the OpenStack network_data format SIP uses, base64 or plain YAML. */
export function networkDataSecret(
  name: string,
  namespace: string | undefined,
  index: number,
  base64: boolean,
): RawObject {
  const networkData = {
    links: [{ id: "bond0", type: "bond", bond_links: ["eno1", "eno2"], mtu: 9100 }],
    networks: [
      {
        id: "oam-ipv4",
        type: "ipv4",
        link: "bond0",
        ip_address: `32.68.${(index >>> 8) & 255}.${index & 255}`,
      },
      {
        id: "pxe-ipv4",
        type: "ipv4",
        link: "eno1",
        ip_address: `172.30.${(index >>> 8) & 255}.${index & 255}`,
      },
      {
        id: "oam-ipv6",
        type: "ipv6",
        link: "bond0",
        ip_address: `2001:1890:1001:293d::${hostHextets(index)}`,
      },
    ],
  };
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, ...(namespace !== undefined && { namespace }) },
    type: "Opaque",
    ...(base64
      ? { data: { networkData: Buffer.from(JSON.stringify(networkData, null, 4)).toString("base64") } }
      : { stringData: { networkData: stringify(networkData) } }),
  };
}

/**
 * The text of a `kind: List` as `kubectl get -o json` prints it (4-space indent), piece by piece, so a
 * region-sized file can be written without building it in memory.
 */
export function* kubectlJson(items: Iterable<unknown>): Generator<string> {
  yield '{\n    "apiVersion": "v1",\n    "items": [';
  let first = true;
  for (const item of items) {
    yield `${first ? "" : ","}\n${JSON.stringify(item, null, 4).replace(/^/gm, "        ")}`;
    first = false;
  }
  yield `${first ? "" : "\n    "}],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n`;
}

/**
 * The text of a `kind: List` as `kubectl get -o yaml` prints it (`items:` at column 0, entries as
 * `- ` block sequence entries, keys sorted, lists at their key's column), piece by piece. `indent`
 * indents the entries instead, as some tools do.
 */
export function* kubectlYaml(items: Iterable<unknown>, indent = 0): Generator<string> {
  const pad = " ".repeat(indent);
  yield "apiVersion: v1\nitems:\n";
  for (const item of items) {
    const lines = stringify(item, { indentSeq: false, sortMapEntries: true }).trimEnd().split("\n");
    yield lines.map((line, index) => `${pad}${index === 0 ? "- " : "  "}${line}`).join("\n") + "\n";
  }
  yield 'kind: List\nmetadata:\n  resourceVersion: ""\n';
}

/** A locally administered MAC derived from `id`, stable across runs. */
export function macFor(id: string, nic: number): string {
  const value = hash(id);
  return [
    "02",
    hex(value >>> 24, 2),
    hex(value >>> 16, 2),
    hex(value >>> 8, 2),
    hex(value, 2),
    hex(nic, 2),
  ].join(":");
}

/** An IPv4 derived from `id`, stable across runs. */
export function ipFor(id: string, nic: number): string {
  // 24 bits of the hash: a test's few hundred hosts would share addresses in 16 (\`ip-duplicate\`).
  const value = hash(nic === 0 ? id : `${id}#${nic}`);
  return `10.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

function generatedMac(index: number, nic: number): string {
  return [
    "0c",
    hex(index >>> 24, 2),
    hex(index >>> 16, 2),
    hex(index >>> 8, 2),
    hex(index, 2),
    hex(nic, 2),
  ].join(":");
}

/**
 * The last hextets of generated host `index`'s IPv6 addresses: one up to 0xffff (as before), two
 * above, so a region of 100,000 hosts has no address a hextet of five digits makes invalid.
 */
export function hostHextets(index: number): string {
  const low = (index & 0xffff).toString(16);
  return index > 0xffff ? `${(index >>> 16).toString(16)}:${low}` : low;
}

function hex(value: number, width: number): string {
  return ((value >>> 0) % 16 ** width).toString(16).padStart(width, "0");
}

/** FNV-1a, for stable derived MACs and IPs. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}

/** mulberry32: a tiny, fast, seedable PRNG; good enough for test variety, not for anything secret. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
