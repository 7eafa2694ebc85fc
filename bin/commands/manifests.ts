import { webhookManifestsYaml } from "../../charts/webhook/index.ts";
import { DEFAULT_SIZING } from "../../charts/webhook/sizing.ts";
import { UsageError } from "../../gitops/errors.ts";
import { DNS1123_LABEL } from "../../synth/inventory/selector.ts";
import { EXIT, type Command } from "../common.ts";

/** `metalsynth manifests`: the webhook's deployment YAML on stdout (what deploy/metalsynth.yaml holds). */
export const manifests: Command<"manifests"> = async ({ values }, io) => {
  const { namespace, image } = values;
  const inventoryNamespaces = values["inventory-namespace"];
  for (const inventoryNamespace of inventoryNamespaces ?? []) {
    if (!DNS1123_LABEL.test(inventoryNamespace))
      throw new UsageError(`--inventory-namespace must be a DNS-1123 label, not "${inventoryNamespace}"`);
  }
  if (namespace !== undefined && !DNS1123_LABEL.test(namespace)) {
    throw new UsageError(`--namespace must be a DNS-1123 label, not "${namespace}"`);
  }
  if (image !== undefined && !/^\S+$/.test(image)) {
    throw new UsageError(`--image must be an image reference, not "${image}"`);
  }
  const allocationNamespaces = values["allocation-namespace"];
  for (const allocationNamespace of allocationNamespaces ?? []) {
    if (!DNS1123_LABEL.test(allocationNamespace))
      throw new UsageError(`--allocation-namespace must be a DNS-1123 label, not "${allocationNamespace}"`);
  }
  const count = (flag: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    if (!/^\d{1,7}$/.test(text)) throw new UsageError(`--${flag} must be a whole number, not "${text}"`);
    return Number(text);
  };
  const sizing = {
    hosts: count("hosts", values.hosts, DEFAULT_SIZING.hosts),
    clusters: count("clusters", values.clusters, DEFAULT_SIZING.clusters),
  };
  io.out(webhookManifestsYaml({ namespace, image, inventoryNamespaces, allocationNamespaces, sizing }));
  return EXIT.ok;
};
