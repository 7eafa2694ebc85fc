import type { KubeConfig } from "@kubernetes/client-node";
import { UsageError } from "../gitops/errors.ts";

/** kubectl's flags for where the API server is, taken by every command that talks to one. */
export const KUBE_OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
} as const;

/**
 * Loads `kubeConfig` as kubectl would: `--kubeconfig FILE` when given, else KUBECONFIG or
 * ~/.kube/config when present, else the pod's service account; `--context NAME` then selects one of
 * the file's contexts. A context the file does not have is a usage error naming those it has,
 * rather than a connection to whatever the file's current context is.
 */
export function loadKubeConfig(
  kubeConfig: KubeConfig,
  flags: { readonly kubeconfig?: string | undefined; readonly context?: string | undefined },
): void {
  if (flags.kubeconfig === "") throw new UsageError("--kubeconfig needs a file");
  if (flags.kubeconfig === undefined) kubeConfig.loadFromDefault();
  else kubeConfig.loadFromFile(flags.kubeconfig);
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
