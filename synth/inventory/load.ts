/**
 * Turns the objects of an inventory snapshot (docs/contract.md §1.3) into an {@link Inventory}. Pure: readers at
 * the edge parse files and feed objects in; this module decides what they mean.
 *
 * The result is independent of the order objects arrive in: everything is sorted by source position
 * before duplicates are resolved ("the first definition wins" means first in file/line order).
 */
import type { SourceDocument } from "../documents.ts";
import type { FieldPath } from "../field-path.ts";
import { formatPath } from "../field-path.ts";
import { compareIssues, compareText, issue } from "../issue.ts";
import type { Issue, SourcePosition } from "../issue.ts";
import type { RuleId } from "../rule-catalogue.ts";
import { parseDnsLabel, parseDnsSubdomain, type IpAddress } from "../checked.ts";
import type { FaultReport, HardwareFacts, HostDraft, HostFault, Report } from "./bmh.ts";
import {
  QAT_LABEL,
  SRIOV_LABEL,
  availabilityOf,
  identityOf,
  isOsInstalled,
  readHardware,
  readHostDraft,
  sipOwnerOf,
  sipPartialOf,
} from "./bmh.ts";
import type { Host, Nic, SetAsideHost } from "./host.ts";
import { detach } from "../detach.ts";
import { hygieneIssues } from "./hygiene.ts";
import { Inventory } from "./inventory.ts";
import { hasNetworkData, readNetworkData, type NetworkData } from "./network-data.ts";
import {
  DEFAULT_NAMESPACE,
  InternPool,
  describe,
  field,
  isListKind,
  isRecord,
  listItem,
  stringField,
  type RawObject,
} from "./raw.ts";

/** One top-level object of a snapshot file, as a reader hands it over. */
export interface InventoryObject {
  /** The parsed object (a BMH, a list of them, a HardwareData, a Secret, or anything else). */
  readonly value: unknown;
  /** Where the object starts. */
  readonly source: SourcePosition;
  /**
   * Position of a field inside `value`, when the reader can tell. Called only while the object is being
   * added, so a reader may free whatever backs it (a parsed YAML document) right after.
   */
  readonly position?: (path: FieldPath) => SourcePosition;
}

/** The loader's answer: the index, and every problem found on the way. */
export interface InventoryResult {
  readonly inventory: Inventory;
  readonly issues: Issue[];
}

const METAL3_GROUP = "metal3.io/";
// Shared empties: a region's snapshot has 100k hosts, most without networkData.
const NO_NETWORKS: Readonly<Record<string, IpAddress>> = Object.freeze({});
const NO_NICS: readonly Nic[] = Object.freeze([]);

interface Sourced<T> {
  readonly value: T;
  readonly source: SourcePosition;
}

/** What the files handed to {@link InventoryBuilder.beginFile} gave, for the `no-objects` check. */
interface FileUse {
  /** The file gave a BareMetalHost, HardwareData or networkData Secret. */
  used: boolean;
  /** The first object that was not one, for the message. */
  ignored?: { readonly what: string; readonly source: SourcePosition };
  /** How many objects were not one. */
  ignoredCount: number;
}

interface NetworkDataSecret {
  /** `metadata.namespace` as written; `undefined` when the snapshot file omits it. */
  readonly declaredNamespace?: string;
  readonly name: string;
  readonly networks: Readonly<Record<string, IpAddress>>;
  /** A bad `ip_address`: every host naming the Secret is set aside. */
  readonly fault?: NetworkData["fault"];
}

/**
 * Collects snapshot objects one at a time, keeping only the facts a {@link Host} needs, so a streaming
 * reader can drop each raw object (and every Secret value) as soon as it is added. {@link build}
 * resolves HardwareData and networkData references once every object is in.
 */
export class InventoryBuilder {
  readonly #hosts: Sourced<HostDraft>[] = [];
  readonly #hardware: Sourced<{ id: string; facts: HardwareFacts }>[] = [];
  readonly #secrets: Sourced<NetworkDataSecret>[] = [];
  readonly #issues: Issue[] = [];
  readonly #pool = new InternPool();
  readonly #files = new Map<string, FileUse>();

  /**
   * Announces that the objects of `file` follow. A file announced this way that yields nothing the
   * inventory uses, and no other finding either, gets a `no-objects` warning, so no file is ignored
   * without a word.
   */
  beginFile(file: string): void {
    if (!this.#files.has(file)) this.#files.set(file, { used: false, ignoredCount: 0 });
  }

  /**
   * Adds one top-level object; lists are unwrapped. Kinds the inventory does not read (a ConfigMap,
   * a Secret without networkData) are skipped; a BareMetalHost, HardwareData or networkData Secret
   * of another apiVersion is reported.
   */
  add(object: InventoryObject): void {
    const { value } = object;
    const report = this.#reporter(object);
    if (!isRecord(value)) {
      report([], `a document or list item must be a Kubernetes object, not ${describe(value)}; ignored`);
      return;
    }
    const kind = value["kind"];
    const apiVersion = value["apiVersion"];
    if (isListKind(kind)) {
      this.#addList(object, kind, apiVersion);
    } else if ((kind === "BareMetalHost" || kind === "HardwareData") && !isMetal3(apiVersion)) {
      this.#unknownVersion(object, kind, apiVersion, "metal3.io/v1alpha1");
    } else if (kind === "BareMetalHost") {
      reportNonMaps(value, report);
      const draft = readHostDraft(value, report, this.#pool, this.#faultReporter(object, value));
      if (draft) {
        this.#hosts.push({ value: draft, source: object.source });
        this.#use(object.source);
      }
    } else if (kind === "HardwareData") {
      const identity = identityOf(value, "HardwareData", report, this.#pool);
      const hardware = field(field(value, "spec"), "hardware");
      if (identity && !isRecord(hardware)) {
        report(["spec", "hardware"], `HardwareData ${identity.id} has no spec.hardware map; ignored`);
      } else if (identity && isRecord(hardware)) {
        const fault = this.#faultReporter(object, value);
        const facts = readHardware(hardware, ["spec", "hardware"], identity.id, report, this.#pool, fault);
        this.#hardware.push({ value: { id: identity.id, facts }, source: object.source });
        this.#use(object.source);
      }
    } else if (kind === "Secret" && hasNetworkData(value)) {
      if (apiVersion === "v1") this.#addNetworkData(value, object.source, report);
      else this.#unknownVersion(object, kind, apiVersion, "v1");
    } else {
      this.#ignore(object.source, typeof kind === "string" ? kind : "an object without kind");
    }
  }

  /** Records a problem found outside any object, e.g. a reader's parse error. */
  report(found: Issue): void {
    this.#issues.push(found);
  }

  #use(source: SourcePosition): void {
    const use = this.#files.get(source.file);
    if (use) use.used = true;
  }

  #ignore(source: SourcePosition, what: string): void {
    const use = this.#files.get(source.file);
    if (!use) return;
    use.ignored ??= { what, source };
    use.ignoredCount += 1;
  }

  #unknownVersion(object: InventoryObject, kind: string, apiVersion: unknown, expected: string): void {
    this.#issues.push(
      issue(
        "unknown-kind",
        "apiVersion",
        `${kind} with apiVersion ${describe(apiVersion)} is not one metalsynth reads (expected ${expected}); ignored`,
        { source: object.position ? object.position(["apiVersion"]) : object.source },
      ),
    );
  }

  /** Resolves references and duplicates and indexes the hosts. */
  build(): InventoryResult {
    const issues = [...this.#issues];
    const problem = (path: FieldPath, message: string, source: SourcePosition): void => {
      issues.push(issue("inventory-invalid", formatPath(path), message, { source }));
    };

    const unmatched = (path: FieldPath, message: string, source: SourcePosition): void => {
      issues.push(issue("inventory-unmatched", formatPath(path), message, { source }));
    };

    const secrets = new Map<string, NetworkDataSecret>();
    const secretSources = new Map<NetworkDataSecret, SourcePosition>();
    const namespaceless = new Map<string, NetworkDataSecret>();
    for (const { value: secret, source } of sortBySource(this.#secrets, (secret) => secretKey(secret))) {
      const key = secretKey(secret);
      secretSources.set(secret, source);
      if (secrets.has(key)) {
        problem(
          ["metadata", "name"],
          `Secret ${key} with networkData is defined twice; the first one is used`,
          source,
        );
        continue;
      }
      secrets.set(key, secret);
      if (secret.declaredNamespace === undefined && !namespaceless.has(secret.name)) {
        namespaceless.set(secret.name, secret);
      }
    }

    const hardware = new Map<string, HardwareFacts>();
    for (const { value, source } of sortBySource(this.#hardware, (entry) => entry.id)) {
      if (hardware.has(value.id)) {
        problem(
          ["metadata", "name"],
          `HardwareData ${value.id} is defined twice; the first one is used`,
          source,
        );
      } else {
        hardware.set(value.id, value.facts);
      }
    }

    const usedSecrets = new Set<NetworkDataSecret>();
    const hosts = new Map<string, Host>();
    const setAside = new Map<string, SetAsideHost>();
    for (const { value: draft, source } of sortBySource(this.#hosts, (entry) => entry.id)) {
      const first = (hosts.get(draft.id) ?? setAside.get(draft.id))?.source;
      if (first) {
        problem(
          ["metadata", "name"],
          `BareMetalHost ${draft.id} is defined twice (first at ${first.file}:${first.line}); this one is ignored`,
          source,
        );
        continue;
      }
      const networkData = draft.networkData;
      // Upstream SIP sample Secrets carry no namespace while the BMHs reference one: accept that.
      const secret =
        networkData &&
        (secrets.get(`${networkData.namespace}/${networkData.name}`) ?? namespaceless.get(networkData.name));
      if (secret) usedSecrets.add(secret);
      else if (networkData) {
        // A warning, not an error: docs/contract.md §1.3 falls back to the NIC named like the interface, and a
        // snapshot taken without Secrets is common (decision 0013).
        unmatched(
          ["spec", "networkData", "name"],
          `BareMetalHost ${draft.id} names networkData Secret ${networkData.namespace}/${networkData.name}, which is not in the inventory; SIP interface addresses fall back to NIC names (add the Secret to the inventory)`,
          source,
        );
      }
      const facts = draft.hardware ?? hardware.get(draft.id);
      if (secret?.fault) {
        const at = secretSources.get(secret) ?? source;
        issues.push(setAsideIssue("address-invalid", secret.fault.path, secret.fault.reason, draft.id, at));
      }
      const fault: HostFault | undefined =
        draft.fault ??
        facts?.fault ??
        (secret?.fault && { rule: "address-invalid", reason: secret.fault.reason });
      if (fault === undefined) {
        const host = toHost(draft, facts, secret, source);
        // readHostDraft gives every draft whose names fail these parsers a fault.
        if (host === undefined) throw new Error(`BareMetalHost ${draft.id}: a bad name without a fault`);
        hosts.set(draft.id, host);
      } else {
        const { rule, reason } = fault;
        setAside.set(draft.id, { id: draft.id, macs: hostMacs(draft, facts), rule, reason, source });
      }
    }
    for (const { value, source } of this.#hardware) {
      if (hosts.has(value.id) || setAside.has(value.id)) continue;
      unmatched(
        ["metadata", "name"],
        `HardwareData ${value.id} matches no BareMetalHost of the same namespace and name; it is not used`,
        source,
      );
    }
    for (const [key, secret] of secrets) {
      if (usedSecrets.has(secret)) continue;
      unmatched(
        ["metadata", "name"],
        `Secret ${key} holds networkData but no BareMetalHost names it in spec.networkData; it is not used`,
        secretSources.get(secret) ?? { file: "", line: 0, column: 0 },
      );
    }

    // A MAC two hosts claim names neither for sure: both are set aside (Metal3's and CAPM3's own
    // example hosts repeat one), and a CR naming it hears so.
    const macOwner = new Map<string, Host>();
    const shared = new Map<string, Host[]>();
    for (const host of [...hosts.values()].sort((a, b) => compareText(a.id, b.id))) {
      for (const mac of host.macs) {
        const owner = macOwner.get(mac);
        if (owner === undefined) macOwner.set(mac, host);
        else shared.set(mac, [...(shared.get(mac) ?? [owner]), host]);
      }
    }
    for (const [mac, owners] of shared) {
      const ids = owners.map((owner) => owner.id).join(", ");
      const reason = `MAC ${mac} belongs to ${owners.length} hosts (${ids})`;
      for (const host of owners) {
        const where = host.bootMac === mac ? ["spec", "bootMACAddress"] : ["status", "hardware", "nics"];
        issues.push(setAsideIssue("inventory-invalid", where, reason, host.id, host.source));
        hosts.delete(host.id);
        if (!setAside.has(host.id))
          setAside.set(host.id, {
            id: host.id,
            macs: host.macs,
            rule: "inventory-invalid",
            reason,
            source: host.source,
          });
      }
    }
    const sorted = [...hosts.values()].sort((a, b) => compareText(a.id, b.id));
    issues.push(...hygieneIssues(sorted));

    const mentioned = new Set(issues.flatMap((found) => (found.source ? [found.source.file] : [])));
    for (const [file, use] of this.#files) {
      if (use.used || mentioned.has(file)) continue;
      const found = use.ignored
        ? ` (found ${use.ignored.what}${use.ignoredCount > 1 ? ` and ${use.ignoredCount - 1} more object(s)` : ""})`
        : "";
      issues.push(
        issue(
          "no-objects",
          "",
          `file holds no BareMetalHost, HardwareData or networkData Secret${found}; nothing in it is used`,
          { source: use.ignored?.source ?? { file, line: 1, column: 1 } },
        ),
      );
    }

    const aside = [...setAside.values()].sort((a, b) => compareText(a.id, b.id));
    return { inventory: new Inventory(sorted, aside), issues: issues.sort(compareIssues) };
  }

  #addList(object: InventoryObject, kind: string, apiVersion: unknown): void {
    const items = field(object.value, "items");
    if (items === null || items === undefined) {
      // `items: null` is how an empty list is often printed.
      this.#ignore(object.source, `an empty ${kind}`);
      return;
    }
    if (!Array.isArray(items)) {
      this.#reporter(object)(["items"], `${kind}.items must be a list, not ${describe(items)}; ignored`);
      return;
    }
    if (items.length === 0) this.#ignore(object.source, `an empty ${kind}`);
    const header = { kind, ...(typeof apiVersion === "string" && { apiVersion }) };
    const { position } = object;
    items.forEach((item: unknown, index) => {
      this.add({
        value: listItem(header, item),
        source: position ? position(["items", index]) : object.source,
        ...(position && { position: (path: FieldPath) => position(["items", index, ...path]) }),
      });
    });
  }

  #addNetworkData(secret: unknown, source: SourcePosition, report: Report): void {
    const name = stringField(field(secret, "metadata"), "name");
    const namespace = stringField(field(secret, "metadata"), "namespace");
    if (name === undefined || name === "") {
      report(["metadata", "name"], "Secret with networkData but without metadata.name is ignored");
      return;
    }
    const owner = `${namespace || DEFAULT_NAMESPACE}/${name}`;
    const networkData = readNetworkData(secret, owner, report, this.#pool);
    if (networkData === undefined) return;
    this.#use(source);
    this.#secrets.push({
      value: {
        ...(namespace !== undefined &&
          namespace !== "" && { declaredNamespace: this.#pool.intern(namespace) }),
        name: detach(name),
        networks: networkData.networks,
        ...(networkData.fault && { fault: networkData.fault }),
      },
      source,
    });
  }

  /** Reports a host's bad fact where it stands; the host itself is set aside in {@link build}. */
  #faultReporter(object: InventoryObject, value: unknown): FaultReport {
    const metadata = field(value, "metadata");
    const id = `${stringField(metadata, "namespace") || DEFAULT_NAMESPACE}/${stringField(metadata, "name") ?? ""}`;
    return (path, fault) => {
      const source = object.position ? object.position(path) : object.source;
      this.#issues.push(setAsideIssue(fault.rule, path, fault.reason, id, source));
    };
  }

  #reporter(object: InventoryObject): Report {
    return (path, message) => {
      const source = object.position ? object.position(path) : object.source;
      this.#issues.push(issue("inventory-invalid", formatPath(path), message, { source }));
    };
  }
}

/** Parsed documents as snapshot objects: each with where it starts and where its fields are. */
export function documentObjects(documents: readonly SourceDocument[]): InventoryObject[] {
  return documents.map((document) => ({
    value: document.value,
    source: document.position([]),
    position: document.position,
  }));
}

/**
 * Builds an inventory from snapshot objects. Convenience for callers that already hold every object;
 * streaming readers use {@link InventoryBuilder} directly.
 */
export function buildInventory(objects: Iterable<InventoryObject>): InventoryResult {
  const builder = new InventoryBuilder();
  for (const object of objects) builder.add(object);
  return builder.build();
}

/** The parts of a BareMetalHost that must be maps: anything else would be skipped without a word. */
const HOST_MAPS: readonly (readonly string[])[] = [
  ["metadata"],
  ["spec"],
  ["status"],
  ["status", "hardware"],
];

function reportNonMaps(host: RawObject, report: Report): void {
  for (const path of HOST_MAPS) {
    let found: unknown = host;
    for (const key of path) found = field(found, key);
    if (found !== undefined && found !== null && !isRecord(found))
      report(path, `BareMetalHost ${formatPath(path)} must be a map, not ${describe(found)}; it is ignored`);
  }
}

function isMetal3(apiVersion: unknown): boolean {
  // Hand-written snapshots sometimes omit apiVersion; any other group's BareMetalHost is not ours.
  return apiVersion === undefined || (typeof apiVersion === "string" && apiVersion.startsWith(METAL3_GROUP));
}

function secretKey(secret: NetworkDataSecret): string {
  return `${secret.declaredNamespace ?? DEFAULT_NAMESPACE}/${secret.name}`;
}

/**
 * File/line/column order, then the object's key; a full tie (the same key at the same spot, which
 * only a caller that gives every object one source produces) falls back to the content, so even then
 * the input order can't leak into the result.
 */
function sortBySource<T>(entries: readonly Sourced<T>[], key: (value: T) => string): Sourced<T>[] {
  return [...entries].sort(
    (a, b) =>
      compareText(a.source.file, b.source.file) ||
      a.source.line - b.source.line ||
      a.source.column - b.source.column ||
      compareText(key(a.value), key(b.value)) ||
      compareText(JSON.stringify(a.value), JSON.stringify(b.value)),
  );
}

/**
 * A finding about a host the loader sets aside. A warning whatever the rule's catalogue severity: the
 * host is out of the inventory, so nothing rendered depends on it and the rest of the site goes on;
 * a CR that names it gets the error (decision 0031).
 */
function setAsideIssue(
  rule: RuleId,
  path: FieldPath,
  reason: string,
  host: string,
  source: SourcePosition | undefined,
): Issue {
  // The id is as written, and may be why the host is set aside: quoted, a line break can't leave the line.
  const named = /^[\x21-\x7e]+$/.test(host) ? host : JSON.stringify(host);
  const message = `BareMetalHost ${named}: ${reason}; the host is set aside (no cluster gets it)`;
  return { rule, severity: "warning", path: formatPath(path), message, host, ...(source && { source }) };
}

/** Every distinct MAC of a host (boot MAC and all NICs), sorted. */
function hostMacs(draft: HostDraft, hardware: HardwareFacts | undefined): string[] {
  const macs = new Set<string>();
  if (draft.bootMac !== undefined) macs.add(draft.bootMac);
  for (const nic of hardware?.nics ?? []) macs.add(nic.mac);
  return [...macs].sort(compareText);
}

/** The host of a draft without a fault, or `undefined` when its name or namespace is not valid. */
function toHost(
  draft: HostDraft,
  hardware: HardwareFacts | undefined,
  secret: NetworkDataSecret | undefined,
  source: SourcePosition,
): Host | undefined {
  const namespace = parseDnsLabel(draft.namespace);
  const name = parseDnsSubdomain(draft.name);
  if (namespace === undefined || name === undefined) return undefined;
  const sipOwner = sipOwnerOf(draft.labels);
  // Every field is written, absent ones as `undefined`, in one order: hosts with different sets of
  // fields would have different hidden classes, and past four of them every read of a host's field
  // in planning's hot paths goes through V8's megamorphic lookup (a hub's hosts had eight).
  const host: Host = {
    id: draft.id,
    namespace,
    name,
    labels: draft.labels,
    bootMac: draft.bootMac,
    macs: hostMacs(draft, hardware),
    nics: hardware?.nics ?? NO_NICS,
    cpus: hardware?.cpus,
    memoryBytes: hardware?.memoryBytes,
    cpuArch: hardware?.cpuArch,
    cpuModel: hardware?.cpuModel,
    cpuFlags: hardware?.cpuFlags,
    disks: hardware?.disks,
    sriov: draft.labels[SRIOV_LABEL] === "true",
    qat: draft.labels[QAT_LABEL] === "true",
    provisioningState: draft.provisioningState,
    osInstalled: isOsInstalled(draft.provisioningState),
    availability: availabilityOf(draft.availability, draft.provisioningState),
    networks: secret?.networks ?? NO_NETWORKS,
    networkData:
      draft.networkData === undefined ? undefined : { ...draft.networkData, found: secret !== undefined },
    bmc: draft.bmc,
    sipOwner,
    sipPartial: sipOwner === undefined ? sipPartialOf(draft.labels) : undefined,
    source,
  };
  return host;
}
