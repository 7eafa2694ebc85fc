import { existsSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { UsageError } from "../gitops/errors.ts";

/**
 * Loads `kubeConfig` as kubectl would: `--kubeconfig FILE` when given, else KUBECONFIG or
 * ~/.kube/config when present, else the pod's service account; `--context NAME` then selects one of
 * the file's contexts. A context the file does not have is a usage error naming those it has,
 * rather than a connection to whatever the file's current context is.
 */
export function loadKubeConfig(
  kubeConfig: KubeConfig,
  flags: { readonly kubeconfig?: string | undefined; readonly context?: string | undefined },
  places: KubeConfigPlaces = DEFAULT_PLACES,
): void {
  if (flags.kubeconfig === "") throw new UsageError("--kubeconfig needs a file");
  if (flags.kubeconfig === undefined) {
    refuseNoKubeConfig(places);
    kubeConfig.loadFromDefault();
  } else kubeConfig.loadFromFile(flags.kubeconfig);
  if (flags.context === undefined) return;
  const names = kubeConfig.getContexts().map((context) => context.name);
  if (!names.includes(flags.context)) {
    throw new UsageError(
      `--context ${flags.context}: no such context in the kubeconfig (${names.length === 0 ? "it has none" : names.join(", ")})`,
      { showHelp: false },
    );
  }
  kubeConfig.setCurrentContext(flags.context);
}

/** Where kubectl (and the client library) look for a kubeconfig when no `--kubeconfig` is given. */
export interface KubeConfigPlaces {
  /** `KUBECONFIG`. */
  readonly environment: string | undefined;
  /** `~/.kube/config`. */
  readonly homeConfig: string;
  /** The token a pod's service account mounts. */
  readonly serviceAccountToken: string;
  exists(file: string): boolean;
}

const DEFAULT_PLACES: KubeConfigPlaces = {
  get environment() {
    return process.env["KUBECONFIG"];
  },
  get homeConfig() {
    return path.join(homedir(), ".kube", "config");
  },
  serviceAccountToken: "/var/run/secrets/kubernetes.io/serviceaccount/token",
  exists: existsSync,
};

/**
 * Refuses to go on without a kubeconfig: the client library would then talk to http://localhost:8080
 * and fail with "HTTP protocol is not allowed", which says nothing of the cause.
 */
function refuseNoKubeConfig(places: KubeConfigPlaces): void {
  if (places.environment !== undefined && places.environment !== "") return;
  if (places.exists(places.homeConfig) || places.exists(places.serviceAccountToken)) return;
  throw new UsageError(
    `no kubeconfig found (looked in KUBECONFIG: not set; ${places.homeConfig}: no such file; ` +
      `${places.serviceAccountToken}: not in a pod): pass --kubeconfig FILE or set KUBECONFIG`,
    { showHelp: false },
  );
}
