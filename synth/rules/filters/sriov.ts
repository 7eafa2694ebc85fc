/** Sriov: the entry's `sriov: true` asks for a host labelled SR-IOV capable. */
import { SRIOV_LABEL } from "../../inventory/bmh.ts";
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import { capable, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const SRIOV = {
  name: "Sriov",
  reads: HOST_FACTS.hardware,
  reasons: { "not-capable": () => "not SR-IOV capable" },
  ofNeeds,
  macEntry: {
    field: "sriov",
    finding: (_, host) => ({
      rule: "sriov-missing",
      message: `host ${host.id} is not SR-IOV capable: it is not labelled ${SRIOV_LABEL}: "true"`,
    }),
  },
  asked: ({ sriov }) => (sriov ? "SR-IOV" : undefined),
  has: ({ sriov }) => (sriov ? "SR-IOV" : undefined),
} as const satisfies FilterPlugin;

function ofNeeds({ sriov }: ResourceNeeds): HostFilter | undefined {
  return sriov ? capable(SRIOV, (host) => host.sriov) : undefined;
}
