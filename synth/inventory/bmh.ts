/**
 * Reads the facts of docs/contract.md §1.3 out of raw `BareMetalHost` and `HardwareData` objects. Each function
 * keeps only what a {@link Host} needs, so a caller can drop the raw object right away.
 */
import {
  EXPECTED,
  parseDnsLabel,
  parseDnsSubdomain,
  parseCpuFlag,
  parseIpAddress,
  type CpuFlag,
  type DnsSubdomain,
  type IpAddress,
} from "../checked.ts";
import type { FieldPath } from "../field-path.ts";
import { normalizeMac } from "../mac.ts";
import type { Availability, Disk, Nic, PartialSipLabels, SipOwnership, Unavailable } from "./host.ts";
import { detach } from "../detach.ts";
import { DEFAULT_NAMESPACE, InternPool, describe, field, isRecord, stringField } from "./raw.ts";
import { compareText } from "../issue.ts";

/** Reports a problem at a field path of the object being read. */
export type Report = (path: FieldPath, message: string) => void;

/** Why a host must be set aside: the rule its fact broke, and what is wrong, for messages. */
export interface HostFault {
  readonly rule: "name-invalid" | "address-invalid" | "inventory-invalid";
  readonly reason: string;
}

/**
 * Reports a bad fact of a host at a field path: the host is set aside (never chosen), the rest of
 * the site goes on (decision 0031).
 */
export type FaultReport = (path: FieldPath, fault: HostFault) => void;

/** Label that marks a host SR-IOV capable (BMH hardware details don't say). */
export const SRIOV_LABEL = "feature.metalsynth.io/sriov";
/** Label that marks a host QAT capable. */
export const QAT_LABEL = "feature.metalsynth.io/qat";
/** SIP ownership labels, as the SIP operator writes them. */
export const SIP_LABELS = {
  namespace: "sip.airshipit.org/cluster-namespace",
  name: "sip.airshipit.org/cluster-name",
  nodeType: "sip.airshipit.org/node-type",
} as const;
/** Metal3's annotation that stops the operator reconciling a host. */
export const PAUSED_ANNOTATION = "baremetalhost.metal3.io/paused";
/** Metal3's annotation that detaches a host from Ironic. */
export const DETACHED_ANNOTATION = "baremetalhost.metal3.io/detached";
/**
 * The annotation `metalsynth inventory pull` writes on a host it could not read cleanly, holding
 * `<rule>: <reason>`: the loader sets the host aside again with that rule and reason, so a snapshot
 * never loses a host (decision 0052).
 */
export const SET_ASIDE_ANNOTATION = "metalsynth.io/set-aside";
/** Provisioning states of a host going away (Metal3's deletion and deprovisioning states). */
const DELETING_STATES: ReadonlySet<string> = new Set([
  "deleting",
  "deprovisioning",
  "powering off before delete",
]);
/** Operational states of a host that can't be used. */
const BROKEN_STATES: ReadonlySet<string> = new Set(["error", "detached"]);
/** Provisioning states in which the host's OS is installed. */
const OS_INSTALLED_STATES: ReadonlySet<string> = new Set(["provisioned", "externally provisioned"]);

/** `T` with its fields writable, to fill in an object before it is handed out read-only. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Hardware facts from `status.hardware` or a HardwareData's `spec.hardware`. */
export interface HardwareFacts {
  readonly nics: readonly Nic[];
  /** The first NIC address that is not an address; the host is set aside. */
  readonly fault?: HostFault;
  readonly cpus?: number;
  readonly memoryBytes?: number;
  readonly cpuArch?: string;
  readonly cpuModel?: string;
  readonly cpuFlags?: readonly CpuFlag[];
  readonly disks?: readonly Disk[];
}

/** What the loader keeps of one BMH until all objects are in and references can be resolved. */
export interface HostDraft {
  readonly id: string;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly bootMac?: string;
  /** `status.hardware`; `undefined` lets a HardwareData fill in. */
  readonly hardware?: HardwareFacts;
  readonly provisioningState?: string;
  readonly bmc?: { readonly address: string; readonly credentialsName?: DnsSubdomain };
  /** `spec.networkData`, with the namespace defaulted to the host's own. */
  readonly networkData?: { readonly namespace: string; readonly name: string };
  /** The first bad fact of the BMH itself (its name or a NIC address); the host is set aside. */
  readonly fault?: HostFault;
  /** The availability facts the BMH has (its reasons are worded once the state is known too). */
  readonly availability?: AvailabilityFacts;
}

/** {@link Availability} as read, before its reasons are worded. */
export type AvailabilityFacts = Omit<Availability, "reasons">;

/** `metadata.namespace` or Kubernetes' default for objects written without one. */
export function namespaceOf(value: unknown): string | undefined {
  const namespace = field(field(value, "metadata"), "namespace");
  if (namespace === undefined || namespace === null || namespace === "") return DEFAULT_NAMESPACE;
  return typeof namespace === "string" ? namespace : undefined;
}

/** The `namespace`/`name` identity of an object, or a report saying why it has none. */
export function identityOf(
  value: unknown,
  kind: string,
  report: Report,
  pool: InternPool = new InternPool(),
): { namespace: string; name: string; id: string } | undefined {
  const name = field(field(value, "metadata"), "name");
  if (typeof name !== "string" || name === "") {
    report(["metadata", "name"], `${kind} without metadata.name is ignored (found ${describe(name)})`);
    return undefined;
  }
  const namespace = namespaceOf(value);
  if (namespace === undefined) {
    report(
      ["metadata", "namespace"],
      `${kind} ${name}: metadata.namespace must be a string; the object is ignored`,
    );
    return undefined;
  }
  return { namespace: pool.intern(namespace), name: detach(name), id: detach(`${namespace}/${name}`) };
}

/**
 * Reads one BareMetalHost, or `undefined` when it has no usable identity (reported). Kept strings come
 * from `pool`, so the draft shares no memory with `value`.
 */
export function readHostDraft(
  value: unknown,
  report: Report,
  pool: InternPool = new InternPool(),
  fault: FaultReport = () => {},
): HostDraft | undefined {
  const identity = identityOf(value, "BareMetalHost", report, pool);
  if (!identity) return undefined;
  const { id, namespace } = identity;
  // The name reaches haproxy.cfg, ssh_config and object names, the namespace rendered/'s paths.
  let nameFault: HostFault | undefined;
  if (parseDnsLabel(namespace) === undefined) {
    nameFault = {
      rule: "name-invalid",
      reason: `metadata.namespace ${JSON.stringify(namespace)} is not ${EXPECTED.dnsLabel}`,
    };
    fault(["metadata", "namespace"], nameFault);
  }
  if (parseDnsSubdomain(identity.name) === undefined) {
    const nameProblem: HostFault = {
      rule: "name-invalid",
      reason: `metadata.name ${JSON.stringify(identity.name)} is not ${EXPECTED.dnsSubdomain}`,
    };
    nameFault ??= nameProblem;
    fault(["metadata", "name"], nameProblem);
  }
  const spec = field(value, "spec");
  const status = field(value, "status");
  const labels = readLabels(field(field(value, "metadata"), "labels"), id, report, pool);

  let bootMac: string | undefined;
  const rawBootMac = field(spec, "bootMACAddress");
  if (rawBootMac !== undefined && rawBootMac !== null && rawBootMac !== "") {
    bootMac = readMac(rawBootMac, ["spec", "bootMACAddress"], id, report);
  }

  const rawHardware = field(status, "hardware");
  const hardware = isRecord(rawHardware)
    ? readHardware(rawHardware, ["status", "hardware"], id, report, pool, fault)
    : undefined;

  const state = stringField(field(status, "provisioning"), "state");
  const bmcAddress = stringField(field(spec, "bmc"), "address");
  const credentialsText = stringField(field(spec, "bmc"), "credentialsName");
  // The jump host mounts the Secret by this name: it reaches a pod spec.
  const credentialsName = credentialsText ? parseDnsSubdomain(detach(credentialsText)) : undefined;
  if (credentialsText && credentialsName === undefined) {
    const problem: HostFault = {
      rule: "name-invalid",
      reason: `spec.bmc.credentialsName ${JSON.stringify(credentialsText)} is not ${EXPECTED.dnsSubdomain}`,
    };
    nameFault ??= problem;
    fault(["spec", "bmc", "credentialsName"], problem);
  }
  const availability = readAvailability(value, pool);
  const networkDataName = stringField(field(spec, "networkData"), "name");
  const networkDataNamespace = stringField(field(spec, "networkData"), "namespace");

  // Assigned field by field, not spread: this runs once per host of a region's snapshot, and
  // conditional spreads cost a third of it.
  const draft: Mutable<HostDraft> = { namespace, name: identity.name, id, labels };
  const recorded = setAsideBefore(value);
  if (recorded !== undefined) fault(["metadata", "annotations", SET_ASIDE_ANNOTATION], recorded);
  const firstFault = nameFault ?? hardware?.fault ?? recorded;
  if (firstFault !== undefined) draft.fault = firstFault;
  if (bootMac !== undefined) draft.bootMac = bootMac;
  if (hardware !== undefined) draft.hardware = hardware;
  if (state !== undefined && state !== "") draft.provisioningState = pool.intern(state);
  if (availability !== undefined) draft.availability = availability;
  if (bmcAddress !== undefined && bmcAddress !== "") {
    draft.bmc =
      credentialsName !== undefined
        ? { address: detach(bmcAddress), credentialsName }
        : { address: detach(bmcAddress) };
  }
  if (networkDataName !== undefined && networkDataName !== "") {
    draft.networkData = {
      namespace: networkDataNamespace ? pool.intern(networkDataNamespace) : namespace,
      name: detach(networkDataName),
    };
  }
  return draft;
}

/**
 * The availability facts of a BareMetalHost, or `undefined` when none says it is unavailable. Values
 * of the wrong type are read as absent: the API server's schema refuses them on a live object.
 */
function readAvailability(value: unknown, pool: InternPool): AvailabilityFacts | undefined {
  const metadata = field(value, "metadata");
  const spec = field(value, "spec");
  const status = field(value, "status");
  const facts: Mutable<AvailabilityFacts> = {};
  const consumer = field(spec, "consumerRef");
  if (isRecord(consumer)) {
    const namespace = stringField(consumer, "namespace");
    facts.consumer = {
      kind: pool.intern(stringField(consumer, "kind") || "consumer"),
      ...(namespace ? { namespace: pool.intern(namespace) } : {}),
      name: detach(stringField(consumer, "name") ?? ""),
    };
  }
  const deletion = stringField(metadata, "deletionTimestamp");
  if (deletion) facts.deletionTimestamp = detach(deletion);
  if (field(spec, "online") === false) facts.offline = true;
  if (field(status, "poweredOn") === false) facts.poweredOff = true;
  const operational = stringField(status, "operationalStatus");
  if (operational !== undefined && BROKEN_STATES.has(operational))
    facts.operationalStatus = pool.intern(operational);
  const errorType = stringField(status, "errorType");
  if (errorType) facts.errorType = pool.intern(errorType);
  const annotations = field(metadata, "annotations");
  const paused = stringField(annotations, PAUSED_ANNOTATION);
  if (paused !== undefined) facts.paused = detach(paused);
  const detached = stringField(annotations, DETACHED_ANNOTATION);
  if (detached !== undefined) facts.detached = detach(detached);
  return Object.keys(facts).length === 0 ? undefined : facts;
}

/**
 * A host's {@link Availability}: its facts and what they mean with its provisioning state, or
 * `undefined` when it is available.
 */
export function availabilityOf(
  facts: AvailabilityFacts | undefined,
  provisioningState: string | undefined,
): Availability | undefined {
  const reasons: Unavailable[] = [];
  const consumer = facts?.consumer;
  if (consumer !== undefined) {
    const named = `${consumer.namespace === undefined ? "" : `${consumer.namespace}/`}${consumer.name}`;
    reasons.push({ reason: "consumed", fact: `spec.consumerRef: ${consumer.kind} ${named}` });
  }
  if (facts?.deletionTimestamp !== undefined)
    reasons.push({ reason: "deleting", fact: `metadata.deletionTimestamp: ${facts.deletionTimestamp}` });
  if (provisioningState !== undefined && DELETING_STATES.has(provisioningState))
    reasons.push({ reason: "deleting", fact: `status.provisioning.state: ${provisioningState}` });
  if (facts?.offline) reasons.push({ reason: "off", fact: "spec.online: false" });
  if (facts?.poweredOff) reasons.push({ reason: "off", fact: "status.poweredOn: false" });
  if (facts?.operationalStatus !== undefined)
    reasons.push({ reason: "broken", fact: `status.operationalStatus: ${facts.operationalStatus}` });
  if (facts?.errorType !== undefined)
    reasons.push({ reason: "broken", fact: `status.errorType: ${facts.errorType}` });
  if (facts?.paused !== undefined)
    reasons.push({ reason: "paused", fact: `annotation ${PAUSED_ANNOTATION}` });
  if (facts?.detached !== undefined)
    reasons.push({ reason: "detached", fact: `annotation ${DETACHED_ANNOTATION}` });
  return reasons.length === 0 ? undefined : { ...facts, reasons };
}

/** The set-aside fault a snapshot recorded on the host (see {@link SET_ASIDE_ANNOTATION}), if any. */
function setAsideBefore(value: unknown): HostFault | undefined {
  const note = stringField(field(field(value, "metadata"), "annotations"), SET_ASIDE_ANNOTATION);
  if (note === undefined) return undefined;
  const colon = note.indexOf(": ");
  const rule = colon === -1 ? "" : note.slice(0, colon);
  const reason = detach(colon === -1 ? note : note.slice(colon + 2));
  return {
    rule: SET_ASIDE_RULES.find((known) => known === rule) ?? "inventory-invalid",
    reason: `set aside when the snapshot was taken: ${reason}`,
  };
}

/** The rules a host may be set aside by, as the set-aside annotation names them. */
const SET_ASIDE_RULES: readonly HostFault["rule"][] = [
  "name-invalid",
  "address-invalid",
  "inventory-invalid",
];

/** True when the provisioning state means the OS is installed. */
export function isOsInstalled(state: string | undefined): boolean {
  return state !== undefined && OS_INSTALLED_STATES.has(state);
}

/** The SIP owner from the three SIP labels, when all are set. */
export function sipOwnerOf(labels: Readonly<Record<string, string>>): SipOwnership | undefined {
  const namespace = labels[SIP_LABELS.namespace];
  const name = labels[SIP_LABELS.name];
  const nodeType = labels[SIP_LABELS.nodeType];
  if (namespace === undefined || name === undefined || nodeType === undefined) return undefined;
  return { namespace, name, nodeType };
}

/** The SIP labels of a host that has some of the three but not all, else undefined. */
export function sipPartialOf(labels: Readonly<Record<string, string>>): PartialSipLabels | undefined {
  const namespace = labels[SIP_LABELS.namespace];
  const name = labels[SIP_LABELS.name];
  const nodeType = labels[SIP_LABELS.nodeType];
  const present = [namespace, name, nodeType].filter((value) => value !== undefined).length;
  if (present === 0 || present === 3) return undefined;
  const partial: Mutable<PartialSipLabels> = {};
  if (namespace !== undefined) partial.namespace = namespace;
  if (name !== undefined) partial.name = name;
  if (nodeType !== undefined) partial.nodeType = nodeType;
  return partial;
}

/**
 * Reads `cpu.count`, `ramMebibytes` and `nics` of a hardware block. Dual-stack dumps list a NIC once
 * per address: entries with the same MAC and name merge into one {@link Nic} holding the IPv4 and/or
 * a global IPv6; link-local addresses (`fe80::…%enp1s0`) are dropped.
 */
export function readHardware(
  hardware: unknown,
  base: FieldPath,
  owner: string,
  report: Report,
  pool: InternPool = new InternPool(),
  fault: FaultReport = () => {},
): HardwareFacts {
  const cpus = positiveInteger(
    field(field(hardware, "cpu"), "count"),
    [...base, "cpu", "count"],
    owner,
    report,
  );
  const mebibytes = positiveInteger(
    field(hardware, "ramMebibytes"),
    [...base, "ramMebibytes"],
    owner,
    report,
  );
  const nics: { name: string; mac: string; ipv4?: IpAddress; ipv6?: IpAddress; speedGbps?: number }[] = [];
  let firstFault: HostFault | undefined;
  const rawNics = field(hardware, "nics");
  if (Array.isArray(rawNics)) {
    rawNics.forEach((rawNic: unknown, index) => {
      const rawMac = field(rawNic, "mac");
      if (rawMac === undefined || rawMac === null || rawMac === "") return; // e.g. a bond without its own MAC
      const mac = readMac(rawMac, [...base, "nics", index, "mac"], owner, report);
      if (mac === undefined) return;
      const name = pool.intern(stringField(rawNic, "name") ?? "");
      let nic = nics.find((known) => known.mac === mac && known.name === name);
      if (!nic) nics.push((nic = { name, mac }));
      // Dual-stack dumps repeat a NIC per address, each with its speed.
      const speed = positiveInteger(
        field(rawNic, "speedGbps"),
        [...base, "nics", index, "speedGbps"],
        owner,
        report,
      );
      if (speed !== undefined) nic.speedGbps = Math.max(nic.speedGbps ?? 0, speed);
      const text = stringField(rawNic, "ip") ?? "";
      // Link-local addresses carry a zone (`fe80::1%enp1s0`): not an address a peer can use, not bad.
      if (text === "" || isLinkLocal(text)) return;
      if (parseIpAddress(text) === undefined) {
        const problem: HostFault = {
          rule: "address-invalid",
          reason: `NIC ${mac} has ip ${JSON.stringify(text)}, which is not ${EXPECTED.ipAddress}`,
        };
        firstFault ??= problem;
        fault([...base, "nics", index, "ip"], problem);
      } else if (text.includes(":")) {
        if (nic.ipv6 === undefined && isGlobalIpv6(text)) nic.ipv6 = parseIpAddress(detach(text));
      } else nic.ipv4 ??= parseIpAddress(detach(text));
    });
  }
  const facts: Mutable<HardwareFacts> = { nics };
  const disks = readDisks(field(hardware, "storage"), [...base, "storage"], owner, report);
  if (disks.length > 0) facts.disks = pool.internList("disks", disks, diskKey);
  if (firstFault !== undefined) facts.fault = firstFault;
  if (cpus !== undefined) facts.cpus = cpus;
  if (mebibytes !== undefined) facts.memoryBytes = mebibytes * 2 ** 20;
  const arch = stringField(field(hardware, "cpu"), "arch");
  if (arch !== undefined && arch !== "") facts.cpuArch = pool.intern(arch);
  const model = stringField(field(hardware, "cpu"), "model");
  if (model !== undefined && model.trim() !== "") facts.cpuModel = pool.intern(model);
  const flags = field(field(hardware, "cpu"), "flags");
  if (Array.isArray(flags)) {
    const read = flags.flatMap((flag: unknown) =>
      typeof flag === "string" && flag.trim() !== "" ? [flag] : [],
    );
    if (read.length > 0)
      facts.cpuFlags = pool.internList(
        "cpuFlags",
        [...new Set(read.map((flag) => parseCpuFlag(pool.intern(flag))))].sort(compareText),
        (flag) => flag,
      );
  }
  return facts;
}

/** The disks of `status.hardware.storage` whose size is known, smallest first, solid-state before rotational. */
function readDisks(raw: unknown, path: FieldPath, owner: string, report: Report): Disk[] {
  if (!Array.isArray(raw)) return [];
  const disks = raw.flatMap((disk: unknown, index): Disk[] => {
    const sizeBytes = positiveInteger(field(disk, "sizeBytes"), [...path, index, "sizeBytes"], owner, report);
    const rotational = field(disk, "rotational");
    if (sizeBytes === undefined) return [];
    return [typeof rotational === "boolean" ? { sizeBytes, rotational } : { sizeBytes }];
  });
  return disks.sort(
    (a, b) => a.sizeBytes - b.sizeBytes || Number(a.rotational ?? 2) - Number(b.rotational ?? 2),
  );
}

/** What tells two disks apart, for sharing one list among hosts with the same disks. */
function diskKey({ sizeBytes, rotational }: Disk): string {
  return `${sizeBytes}/${rotational ?? ""}`;
}

function readLabels(raw: unknown, owner: string, report: Report, pool: InternPool): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) {
    report(
      ["metadata", "labels"],
      `BareMetalHost ${owner}: metadata.labels must be a map; labels are ignored`,
    );
    return {};
  }
  const labels: [string, string][] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === "string") {
      labels.push([pool.intern(key), pool.intern(value)]);
    } else if (typeof value === "boolean" || typeof value === "number") {
      // Kubernetes would refuse the object; reading it as the string it looks like is what the user meant.
      labels.push([pool.intern(key), pool.intern(String(value))]);
      report(
        ["metadata", "labels", key],
        `BareMetalHost ${owner}: label value ${String(value)} must be a string; quote it ("${String(value)}")`,
      );
    } else {
      report(
        ["metadata", "labels", key],
        `BareMetalHost ${owner}: label value must be a string; the label is ignored`,
      );
    }
  }
  // fromEntries defines own properties, so a "__proto__" label stays a label.
  return Object.fromEntries(labels);
}

function readMac(raw: unknown, path: FieldPath, owner: string, report: Report): string | undefined {
  const mac = typeof raw === "string" ? normalizeMac(raw) : undefined;
  // A MAC already canonical comes back as the raw text, which may be a slice of a whole chunk of file.
  if (mac !== undefined) return detach(mac);
  report(
    path,
    `BareMetalHost ${owner}: ${describe(raw)} is not a MAC address (expected aa:bb:cc:dd:ee:ff, ` +
      `AA-BB-CC-DD-EE-FF or aabb.ccdd.eeff); the MAC is ignored`,
  );
  return undefined;
}

/** A count that must be a positive integer; absent or 0 means unknown, anything else is reported. */
function positiveInteger(raw: unknown, path: FieldPath, owner: string, report: Report): number | undefined {
  if (raw === undefined || raw === null || raw === 0) return undefined;
  if (typeof raw === "number" && Number.isSafeInteger(raw) && raw > 0) return raw;
  report(path, `BareMetalHost ${owner}: ${describe(raw)} is not a positive whole number; treated as unknown`);
  return undefined;
}

/** A link-local IPv6 address, zone and all (`fe80::…%if`); dual-stack dumps list one per NIC. */
function isLinkLocal(text: string): boolean {
  return text.includes("%") || /^fe[89ab][0-9a-f]?:/i.test(text);
}

/** An IPv6 address that is not link-local (`fe80::/10`, or scoped with `%if`) nor loopback/unspecified. */
export function isGlobalIpv6(text: string): boolean {
  if (!text.includes(":") || text.includes("%") || !/^[0-9a-f:.]+$/i.test(text)) return false;
  if (/^fe[89ab]/i.test(text)) return false;
  return text !== "::1" && text !== "::";
}
