import { parseArgs } from "node:util";
import { webhookManifestsYaml } from "../../charts/webhook/index.ts";
import { UsageError } from "../../gitops/errors.ts";
import { DNS1123_LABEL } from "../../synth/inventory/selector.ts";
import { EXIT, type Console } from "../common.ts";

/** `metalsynth manifests`: the webhook's deployment YAML on stdout (what deploy/metalsynth.yaml holds). */
export async function manifests(argv: readonly string[], io: Console): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      namespace: { type: "string" },
      image: { type: "string" },
      "inventory-namespace": { type: "string", multiple: true },
    },
    strict: true,
  });
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
  io.out(webhookManifestsYaml({ namespace, image, inventoryNamespaces }));
  return EXIT.ok;
}
