import { z } from "zod";

/**
 * How large a CR may be (decision 0056): list, map and string sizes far above anything an upstream
 * sample or a real site comes near, so that no CR a person writes meets them, while a CR made to
 * stall a review (a Provisioning of 20,000 workers is 907 KiB, within the API server's 1.5 MiB, and
 * took 17 s to review) is refused by the API server's schema check before any webhook is called,
 * and by metalsynth's own schema check (`validate`, and the webhook when called directly).
 *
 * The upstream samples: ICN's BPA Provisionings have one to three masters and up to three workers,
 * one or two KUD plugins and a few packages per Software; Airship's SIPClusters two roles
 * (ControlPlane, Worker) of one to three hosts with no more than one standby, one service of each
 * type and a handful of SSH keys.
 */
export const BOUNDS = {
  /** A Provisioning's masters: etcd runs three or five; this is twenty times that. */
  masters: 100,
  /** A Provisioning's workers: more than most bare-metal sites hold in one cluster. */
  workers: 1000,
  /** KUD plugins of one Provisioning; KUD has about twenty. */
  plugins: 64,
  /** Packages in one `masterSoftware` or `workerSoftware` list. */
  packages: 1000,
  /** SIP roles of one SIPCluster (upstream names two). */
  roles: 8,
  /** Hosts of one SIP role in service. */
  active: 1000,
  /** Spare hosts of one SIP role. */
  standby: 100,
  /** Entries of one SIP service list (upstream: one). */
  services: 16,
  /** SSH keys of a jump host. */
  sshKeys: 256,
  /** Labels a selector matches, a role's `nodeLabels`. */
  labels: 64,
  /** Expressions of a selector, and values of one expression. */
  expressions: 64,
  values: 256,
  /**
   * Hosts of one Allocation: a cluster's hosts, as many as a SIPCluster may hold
   * ({@link BOUNDS.roles} × ({@link BOUNDS.active} + {@link BOUNDS.standby})), and an object of that
   * many still fits the API server's 1.5 MiB.
   */
  allocationHosts: 8800,
  /** A name: a DNS-1123 subdomain, or a label key with its prefix (253 + `/` + 63). */
  name: 317,
  /** CPU flags a node asks for: a server CPU reports about 150. */
  cpuFlags: 256,
  /** A label value, a node label, a plugin name, a role, a CPU flag. */
  label: 63,
  /** An image reference, a CIDR, a memory quantity, a package version: any short string. */
  short: 1024,
  /** One OpenSSH public key (a 16,384-bit RSA key is 2.8 KB in base64). */
  sshKey: 16 * 1024,
  /**
   * A tenant's identity provider (`spec.services.auth`, decision 0058), which upstream never built:
   * Dex's own examples have one to three static clients of one or two redirect URIs, one or two
   * connectors, a static user or two of a few groups; a tenant binds a handful of groups.
   */
  auth: {
    /** Static clients (kubectl, a dashboard or two). */
    clients: 64,
    /** Redirect URIs of one client (kubelogin listens on two ports). */
    redirectURIs: 64,
    /** Upstream identity providers. */
    connectors: 64,
    /**
     * Top-level fields of one connector's `config`, and its `secretKeyRefs` (Dex's widest
     * connector, OIDC, has about 25). Deeper, the config is free-form JSON the CRD can't bound:
     * metalsynth's reader refuses one over 16 KiB or 6 levels (`parseConnectorConfig`), in time
     * linear in its size, and the API server's 1.5 MiB bounds the object.
     */
    connectorFields: 64,
    /** Users of the provider's password database (break-glass, automation). */
    staticUsers: 256,
    /** Groups of one static user. */
    groups: 256,
    /** Group → ClusterRole bindings of the tenant, one per namespace. */
    roleBindings: 1000,
    /** A redirect URI (the reader's limit). */
    uri: 2048,
    /** PEM CA certificates: a bundle of about 30 certificates. */
    certificates: 64 * 1024,
  },
} as const;

/**
 * A map of at most `max` entries: enforced by the schema at run time and published as the CRD's
 * `maxProperties`, which the API server checks.
 */
export function boundedRecord<V extends z.ZodType>(value: V, max: number) {
  return z
    .record(z.string(), value)
    .refine((entries) => Object.keys(entries).length <= max, {
      error: (found) => {
        const size =
          typeof found.input === "object" && found.input !== null ? Object.keys(found.input).length : 0;
        return `${size} entries: expected at most ${max}`;
      },
    })
    .meta({ maxProperties: max });
}
