/**
 * SIP's per-host `networkData` Secrets (OpenStack network_data format) give the IP of each
 * `nodeInterfaceId` (docs/contract.md §1.3). Only `networks[].id → ip_address` is kept; every other Secret, and
 * every other key of these Secrets, is never read, so BMC passwords can't leak into the inventory.
 */
import { EXPECTED, parseIpAddress, type IpAddress } from "../checked.ts";
import { readEmbeddedValue } from "../codec/read-documents.ts";
import type { FieldPath } from "../field-path.ts";
import type { Report } from "./bmh.ts";
import { detach } from "../detach.ts";
import { InternPool, field, isRecord, stringField } from "./raw.ts";

/** The key SIP stores network_data under. */
export const NETWORK_DATA_KEY = "networkData";

/**
 * The label that marks a Secret as holding SIP networkData metalsynth may read: the webhook reads only
 * Secrets labelled `<label>=true`, and so does `inventory pull` when a site asks it to.
 */
export const NETWORK_DATA_LABEL = "metalsynth.io/network-data";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Whether a Secret carries networkData at all; other Secrets are ignored without a trace. */
export function hasNetworkData(secret: unknown): boolean {
  return (
    field(field(secret, "stringData"), NETWORK_DATA_KEY) !== undefined ||
    field(field(secret, "data"), NETWORK_DATA_KEY) !== undefined
  );
}

/** What a networkData Secret gives: addresses by network id, and the first one that is not one. */
export interface NetworkData {
  readonly networks: Readonly<Record<string, IpAddress>>;
  /**
   * Where the value was read (`stringData.networkData` or `data.networkData`) and what is wrong with
   * its first bad `ip_address`: every host that names the Secret is set aside (decision 0031).
   */
  readonly fault?: { readonly path: FieldPath; readonly reason: string };
}

/**
 * `networks[].id → ip_address` of a networkData Secret, or `undefined` (reported) when the value is
 * not base64 / not JSON or YAML. `stringData` wins over `data`, as it does when the API server merges
 * them. Networks without an address (DHCP) are skipped; for a repeated id the first one counts. An
 * `ip_address` that is not a single address (it would reach haproxy.cfg and ssh_config) is left out
 * and named in `fault`.
 */
export function readNetworkData(
  secret: unknown,
  owner: string,
  report: Report,
  pool: InternPool = new InternPool(),
): NetworkData | undefined {
  const plain = stringField(field(secret, "stringData"), NETWORK_DATA_KEY);
  const encoded = stringField(field(secret, "data"), NETWORK_DATA_KEY);
  let text: string;
  let path: FieldPath;
  if (plain !== undefined) {
    text = plain;
    path = ["stringData", NETWORK_DATA_KEY];
  } else if (encoded !== undefined) {
    path = ["data", NETWORK_DATA_KEY];
    const compact = encoded.replace(/\s+/g, "");
    if (!BASE64.test(compact) || compact.length % 4 === 1) {
      report(path, `Secret ${owner}: data.networkData is not base64 (data values are base64-encoded)`);
      return undefined;
    }
    text = Buffer.from(compact, "base64").toString("utf8");
  } else {
    const where = field(field(secret, "stringData"), NETWORK_DATA_KEY) !== undefined ? "stringData" : "data";
    report([where, NETWORK_DATA_KEY], `Secret ${owner}: ${where}.networkData must be a string`);
    return undefined;
  }

  const value = parseNetworkData(text, (message) => report(path, `Secret ${owner}: ${message}`));
  if (value === undefined) return undefined;
  const networks = field(value, "networks");
  if (!Array.isArray(networks)) {
    report(path, `Secret ${owner}: networkData has no "networks" list (OpenStack network_data format)`);
    return undefined;
  }
  const byId = new Map<string, IpAddress>();
  let fault: NetworkData["fault"];
  for (const network of networks) {
    if (!isRecord(network)) continue;
    const id = stringField(network, "id");
    const address = stringField(network, "ip_address");
    if (id === undefined || address === undefined || address === "" || byId.has(id)) continue;
    const ip = parseIpAddress(detach(address));
    if (ip === undefined) {
      fault ??= {
        path,
        reason: `Secret ${owner}: networkData network ${JSON.stringify(id)} has ip_address ${JSON.stringify(address)}, which is not ${EXPECTED.ipAddress}`,
      };
      continue;
    }
    byId.set(pool.intern(id), ip);
  }
  // fromEntries defines own properties, so an id such as "__proto__" can't touch the prototype.
  const result: { networks: Record<string, IpAddress>; fault?: NetworkData["fault"] } = {
    networks: Object.fromEntries(byId),
  };
  if (fault !== undefined) result.fault = fault;
  return result;
}

/** Parses network_data text (`readEmbeddedValue`: SIP writes JSON, a person may write YAML). */
function parseNetworkData(text: string, report: (message: string) => void): unknown {
  const read = readEmbeddedValue(text);
  if ("problem" in read) {
    report(`networkData ${read.problem}`);
    return undefined;
  }
  return read.value;
}
