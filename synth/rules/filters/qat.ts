/** Qat: the entry's `qat: true` asks for a host labelled QAT capable. */
import { QAT_LABEL } from "../../inventory/bmh.ts";
import { HOST_FACTS } from "../../inventory/host-facts.ts";
import type { ResourceNeeds } from "../../model/bpa.ts";
import { capable, type FilterPlugin, type HostFilter } from "./plugin.ts";

export const QAT = {
  name: "Qat",
  reads: HOST_FACTS.hardware,
  reasons: { "not-capable": () => "not QAT capable" },
  ofNeeds,
  macEntry: {
    field: "qat",
    finding: (_, host) => ({
      rule: "qat-missing",
      message: `host ${host.id} is not QAT capable: it is not labelled ${QAT_LABEL}: "true"`,
    }),
  },
  asked: ({ qat }) => (qat ? "QAT" : undefined),
  has: ({ qat }) => (qat ? "QAT" : undefined),
} as const satisfies FilterPlugin;

function ofNeeds({ qat }: ResourceNeeds): HostFilter | undefined {
  return qat ? capable(QAT, (host) => host.qat) : undefined;
}
