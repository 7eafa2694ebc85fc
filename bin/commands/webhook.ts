import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { UsageError } from "../../gitops/errors.ts";
import { errorCode, systemReason } from "../../gitops/files.ts";
import { readInventory } from "../../gitops/inventory-reader.ts";
import { readSite, SETTINGS_FILE } from "../../gitops/site-reader.ts";
import { parseDnsLabel } from "../../synth/checked.ts";
import { LOCK_FILE } from "../../synth/plan/lock.ts";
import { EMPTY_LOCK } from "../../synth/rules/lock.ts";
import { FileFeed, type SiteFiles } from "../../webhook/file-feed.ts";
import { tuneHeapForReviews } from "../../webhook/heap.ts";
import { jsonLogger } from "../../webhook/log.ts";
import { startWebhook } from "../../webhook/main.ts";
import { WebhookState } from "../../webhook/state.ts";
import { EXIT, listWords, refuseStrayWords, type Console } from "../common.ts";
import { KUBE_OPTIONS, loadKubeConfig } from "../kube-config.ts";

const OPTIONS = {
  inventory: { type: "string", multiple: true },
  "from-cluster": { type: "boolean" },
  "secrets-namespace": { type: "string", multiple: true },
  site: { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  ...KUBE_OPTIONS,
  selector: { type: "string", short: "l" },
  port: { type: "string" },
  host: { type: "string" },
} as const;

/**
 * `metalsynth webhook`: serves the admission webhook until SIGTERM (docs/contract.md §5, §7). The inventory comes
 * from `--inventory` files or from the API server (`--from-cluster`); `--site` adds the site's specs
 * and lock. JSON logs go to stdout.
 */
export async function webhook(argv: readonly string[], io: Console): Promise<number> {
  const parsed = parseArgs({
    args: [...argv],
    options: OPTIONS,
    strict: true,
    allowPositionals: true,
    tokens: true,
  });
  refuseStrayWords(listWords(parsed, ["inventory"]));
  const { values } = parsed;
  const inventory = values.inventory;
  const fromCluster = values["from-cluster"] === true;
  if ((inventory !== undefined) === fromCluster) {
    throw new UsageError("webhook needs either --inventory PATH… or --from-cluster");
  }
  const kubeFlags = [values.kubeconfig, values.context, values.selector];
  if (!fromCluster && kubeFlags.some((flag) => flag !== undefined)) {
    throw new UsageError("--kubeconfig, --context and --selector go with --from-cluster");
  }
  if (values.selector === "") throw new UsageError("--selector must not be empty");
  const secretNamespaces = values["secrets-namespace"] ?? [];
  if (secretNamespaces.length > 0 && !fromCluster) {
    throw new UsageError("--secrets-namespace goes with --from-cluster");
  }
  for (const namespace of secretNamespaces) {
    if (parseDnsLabel(namespace) === undefined)
      throw new UsageError(`--secrets-namespace must be a namespace name, not "${namespace}"`);
  }
  const certFile = values["tls-cert"];
  const keyFile = values["tls-key"];
  if (certFile === undefined || keyFile === undefined) {
    throw new UsageError("webhook needs --tls-cert FILE and --tls-key FILE");
  }
  const site = values.site;
  // Paths that don't exist are a mistake in the call, not a state to wait out.
  await mustExist([
    ...(inventory ?? []),
    ...(site === undefined ? [] : [path.join(site, "specs")]),
    certFile,
    keyFile,
  ]);
  const port = portNumber(values.port ?? "8443");
  await checkTls(certFile, keyFile);
  const host = values.host ?? "0.0.0.0";

  tuneHeapForReviews();
  const log = jsonLogger((line) => io.out(`${line}\n`));
  const state = new WebhookState(Date.now, fromCluster);
  // Listen first: /healthz answers while the first read or list runs, and /readyz says why not yet.
  const running = await startWebhook({
    host,
    port,
    tls: { certFile, keyFile },
    state,
    log,
    handleSignals: true,
  }).catch((error: unknown) => {
    throw listenProblem(error, host, port) ?? error;
  });
  const feeds = async () => {
    if (fromCluster) {
      // The Kubernetes client takes about half a second to load; only --from-cluster uses it.
      const [{ KubeConfig }, { ClusterFeed }, { lockFromAllocations }] = await Promise.all([
        import("@kubernetes/client-node"),
        import("../../webhook/cluster-feed.ts"),
        import("../../synth/rules/allocation.ts"),
      ]);
      const kubeConfig = new KubeConfig();
      loadKubeConfig(kubeConfig, values);
      const hostSelector = values.selector;
      await ClusterFeed.start({
        kubeConfig,
        state,
        log,
        secretNamespaces,
        allocations: lockFromAllocations,
        ...(hostSelector === undefined ? {} : { hostSelector }),
      });
      if (site !== undefined) {
        // The cluster's Allocations are the lock here; the site's lock file would fight them.
        const load = async () => ({ ...(await siteFiles(site, [])), lock: undefined });
        await FileFeed.start({ paths: sitePaths(site), load, state, log });
      }
    } else if (inventory !== undefined) {
      await FileFeed.start({
        paths: [...inventory, ...(site === undefined ? [] : sitePaths(site))],
        load: () => (site === undefined ? inventoryFiles(inventory) : siteFiles(site, inventory)),
        state,
        log,
      });
    }
  };
  try {
    // A SIGTERM while the first list or read still runs stops the server all the same.
    await Promise.race([feeds(), running.stopped]);
  } catch (error) {
    await running.shutdown();
    throw error;
  }
  await running.stopped;
  return EXIT.ok;
}

/**
 * The site's files the webhook reads: specs and the lock, and the settings, which readSite parses
 * too: a broken settings file stops a read, so fixing it must trigger the next one.
 */
export function sitePaths(site: string): string[] {
  return [path.join(site, "specs"), path.join(site, "rendered", LOCK_FILE), path.join(site, SETTINGS_FILE)];
}

/** Specs and lock of `site`, with the inventory from `inventory` (none with `[]`). */
export async function siteFiles(site: string, inventory: readonly string[]): Promise<SiteFiles> {
  const input = await readSite({ site, inventory });
  return {
    ...(inventory.length > 0 && { inventory: input.inventory }),
    documents: input.documents,
    lock: input.lock,
    issues: input.issues,
  };
}

/** The inventory at `paths`, without a site. */
export async function inventoryFiles(paths: readonly string[]): Promise<SiteFiles> {
  const { inventory, issues } = await readInventory(paths);
  return { inventory, documents: [], lock: EMPTY_LOCK, issues };
}

async function mustExist(paths: readonly string[]): Promise<void> {
  for (const given of paths) {
    if (!(await stat(given).catch(() => undefined)))
      throw new UsageError(`${given}: no such file or directory`);
  }
}

/** These messages say what to do; the command's usage would not add to them. */
const NO_HELP = { showHelp: false } as const;

/**
 * Reads the certificate and key the way the server will, so a swapped or wrong file is one line
 * naming the flag and the file instead of OpenSSL's "PEM routines::no start line" and a stack.
 */
export async function checkTls(certFile: string, keyFile: string): Promise<void> {
  const read = async (flag: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new UsageError(`${flag} ${file}: ${systemReason(error)}`, NO_HELP);
    }
  };
  const [certText, keyText] = [await read("--tls-cert", certFile), await read("--tls-key", keyFile)];
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certText);
  } catch {
    const hint = /PRIVATE KEY-----/.test(certText.toString("latin1"))
      ? " (it holds a private key: pass it to --tls-key)"
      : "";
    throw new UsageError(
      `--tls-cert ${certFile}: not a PEM certificate${hint}; pass the certificate (tls.crt)`,
      NO_HELP,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyText);
  } catch {
    const hint = /CERTIFICATE-----/.test(keyText.toString("latin1"))
      ? " (it holds a certificate: pass it to --tls-cert)"
      : "";
    throw new UsageError(
      `--tls-key ${keyFile}: not a PEM private key${hint}; pass the key (tls.key)`,
      NO_HELP,
    );
  }
  if (!cert.checkPrivateKey(key)) {
    throw new UsageError(
      `--tls-key ${keyFile} is not the private key of --tls-cert ${certFile}; pass the pair cert-manager wrote together`,
      NO_HELP,
    );
  }
}

/** A listen failure a user can fix (port taken, port not allowed) as a usage error; else undefined. */
export function listenProblem(error: unknown, host: string, port: number): UsageError | undefined {
  const code = errorCode(error);
  if (code === "EADDRINUSE")
    return new UsageError(
      `--port ${port}: ${host}:${port} is already in use; stop what listens there or pass another --port`,
      NO_HELP,
    );
  if (code === "EACCES" || code === "EPERM")
    return new UsageError(
      `--port ${port}: not allowed to listen on ${host}:${port} (ports below 1024 need privileges); pass another --port`,
      NO_HELP,
    );
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND")
    return new UsageError(
      `--host ${host}: not an address of this machine; pass one of its addresses or 0.0.0.0`,
      NO_HELP,
    );
  return undefined;
}

function portNumber(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UsageError(`--port must be a port number, not "${text}"`);
  return port;
}
