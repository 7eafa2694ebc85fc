/**
 * Turns the objects of an inventory snapshot (SPEC §1.3) into an {@link Inventory}. Pure: readers at
 * the edge parse files and feed objects in; this module decides what they mean.
 *
 * The result is independent of the order objects arrive in: everything is sorted by source position
 * before duplicates are resolved ("the first definition wins" means first in file/line order).
 */
import type { FieldPath } from "../field-path.ts";
import { formatPath } from "../field-path.ts";
import { compareIssues, compareText, issue } from "../issue.ts";
import type { Issue, SourcePosition } from "../issue.ts";
import type { HardwareFacts, HostDraft, Report } from "./bmh.ts";
import {
  QAT_LABEL,
  SRIOV_LABEL,
  identityOf,
  isOsInstalled,
  readHardware,
  readHostDraft,
  sipOwnerOf,
} from "./bmh.ts";
import type { Host, Nic } from "./host.ts";
import { Inventory } from "./inventory.ts";
import { hasNetworkData, readNetworkData } from "./network-data.ts";
import {
  DEFAULT_NAMESPACE,
  StringPool,
  detach,
  field,
  isListKind,
  isRecord,
  listItem,
  stringField,
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
const NO_NETWORKS: Readonly<Record<string, string>> = Object.freeze({});
const NO_NICS: readonly Nic[] = Object.freeze([]);

interface Sourced<T> {
  readonly value: T;
  readonly source: SourcePosition;
}

interface NetworkDataSecret {
  /** `metadata.namespace` as written; `undefined` when the snapshot file omits it. */
  readonly declaredNamespace?: string;
  readonly name: string;
  readonly networks: Readonly<Record<string, string>>;
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
  readonly #strings = new StringPool();

  /** Adds one top-level object; lists are unwrapped, unknown kinds are ignored silently. */
  add(object: InventoryObject): void {
    const { value } = object;
    if (!isRecord(value)) return;
    const kind = value["kind"];
    const apiVersion = value["apiVersion"];
    const report = this.#reporter(object);
    if (isListKind(kind)) {
      this.#addList(object, kind, apiVersion);
    } else if (kind === "BareMetalHost" && isMetal3(apiVersion)) {
      const draft = readHostDraft(value, report, this.#strings);
      if (draft) this.#hosts.push({ value: draft, source: object.source });
    } else if (kind === "HardwareData" && isMetal3(apiVersion)) {
      const identity = identityOf(value, "HardwareData", report, this.#strings);
      const hardware = field(field(value, "spec"), "hardware");
      if (identity && isRecord(hardware)) {
        const facts = readHardware(hardware, ["spec", "hardware"], identity.id, report, this.#strings);
        this.#hardware.push({ value: { id: identity.id, facts }, source: object.source });
      }
    } else if (kind === "Secret" && apiVersion === "v1" && hasNetworkData(value)) {
      this.#addNetworkData(value, object.source, report);
    }
  }

  /** Records a problem found outside any object, e.g. a reader's parse error. */
  report(found: Issue): void {
    this.#issues.push(found);
  }

  /** Resolves references and duplicates and indexes the hosts. */
  build(): InventoryResult {
    const issues = [...this.#issues];
    const problem = (path: FieldPath, message: string, source: SourcePosition): void => {
      issues.push(issue("inventory-invalid", formatPath(path), message, { source }));
    };

    const secrets = new Map<string, NetworkDataSecret>();
    const namespaceless = new Map<string, NetworkDataSecret>();
    for (const { value: secret, source } of sortBySource(this.#secrets, (secret) => secretKey(secret))) {
      const key = secretKey(secret);
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

    const hosts = new Map<string, Host>();
    const bootMacs = new Map<string, string>();
    const firstSource = new Map<string, SourcePosition>();
    for (const { value: draft, source } of sortBySource(this.#hosts, (entry) => entry.id)) {
      const first = firstSource.get(draft.id);
      if (first) {
        problem(
          ["metadata", "name"],
          `BareMetalHost ${draft.id} is defined twice (first at ${first.file}:${first.line}); this one is ignored`,
          source,
        );
        continue;
      }
      firstSource.set(draft.id, source);
      if (draft.bootMac !== undefined) bootMacs.set(draft.id, draft.bootMac);
      const networkData = draft.networkData;
      // Upstream SIP sample Secrets carry no namespace while the BMHs reference one: accept that.
      const secret =
        networkData &&
        (secrets.get(`${networkData.namespace}/${networkData.name}`) ?? namespaceless.get(networkData.name));
      hosts.set(draft.id, toHost(draft, draft.hardware ?? hardware.get(draft.id), secret, source));
    }

    const sorted = [...hosts.values()].sort((a, b) => compareText(a.id, b.id));
    const macOwner = new Map<string, Host>();
    for (const host of sorted) {
      for (const mac of host.macs) {
        const owner = macOwner.get(mac);
        if (!owner) {
          macOwner.set(mac, host);
          continue;
        }
        const where =
          bootMacs.get(host.id) === mac ? ["spec", "bootMACAddress"] : ["status", "hardware", "nics"];
        const message = `MAC ${mac} belongs to both ${owner.id} and ${host.id}; MAC lookups use ${owner.id} (lowest id)`;
        issues.push(
          issue("inventory-invalid", formatPath(where), message, host.source ? { source: host.source } : {}),
        );
      }
    }

    return { inventory: new Inventory(sorted), issues: issues.sort(compareIssues) };
  }

  #addList(object: InventoryObject, kind: string, apiVersion: unknown): void {
    const items = field(object.value, "items");
    if (!Array.isArray(items)) return; // `items: null` is how an empty list is often printed
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
    const networks = readNetworkData(secret, owner, report, this.#strings);
    if (networks === undefined) return;
    this.#secrets.push({
      value: {
        ...(namespace !== undefined &&
          namespace !== "" && { declaredNamespace: this.#strings.intern(namespace) }),
        name: detach(name),
        networks,
      },
      source,
    });
  }

  #reporter(object: InventoryObject): Report {
    return (path, message) => {
      const source = object.position ? object.position(path) : object.source;
      this.#issues.push(issue("inventory-invalid", formatPath(path), message, { source }));
    };
  }
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

function toHost(
  draft: HostDraft,
  hardware: HardwareFacts | undefined,
  secret: NetworkDataSecret | undefined,
  source: SourcePosition,
): Host {
  const macs = new Set<string>();
  if (draft.bootMac !== undefined) macs.add(draft.bootMac);
  for (const nic of hardware?.nics ?? []) macs.add(nic.mac);
  const sipOwner = sipOwnerOf(draft.labels);
  return {
    id: draft.id,
    namespace: draft.namespace,
    name: draft.name,
    labels: draft.labels,
    ...(draft.bootMac !== undefined && { bootMac: draft.bootMac }),
    macs: [...macs].sort(compareText),
    nics: hardware?.nics ?? NO_NICS,
    ...(hardware?.cpus !== undefined && { cpus: hardware.cpus }),
    ...(hardware?.memoryBytes !== undefined && { memoryBytes: hardware.memoryBytes }),
    sriov: draft.labels[SRIOV_LABEL] === "true",
    qat: draft.labels[QAT_LABEL] === "true",
    ...(draft.provisioningState !== undefined && { provisioningState: draft.provisioningState }),
    osInstalled: isOsInstalled(draft.provisioningState),
    networks: secret?.networks ?? NO_NETWORKS,
    ...(draft.bmc !== undefined && { bmc: draft.bmc }),
    ...(sipOwner !== undefined && { sipOwner }),
    source,
  };
}
