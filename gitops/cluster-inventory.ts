/**
 * Reads a site's inventory from the API server for `metalsynth inventory pull` (decision 0023):
 * BareMetalHosts, the HardwareData of those hosts, and only the networkData Secrets they name — never
 * a Secret listed wholesale, never a BMC credentials Secret. Of each Secret only the `networkData`
 * key is kept, before anything else sees the object.
 *
 * Lists are read in pages, as kubectl does, so a region of 100,000 hosts is not one response.
 */
import { ApiException, CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { compareText } from "../synth/issue.ts";
import type { InventoryObject } from "../synth/inventory/load.ts";
import { NETWORK_DATA_KEY, NETWORK_DATA_LABEL } from "../synth/inventory/network-data.ts";
import { field, isRecord, stringField } from "../synth/inventory/raw.ts";
import { UsageError } from "./errors.ts";

/** Which part of the cluster makes up the site's inventory. */
export interface ClusterScope {
  /**
   * Namespaces to read BareMetalHosts and HardwareData from.
   * @default undefined (every namespace)
   */
  readonly namespaces?: readonly string[];
  /**
   * Label selector (kubectl syntax) the BareMetalHosts must match.
   * @default undefined (every host)
   */
  readonly selector?: string;
  /**
   * Read only networkData Secrets labelled `metalsynth.io/network-data=true` (listed per namespace by
   * that label), instead of getting each Secret a host names.
   * @default false
   */
  readonly labelledNetworkData?: boolean;
}

/** The API server could not be read: exit 2, with what was asked and what the server said. */
export class ClusterReadError extends UsageError {
  constructor(message: string) {
    super(message, { showHelp: false });
  }
}

const METAL3 = { group: "metal3.io", version: "v1alpha1" } as const;
/** Items per list request, unless a test asks for fewer: kubectl's page size. */
const PAGE_SIZE = 500;
/** Secrets fetched at once. */
const CONCURRENT_GETS = 8;

/**
 * The snapshot objects of `scope`: each BareMetalHost, the HardwareData of the same name, and each
 * networkData Secret a host names, reduced to its `networkData` key. Every object's source is
 * `cluster/<resource>/<namespace>/<name>`, so a finding about it says which object it is.
 *
 * @throws ClusterReadError when the API server can't be reached or refuses a request.
 */
export async function readClusterInventory(
  kubeConfig: KubeConfig,
  scope: ClusterScope,
  options: { readonly pageSize?: number } = {},
): Promise<InventoryObject[]> {
  const limit = options.pageSize ?? PAGE_SIZE;
  const server = kubeConfig.getCurrentCluster()?.server ?? "the API server";
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const namespaces = scope.namespaces === undefined ? [undefined] : [...new Set(scope.namespaces)].sort();
  const where = (namespace: string | undefined) =>
    namespace === undefined ? "in all namespaces" : `in namespace ${namespace}`;

  const listCustom = async (plural: string, labelSelector?: string): Promise<unknown[]> => {
    const items: unknown[] = [];
    for (const namespace of namespaces) {
      const pages = (token?: string): Promise<unknown> => {
        const page = {
          ...METAL3,
          plural,
          limit,
          ...(labelSelector !== undefined && { labelSelector }),
          ...(token !== undefined && { _continue: token }),
        };
        return namespace === undefined
          ? custom.listClusterCustomObject(page)
          : custom.listNamespacedCustomObject({ ...page, namespace });
      };
      items.push(...(await paged(pages, `list ${plural} ${where(namespace)} from ${server}`)));
    }
    return items;
  };

  const hosts = await listCustom("baremetalhosts", scope.selector);
  const ids = new Set(hosts.map(idOf));
  let hardware: unknown[];
  try {
    hardware = await listCustom("hardwaredata");
  } catch (error) {
    // Metal3 before HardwareData (BMO < 0.5) serves no such resource; hosts then carry status.hardware.
    if (!(error instanceof NotServed)) throw error;
    hardware = [];
  }

  const references = new Map<string, { namespace: string; name: string }>();
  for (const host of hosts) {
    const reference = field(field(host, "spec"), "networkData");
    const name = stringField(reference, "name");
    if (!name) continue;
    const namespace = stringField(reference, "namespace") || namespaceOf(host);
    references.set(`${namespace}/${name}`, { namespace, name });
  }
  const secrets = scope.labelledNetworkData
    ? await labelledSecrets(core, references, server, limit)
    : await namedSecrets(core, references, server);

  const source = (resource: string, object: unknown): InventoryObject["source"] => ({
    file: `cluster/${resource}/${idOf(object)}`,
    line: 1,
    column: 1,
  });
  return [
    ...hosts.map((value) => ({
      value: typed(value, "BareMetalHost"),
      source: source("baremetalhosts", value),
    })),
    ...hardware
      .filter((value) => ids.has(idOf(value)))
      .map((value) => ({ value: typed(value, "HardwareData"), source: source("hardwaredata", value) })),
    ...secrets.map((value) => ({ value, source: source("secrets", value) })),
  ];
}

/** Each named Secret by a GET of its own: a Secret no host names is never read. */
async function namedSecrets(
  core: CoreV1Api,
  references: ReadonlyMap<string, { namespace: string; name: string }>,
  server: string,
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  const queue = [...references.keys()].sort(compareText);
  const worker = async (): Promise<void> => {
    for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
      const reference = references.get(key);
      if (reference === undefined) continue;
      try {
        found.push(networkDataOnly(await core.readNamespacedSecret(reference)));
      } catch (error) {
        // A missing Secret is a finding about the snapshot (the loader warns), not a failed pull.
        if (error instanceof ApiException && error.code === 404) continue;
        throw readError(error, `get Secret ${key} from ${server}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_GETS }, worker));
  return found.sort((a, b) => compareText(idOf(a), idOf(b)));
}

/** The labelled Secrets of each namespace a host names one in, kept only if a host names them. */
async function labelledSecrets(
  core: CoreV1Api,
  references: ReadonlyMap<string, { namespace: string; name: string }>,
  server: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const namespaces = [...new Set([...references.values()].map((reference) => reference.namespace))].sort();
  const found: Record<string, unknown>[] = [];
  for (const namespace of namespaces) {
    const labelSelector = `${NETWORK_DATA_LABEL}=true`;
    const items = await paged(
      (token) =>
        core.listNamespacedSecret({
          namespace,
          labelSelector,
          limit,
          ...(token !== undefined && { _continue: token }),
        }),
      `list Secrets labelled ${labelSelector} in namespace ${namespace} from ${server}`,
    );
    for (const item of items) {
      const secret = networkDataOnly(item);
      if (references.has(idOf(secret))) found.push(secret);
    }
  }
  return found.sort((a, b) => compareText(idOf(a), idOf(b)));
}

/**
 * A Secret reduced to its identity and its `networkData` value: nothing else of it (BMC passwords
 * kept beside the network data, `kubectl apply`'s last-applied annotation with every value) is held
 * past this point.
 */
function networkDataOnly(secret: unknown): Record<string, unknown> {
  const metadata = field(secret, "metadata");
  const value = stringField(field(secret, "data"), NETWORK_DATA_KEY);
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: stringField(metadata, "name") ?? "",
      namespace: stringField(metadata, "namespace") ?? "",
    },
    ...(value !== undefined && { data: { [NETWORK_DATA_KEY]: value } }),
  };
}

/** Thrown for a resource the API server does not serve (its CRD is not installed). */
class NotServed extends ClusterReadError {}

/** Every item of a paged list; `what` names the request in errors. */
async function paged(
  page: (token: string | undefined) => Promise<unknown>,
  what: string,
): Promise<unknown[]> {
  const items: unknown[] = [];
  let token: string | undefined;
  do {
    let response: unknown;
    try {
      response = await page(token);
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) {
        throw new NotServed(`could not ${what}: the API server does not serve it (is its CRD installed?)`);
      }
      throw readError(error, what);
    }
    const list = field(response, "items");
    if (Array.isArray(list)) items.push(...list);
    // Custom objects come as the server's JSON (`continue`); typed lists as the client's models,
    // which spell it `_continue`.
    const metadata = field(response, "metadata");
    token = stringField(metadata, "continue") || stringField(metadata, "_continue") || undefined;
  } while (token !== undefined);
  return items;
}

/**
 * `could not list baremetalhosts in all namespaces from https://…: 403 Forbidden: <the API server's
 * message>`; for a refusal, what the pull needs, so the fix is in the message.
 */
function readError(error: unknown, what: string): ClusterReadError {
  if (error instanceof ApiException) {
    const body: unknown = typeof error.body === "string" ? parseJson(error.body) : error.body;
    const message = stringField(body, "message") ?? String(error.message).split("\n")[0];
    const advice =
      error.code === 401 || error.code === 403
        ? "; the pull needs list on baremetalhosts and hardwaredata (metal3.io) and get on the Secrets the hosts name (list with labelledNetworkData)"
        : "";
    return new ClusterReadError(`could not ${what}: ${error.code} ${message}${advice}`);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new ClusterReadError(`could not ${what}: ${reason}`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An item of a list with its kind and apiVersion, which list items of typed lists may omit. */
function typed(object: unknown, kind: string): unknown {
  if (!isRecord(object)) return object;
  return { ...object, apiVersion: `${METAL3.group}/${METAL3.version}`, kind };
}

function namespaceOf(object: unknown): string {
  return stringField(field(object, "metadata"), "namespace") || "default";
}

function idOf(object: unknown): string {
  return `${namespaceOf(object)}/${stringField(field(object, "metadata"), "name") ?? ""}`;
}
