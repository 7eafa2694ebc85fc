/** A SIPCluster after normalisation: what planning and the rules read (decision 0049). */
import type { AuthorizedKey, DnsLabel, DnsSubdomain, ImageReference, InterfaceId } from "../checked.ts";
import type { FieldPath } from "../field-path.ts";
import type { LabelSelector } from "../inventory/selector.ts";
import type { SipClusterSpec } from "../schema/sipcluster.ts";
import type { Resource } from "./resource.ts";

/** One role of a SIPCluster (`spec.nodes.<role>`), normalised. */
export interface SipRole {
  readonly role: string;
  readonly selector: LabelSelector;
  readonly topologyKey?: string;
  readonly active: number;
  readonly standby: number;
  readonly path: FieldPath;
  /** False when the selector or topology key is invalid: reported once, not planned (no knock-on no-fit). */
  readonly plannable: boolean;
}

/** A NodePort a SIP service asks for, with where it was written (for site-wide clash reports). */
export interface RequestedPort {
  readonly port: number;
  readonly path: FieldPath;
}

type ServicesSpec = NonNullable<SipClusterSpec["spec"]["services"]>;
/**
 * A service as the CR writes it, its image (`""` is unset, as upstream SIP reads it) and interface
 * id checked.
 */
type CheckedService<T> = Omit<T, "image" | "nodeInterfaceId"> & {
  readonly image?: ImageReference;
  readonly nodeInterfaceId: InterfaceId;
};
type JumpHostSpec = NonNullable<ServicesSpec["jumpHost"]>[number];

/** A SIPCluster's services, every value that reaches a rendered file checked at the door. */
export interface SipServices {
  readonly loadBalancerControlPlane?: readonly CheckedService<
    NonNullable<ServicesSpec["loadBalancerControlPlane"]>[number]
  >[];
  readonly loadBalancerWorker?: readonly CheckedService<
    NonNullable<ServicesSpec["loadBalancerWorker"]>[number]
  >[];
  readonly jumpHost?: readonly (Omit<
    CheckedService<JumpHostSpec>,
    "sshAuthorizedKeys" | "nodeSSHPrivateKeys"
  > & {
    /** The Secret the pod mounts the node keys from, checked (`name-invalid`). */
    readonly nodeSSHPrivateKeys: DnsSubdomain;
    /** One line each, known key types only (`ssh-key` reports the others, which are left out). */
    readonly sshAuthorizedKeys?: readonly AuthorizedKey[];
  })[];
}

/** A SIPCluster after normalisation. */
export interface SipCluster {
  readonly resource: Resource<"SIPCluster">;
  /** The SIPCluster's name, checked to be a DNS-1123 label (`sip-cluster-name`). */
  readonly name: DnsLabel;
  /** Roles in planning order: ControlPlane, Worker, then any other role by name (docs/contract.md §3.2). */
  readonly roles: readonly SipRole[];
  readonly services: SipServices;
  /** Every fixed NodePort the services ask for (0 = auto is not listed). */
  readonly ports: readonly RequestedPort[];
}
