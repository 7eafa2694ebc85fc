/** A SIPCluster after normalisation: what planning and the rules read (decision 0049). */
import type {
  AuthorizedKey,
  ClaimPrefix,
  ClientId,
  ConnectorConfig,
  ConnectorField,
  ConnectorId,
  DisplayName,
  DnsLabel,
  DnsSubdomain,
  EmailAddress,
  GroupName,
  ImageReference,
  InterfaceId,
  IpAddress,
  IssuerUrl,
  PemCertificates,
  PortNumber,
  RedirectUri,
  RoleName,
  SecretKey,
} from "../checked.ts";
import type { FieldPath } from "../field-path.ts";
import type { LabelSelector } from "../inventory/selector.ts";
import type { DEX_CONNECTOR_TYPES, SipClusterSpec, USERNAME_CLAIMS } from "../schema/sipcluster.ts";
import type { ResourceNeeds } from "./bpa.ts";
import type { Resource } from "./resource.ts";

/** One role of a SIPCluster (`spec.nodes.<role>`), normalised. */
export interface SipRole {
  readonly role: string;
  readonly selector: LabelSelector;
  readonly topologyKey?: string;
  readonly active: number;
  readonly standby: number;
  /**
   * What the role's hosts must have (`hardware`, a metalsynth extension, decision 0065), as the
   * resource filters of a BPA entry read it; a SIP role asks for no SR-IOV or QAT label.
   */
  readonly needs: ResourceNeeds;
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
  /** At most one (the schema's bound): the tenant's OIDC provider. */
  readonly auth?: readonly SipAuth[];
}

/** A key of a Secret in the SIPCluster's namespace, both parts checked: referenced, never read. */
export interface SecretKeyReference {
  readonly name: DnsSubdomain;
  readonly key: SecretKey;
}

/** A public OAuth2 client of the tenant's provider (kubectl with kubelogin). */
export interface AuthClient {
  readonly id: ClientId;
  readonly name: DisplayName;
  readonly redirectURIs: readonly RedirectUri[];
}

/** An upstream identity provider of the tenant's Dex. */
export interface AuthConnector {
  readonly type: (typeof DEX_CONNECTOR_TYPES)[number];
  readonly id: ConnectorId;
  readonly name: DisplayName;
  /** The config as written, checked; `redirectURI` is filled in by the chart where the type takes one. */
  readonly config: ConnectorConfig;
  /** Config fields whose values come from Secrets, in field order. */
  readonly secrets: readonly { readonly field: ConnectorField; readonly secret: SecretKeyReference }[];
}

/** A user of the provider's own password database. */
export interface AuthUser {
  readonly email: EmailAddress;
  readonly username: DisplayName;
  readonly userID: DisplayName;
  readonly groups: readonly GroupName[];
  readonly passwordHash: SecretKeyReference;
}

/** A group's binding to a ClusterRole in the tenant cluster, or in one of its namespaces. */
export interface AuthRoleBinding {
  readonly group: GroupName;
  readonly clusterRole: RoleName;
  readonly namespace?: DnsLabel;
}

/**
 * Where the provider's serving certificate comes from: cert-manager, signing with the CA in
 * `caSecret` (SIP's field), whose certificate the tenant trusts; or a Secret holding it already.
 */
export type AuthServing =
  | { readonly caSecret: DnsSubdomain; readonly certificateAuthority: PemCertificates }
  | { readonly tlsSecret: DnsSubdomain; readonly certificateAuthority?: PemCertificates };

/** A SIPCluster's `auth` service, normalised: every value that reaches Dex, the API server or RBAC checked. */
export interface SipAuth {
  readonly image?: ImageReference;
  /** The issuer's host: the service's `clusterIP`, else the control-plane load balancer's. */
  readonly address: IpAddress;
  readonly nodePort: PortNumber;
  readonly issuer: IssuerUrl;
  readonly serving: AuthServing;
  readonly clients: readonly AuthClient[];
  readonly connectors: readonly AuthConnector[];
  readonly staticUsers: readonly AuthUser[];
  readonly claims: {
    readonly username: { readonly claim: (typeof USERNAME_CLAIMS)[number]; readonly prefix: ClaimPrefix };
    readonly groups: { readonly prefix: ClaimPrefix };
  };
  readonly roleBindings: readonly AuthRoleBinding[];
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
