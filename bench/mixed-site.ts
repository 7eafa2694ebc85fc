/**
 * The mixed site of the synth benchmark (issue #23, docs/contract.md §8 "regional"): `hosts` generated
 * BareMetalHosts in one JSON List as `kubectl get bmh -A -o json` prints it, and `clusters` clusters
 * as a region has them — half Provisionings by MAC, three tenths by resources (every fourth BPA
 * cluster with a Software CR), one fifth SIPClusters (a control plane of three, one per rack, and two
 * workers by label). Run on its own, `tsx bench/mixed-site.ts <directory> <hosts> <clusters>` writes
 * the site into `<directory>` (which must not hold one) and prints the inventory's size in bytes.
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { FLAVOR_LABEL, RACK_LABEL } from "../test/builders/inventory.ts";
import { writeGeneratedInventory } from "./generated-inventory.ts";

/** Hosts a Provisioning by MAC names: one master, one worker. */
const MAC_NODES = 2;

function software(name: string): string {
  return `---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Software\nmetadata:\n  name: ${name}-software\n  namespace: bench\n  labels:\n    cluster: ${name}\nspec:\n  masterSoftware:\n    - htop\n  workerSoftware:\n    - curl\n    - jq:\n        version: 1.6-2.1ubuntu3\n`;
}

/** A Provisioning naming its master and worker by MAC, or (no `macs`) asking for them by resources. */
function provisioning(index: number, macs: readonly string[] | undefined): string {
  const name = `c${String(index).padStart(5, "0")}`;
  const nodes =
    macs !== undefined
      ? `  masters:\n    - master-1:\n        mac-address: ${macs[0]}\n  workers:\n    - worker-1:\n        mac-address: ${macs[1]}\n`
      : "  masters:\n    - master-1:\n        cpu: 8\n        memory: 32Gi\n  workers:\n    - worker-1:\n        cpu: 16\n        memory: 64Gi\n    - worker-2:\n        cpu: 16\n        memory: 64Gi\n";
  const withSoftware = index % 4 === 0 ? software(name) : "";
  return `---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata:\n  name: ${name}\n  namespace: bench\n  labels:\n    cluster: ${name}\nspec:\n${nodes}  KUDPlugins:\n    - multus\n${withSoftware}`;
}

/** A SIPCluster: three control-plane hosts in three racks, two workers wherever the label allows. */
function sipCluster(index: number): string {
  const name = `s${String(index).padStart(5, "0")}`;
  return `---\napiVersion: airship.airshipit.org/v1\nkind: SIPCluster\nmetadata:\n  name: ${name}\n  namespace: tenant-b\nspec:\n  nodes:\n    ControlPlane:\n      labelSelector:\n        matchLabels:\n          ${FLAVOR_LABEL}: control-plane\n      topologyKey: ${RACK_LABEL}\n      count:\n        active: 3\n        standby: 0\n    Worker:\n      labelSelector:\n        matchLabels:\n          ${FLAVOR_LABEL}: worker\n      count:\n        active: 2\n        standby: 0\n`;
}

/**
 * Writes the mixed site into `site` (`inventory/bmh.json`, `specs/clusters.yaml`); returns the
 * inventory's size in bytes. Cluster `i` is a SIPCluster when `i % 10` is 8 or 9, by resources when
 * it is 5 to 7, by MAC otherwise (by resources too once the inventory runs out of free MACs).
 */
export async function writeMixedSite(site: string, hosts: number, clusters: number): Promise<number> {
  const inventoryFile = path.join(site, "inventory", "bmh.json");
  const macs = await writeGeneratedInventory(inventoryFile, hosts, { seed: 2026, format: "json" });
  const specs: string[] = [];
  let macsUsed = 0;
  for (let index = 0; index < clusters; index++) {
    const kind = index % 10;
    if (kind >= 8) specs.push(sipCluster(index));
    else if (kind < 5 && macsUsed + MAC_NODES <= macs.length) {
      specs.push(provisioning(index, macs.slice(macsUsed, macsUsed + MAC_NODES)));
      macsUsed += MAC_NODES;
    } else specs.push(provisioning(index, undefined));
  }
  await mkdir(path.join(site, "specs"), { recursive: true });
  await writeFile(path.join(site, "specs", "clusters.yaml"), specs.join(""));
  return (await stat(inventoryFile)).size;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [site, hosts, clusters] = process.argv.slice(2, 5);
  if (site === undefined || !Number(hosts) || !Number(clusters))
    throw new Error("usage: tsx bench/mixed-site.ts <directory> <hosts> <clusters>");
  process.stdout.write(`${await writeMixedSite(site, Number(hosts), Number(clusters))}\n`);
}
