import type { ClusterGlue, Provisioning, Software } from "./bpa.ts";
import type { SipCluster } from "./sip.ts";

/** The normalised CRs of a site (or of a live cluster plus the object under review). */
export interface SiteModel {
  readonly provisionings: readonly Provisioning[];
  readonly softwares: readonly Software[];
  readonly glues: readonly ClusterGlue[];
  readonly sips: readonly SipCluster[];
}
