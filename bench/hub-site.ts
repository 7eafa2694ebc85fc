/**
 * A hub's site for the benchmark (docs/contract.md §8 "Hub scale"): `hosts` generated BareMetalHosts as
 * `kubectl get bmh -A -o yaml` writes them, and `clusters` clusters — two fifths Provisionings by MAC,
 * two fifths by resources, one fifth SIPClusters — then `metalsynth synth` once, so the site has the
 * rendered lock every site in Git has after its first commit.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { main } from "../bin/cli.ts";
import { FLAVOR_LABEL, type RawObject } from "../test/builders/inventory.ts";
import { writeGeneratedInventory } from "./generated-inventory.ts";

/** A generated hub site: its directory, its inventory file, and MACs of hosts no cluster names. */
export interface HubSite {
  readonly site: string;
  readonly inventory: string;
  /** Boot MACs of installed, unlabelled hosts no Provisioning names (for CRs the site accepts). */
  readonly freeMacs: readonly string[];
}

const BY_RESOURCES = { master: { cpu: 8, memory: "32Gi" }, worker: { cpu: 16, memory: "64Gi" } };

/** A Provisioning with one master and one worker, each by MAC or by resources. */
function provisioning(name: string, master: string | undefined, worker: string | undefined): RawObject {
  return {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: { name, namespace: "hub", labels: { cluster: name } },
    spec: {
      masters: [{ "master-1": master === undefined ? BY_RESOURCES.master : { "mac-address": master } }],
      workers: [{ "worker-1": worker === undefined ? BY_RESOURCES.worker : { "mac-address": worker } }],
      KUDPlugins: ["multus"],
    },
  };
}

/** A SIPCluster like the upstream samples: one control-plane host and two workers, one per rack. */
export function hubSipCluster(name: string): RawObject {
  const role = (flavor: string, active: number) => ({
    labelSelector: { matchLabels: { [FLAVOR_LABEL]: flavor } },
    topologyKey: "vino.airshipit.org/rack",
    count: { active, standby: 0 },
  });
  return {
    apiVersion: "airship.airshipit.org/v1",
    kind: "SIPCluster",
    metadata: { name, namespace: "tenant-a" },
    spec: { nodes: { ControlPlane: role("control-plane", 1), Worker: role("worker", 2) } },
  };
}

/** Generates the site in a new temporary directory and synthesises it once. */
export async function generateHubSite(hosts: number, clusters: number): Promise<HubSite> {
  const site = await mkdtemp(path.join(tmpdir(), "metalsynth-hub-"));
  const inventory = path.join(site, "inventory", "bmh.yaml");
  const macs = await writeGeneratedInventory(inventory, hosts, { seed: 35, format: "yaml" });
  const specs: RawObject[] = [];
  let used = 0;
  for (let index = 0; index < clusters; index++) {
    const name = `c${String(index).padStart(5, "0")}`;
    const kind = index % 5;
    if (kind === 4) specs.push(hubSipCluster(`cluster-${(index - 4) / 5 + 1}`));
    else if (kind < 2 && used + 2 <= macs.length) {
      specs.push(provisioning(name, macs[used], macs[used + 1]));
      used += 2;
    } else specs.push(provisioning(name, undefined, undefined));
  }
  await mkdir(path.join(site, "specs"), { recursive: true });
  await writeFile(
    path.join(site, "specs", "clusters.yaml"),
    specs.map((spec) => stringify(spec)).join("---\n"),
  );
  let report = "";
  const code = await main(["synth", "--site", site], { out: () => {}, err: (text) => void (report += text) });
  if (code !== 0) throw new Error(`synth of the generated hub site exited ${code}:\n${report}`);
  return { site, inventory, freeMacs: macs.slice(used) };
}

/** A Provisioning the hub accepts: a master by `mac` (a free host), a worker by resources. */
export function hubProvisioning(name: string, mac: string | undefined): RawObject {
  return provisioning(name, mac, undefined);
}
