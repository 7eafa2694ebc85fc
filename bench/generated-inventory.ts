/**
 * A generated inventory file for the benchmarks (`generateBmhs`), as `kubectl get bmh -A -o json` or
 * `-o yaml` writes it, and the boot MACs of the hosts a MAC entry can name.
 */
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { SIP_LABELS } from "../synth/inventory/bmh.ts";
import { field, stringField } from "../synth/inventory/raw.ts";
import { generateBmhs, kubectlJson, kubectlYaml, type RawObject } from "../test/builders/inventory.ts";

/**
 * The boot MAC of a host a MAC entry can name: inspected, provisioned, no SIP owner (every generated
 * NIC has an IPv4, so the boot NIC gives the node its address).
 */
function macCandidate(bmh: RawObject): string | undefined {
  const status = field(bmh, "status");
  if (bmh["kind"] !== "BareMetalHost" || field(status, "hardware") === undefined) return undefined;
  if (stringField(field(status, "provisioning"), "state") !== "provisioned") return undefined;
  if (field(field(field(bmh, "metadata"), "labels"), SIP_LABELS.name) !== undefined) return undefined;
  return stringField(field(bmh, "spec"), "bootMACAddress");
}

/** Writes `hosts` generated hosts (namespace `metal3`) to `file`; returns the MACs entries can name. */
export async function writeGeneratedInventory(
  file: string,
  hosts: number,
  options: { readonly seed: number; readonly format: "json" | "yaml" },
): Promise<string[]> {
  await mkdir(path.dirname(file), { recursive: true });
  const macs: string[] = [];
  const objects = function* () {
    for (const object of generateBmhs(hosts, { seed: options.seed, namespace: "metal3" })) {
      const mac = macCandidate(object);
      if (mac !== undefined) macs.push(mac);
      yield object;
    }
  };
  const text = options.format === "json" ? kubectlJson(objects()) : kubectlYaml(objects());
  await pipeline(Readable.from(text), createWriteStream(file));
  return macs;
}
