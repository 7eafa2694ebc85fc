import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
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
import type { AdmissionRecord } from "../../webhook/admissions.ts";
import { DEFAULT_REVIEW_WORKERS, REVIEW_BUDGET_MS, ReviewPool } from "../../webhook/review-pool.ts";
import { WebhookState } from "../../webhook/state.ts";
import { allocationTrust } from "../allocation-trust.ts";
import { EXIT, type Command } from "../common.ts";
import { loadKubeConfig } from "../kube-config.ts";

/**
 * `metalsynth webhook`: serves the admission webhook until SIGTERM (docs/contract.md §5, §7). The inventory comes
 * from `--inventory` files or from the API server (`--from-cluster`); `--site` adds the site's specs
 * and lock. JSON logs go to stdout.
 */
export const webhook: Command<"webhook"> = async ({ values }, io) => {
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
  const trust = allocationTrust(values);
  const ownNamespace = values.namespace;
  if (ownNamespace !== undefined && parseDnsLabel(ownNamespace) === undefined)
    throw new UsageError(`--namespace must be a namespace name, not "${ownNamespace}"`);
  const ledgerFlags = [values["allocation-namespace"], values["allocation-manager"], ownNamespace];
  if (!fromCluster && ledgerFlags.some((flag) => flag !== undefined)) {
    throw new UsageError(
      "--allocation-namespace, --allocation-manager and --namespace go with --from-cluster",
    );
  }
  const reviewWorkers = workerCount(values["review-workers"] ?? String(DEFAULT_REVIEW_WORKERS));
  const budgetMs = budget(values["review-budget"] ?? String(REVIEW_BUDGET_MS / 1000));
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
  const state = new WebhookState(Date.now, fromCluster, trust);
  // Reviews run in worker threads, each with a copy of the state (decision 0056).
  const reviews = new ReviewPool({ state, log, workers: reviewWorkers, budgetMs });
  // With --namespace the replicas share the admissions they make through a ConfigMap there
  // (decision 0056); it is read once the feed has started, before any request is reviewed.
  let ledger: AdmissionRecord | undefined;
  const record: AdmissionRecord | undefined =
    fromCluster && ownNamespace !== undefined
      ? {
          record: (object, holds) =>
            ledger === undefined
              ? Promise.reject(new Error("the admissions record is not read yet"))
              : ledger.record(object, holds),
        }
      : undefined;
  // Listen first: /healthz answers while the first read or list runs, and /readyz says why not yet.
  const running = await startWebhook({
    host,
    port,
    tls: { certFile, keyFile },
    state,
    reviews,
    ...(record && { record }),
    log,
    handleSignals: true,
  }).catch(async (error: unknown) => {
    await reviews.close();
    throw listenProblem(error, host, port) ?? error;
  });
  const feeds = async () => {
    if (fromCluster) {
      // The Kubernetes client takes about half a second to load; only --from-cluster uses it.
      const [{ KubeConfig }, { ClusterFeed }, { lockFromAllocations }, { AdmissionLedger }] =
        await Promise.all([
          import("@kubernetes/client-node"),
          import("../../webhook/cluster-feed.ts"),
          import("../../synth/rules/allocation.ts"),
          import("../../webhook/admission-record.ts"),
        ]);
      const kubeConfig = new KubeConfig();
      loadKubeConfig(kubeConfig, values);
      const hostSelector = values.selector;
      // Registered first, so the state is ready only once the record is read too.
      const admissions =
        ownNamespace === undefined
          ? undefined
          : AdmissionLedger.create({ kubeConfig, namespace: ownNamespace, state, log });
      ledger = admissions;
      await Promise.all([
        ClusterFeed.start({
          kubeConfig,
          state,
          log,
          secretNamespaces,
          allocations: lockFromAllocations,
          allocationTrust: trust,
          ...(hostSelector === undefined ? {} : { hostSelector }),
        }),
        admissions?.watch(),
      ]);
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
};

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

/** `--review-budget SECONDS`, in milliseconds: more than a normal review, less than the API server waits. */
function budget(text: string): number {
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || seconds < 0.05 || seconds > 25)
    throw new UsageError(`--review-budget must be seconds from 0.05 to 25, not "${text}"`);
  return Math.round(seconds * 1000);
}

function workerCount(text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 1 || count > 64)
    throw new UsageError(`--review-workers must be a number from 1 to 64, not "${text}"`);
  return count;
}

function portNumber(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UsageError(`--port must be a port number, not "${text}"`);
  return port;
}
