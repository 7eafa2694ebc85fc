/**
 * The addresses a plan writes into rendered files: each BPA node's (hosts.ini, the cluster ConfigMap)
 * and each SIP member's on every interface the cluster's services use (load-balancer backends, the
 * jump host's table). What `ip-duplicate` (`rules/addresses.ts`) looks at.
 */
import { ipForInterface } from "../inventory/host.ts";
import type { RenderedAddress } from "../rules/addresses.ts";
import type { SitePlan } from "./model.ts";
import { serviceInterfaces } from "./sip-placement.ts";

const NICS = ["status", "hardware", "nics"];
const NETWORK_DATA = ["spec", "networkData"];

/** Every address `plan` renders, once per host and use. */
export function renderedAddresses(plan: SitePlan): RenderedAddress[] {
  const addresses: RenderedAddress[] = [];
  for (const cluster of plan.clusters) {
    if (cluster.kind === "bpa") {
      for (const { host, ip, request } of [...cluster.masters, ...cluster.workers])
        if (ip !== undefined)
          addresses.push({ ip, host, field: NICS, use: `${cluster.key} ${request.role} ${request.label}` });
      continue;
    }
    const interfaces = serviceInterfaces(cluster.sip);
    for (const { host, role } of cluster.members) {
      for (const id of interfaces) {
        const ip = ipForInterface(host, id);
        if (ip === undefined) continue;
        const field = host.networks[id] === undefined ? NICS : NETWORK_DATA;
        addresses.push({ ip, host, field, use: `${cluster.key} role ${role} on ${id}` });
      }
    }
  }
  return addresses;
}
