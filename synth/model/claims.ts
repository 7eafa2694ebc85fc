import type { ClusterKey } from "../cluster-key.ts";
import type { Host } from "../inventory/host.ts";

/**
 * Who held each host when one decision was made. Answers never change afterwards: the ledger
 * (`ClaimLedger`, `synth/plan/claim-ledger.ts`) only appends, and a host never moves from one cluster to another, so a decision's explanation, computed
 * on demand long after, sees exactly what the decision saw.
 */
export interface ClaimView {
  /** The cluster holding `host` at that moment, if any. */
  ownerOf(host: Host): ClusterKey | undefined;
}
