import { z } from "zod";
import { BOUNDS, boundedRecord } from "./bounds.ts";
import { ObjectMetaSpec, IgnoredStatusSpec } from "./formats.ts";
import { HardwareRequestSpec } from "./hardware.ts";

/** Kubernetes `LabelSelector` (matchLabels / matchExpressions). */
const LabelSelectorSpec = z.strictObject({
  matchLabels: boundedRecord(z.string().max(BOUNDS.label), BOUNDS.labels).optional(),
  matchExpressions: z
    .array(
      z.strictObject({
        key: z.string().max(BOUNDS.name),
        operator: z.string().max(BOUNDS.label).describe("In, NotIn, Exists or DoesNotExist."),
        values: z.array(z.string().max(BOUNDS.label)).max(BOUNDS.values).optional(),
      }),
    )
    .max(BOUNDS.expressions)
    .optional(),
});

/** How many hosts of a role, and where they may come from. Upstream: airship/sip api/v1 NodeSet. */
const NodeSetSpec = z.strictObject({
  labelSelector: LabelSelectorSpec.describe("Which BareMetalHosts may serve this role."),
  topologyKey: z
    .string()
    .max(BOUNDS.name)
    .optional()
    .describe("Host label; at most one host per value within the role."),
  count: z.strictObject({
    active: z.int().min(0).max(BOUNDS.active).describe("Hosts in service."),
    standby: z
      .int()
      .min(0)
      .max(BOUNDS.standby)
      .optional()
      .describe("Spare hosts kept labelled for upgrades."),
  }),
  hardware: HardwareRequestSpec.optional(),
});

/** Fields every SIP service shares. `nodeLabels`/`clusterIP` are upstream fields accepted but unused. */
const ServiceSpec = {
  image: z
    .string()
    .max(BOUNDS.short)
    .optional()
    .describe("Container image; site default when omitted or empty (as upstream SIP)."),
  nodeInterfaceId: z
    .string()
    .min(1)
    .max(BOUNDS.name)
    .describe("networkData network id whose IP the service targets."),
  nodeLabels: boundedRecord(z.string().max(BOUNDS.label), BOUNDS.labels)
    .optional()
    .describe("Upstream field, not implemented."),
  clusterIP: z.string().max(BOUNDS.short).optional().describe("Upstream field, not implemented."),
};

const NodePort = z.int().describe("30000–32767, or 0 to let Kubernetes choose.");

/** A key of a Secret in the SIPCluster's namespace: a value metalsynth references and never reads. */
const SecretKeyRefSpec = z.strictObject({
  name: z.string().max(BOUNDS.name).describe("Secret in the SIPCluster's namespace."),
  key: z.string().max(BOUNDS.name).describe("Key of the Secret's data."),
});

/** Dex's connector types (`server.ConnectorsConfig` of Dex v2.45), without its test-only mocks. */
export const DEX_CONNECTOR_TYPES = [
  "atlassian-crowd",
  "authproxy",
  "bitbucket-cloud",
  "gitea",
  "github",
  "gitlab",
  "google",
  "keystone",
  "ldap",
  "linkedin",
  "microsoft",
  "oauth",
  "oidc",
  "openshift",
  "saml",
] as const;

/** The ID token claims Dex fills for every user that can name a tenant user (decision 0058). */
export const USERNAME_CLAIMS = ["email", "sub", "preferred_username", "name"] as const;

/**
 * SIP's third service, an OIDC provider for the tenant cluster (Dex). A metalsynth extension with
 * SIP's heritage: SIP v1 of late 2020 carried `services.auth[]` (the service fields and `caSecret`)
 * before dropping it unbuilt, and its earliest API an `infra` entry of `serviceType: auth`
 * (docs/contract.md §4.2, decision 0058).
 */
const AuthServiceSpec = z.strictObject({
  ...ServiceSpec,
  nodeInterfaceId: ServiceSpec.nodeInterfaceId
    .optional()
    .describe("Accepted for SIP's shape; the provider reaches no host, so it is ignored."),
  clusterIP: z
    .string()
    .max(BOUNDS.short)
    .optional()
    .describe(
      "SIP's 'IP of the base cluster VIP': the address the tenant reaches this NodePort at, the issuer's host. Default: the control-plane load balancer's clusterIP.",
    ),
  nodePort: NodePort.describe("30000–32767: the issuer's port, so it can't be 0."),
  caSecret: z
    .string()
    .max(BOUNDS.name)
    .optional()
    .describe(
      "SIP's field: a Secret (tls.crt, tls.key) holding the CA that a cert-manager Issuer signs the provider's serving certificate with.",
    ),
  tlsSecret: z
    .string()
    .max(BOUNDS.name)
    .optional()
    .describe("Instead of caSecret: a Secret (tls.crt, tls.key) holding the serving certificate itself."),
  certificateAuthority: z
    .string()
    .max(BOUNDS.auth.certificates)
    .optional()
    .describe(
      "The PEM CA certificate(s) the tenant API server and kubectl trust the issuer with (public; required with caSecret).",
    ),
  clients: z
    .array(
      z.strictObject({
        id: z.string().max(BOUNDS.name).describe("Client id; the tenant API server's audience."),
        name: z.string().max(BOUNDS.name).optional().describe("Shown on the login page; default the id."),
        redirectURIs: z
          .array(z.string().max(BOUNDS.auth.uri))
          .max(BOUNDS.auth.redirectURIs)
          .describe("Where the login may return: kubelogin's local server."),
      }),
    )
    .max(BOUNDS.auth.clients)
    .optional()
    .describe("Public clients (kubectl with kubelogin). Default: kubectl, http://localhost:8000 and :18000."),
  connectors: z
    .array(
      z.strictObject({
        type: z.enum(DEX_CONNECTOR_TYPES).describe("Dex connector type."),
        id: z.string().max(BOUNDS.name).describe("Connector id (a DNS-1123 label, not 'local')."),
        name: z.string().max(BOUNDS.name).describe("Shown on the login page."),
        config: boundedRecord(z.unknown(), BOUNDS.auth.connectorFields)
          .optional()
          .describe("Dex's config for the type, without secrets; redirectURI defaults to <issuer>/callback."),
        secretKeyRefs: boundedRecord(SecretKeyRefSpec, BOUNDS.auth.connectorFields)
          .optional()
          .describe("Config field → Secret key whose value the provider is given (clientSecret, bindPW)."),
      }),
    )
    .max(BOUNDS.auth.connectors)
    .optional()
    .describe("Upstream identity providers."),
  staticUsers: z
    .array(
      z.strictObject({
        email: z.string().max(BOUNDS.name).describe("Login name, lowercase."),
        username: z
          .string()
          .max(BOUNDS.name)
          .optional()
          .describe("Display name (the name claim); default the email."),
        userID: z
          .string()
          .max(BOUNDS.name)
          .optional()
          .describe("Stable id behind the sub claim; default the email."),
        groups: z
          .array(z.string().max(BOUNDS.name))
          .max(BOUNDS.auth.groups)
          .optional()
          .describe("Groups in the groups claim."),
        passwordHash: SecretKeyRefSpec.describe("Secret key holding the user's bcrypt password hash."),
      }),
    )
    .max(BOUNDS.auth.staticUsers)
    .optional()
    .describe(
      "Users of the provider's own password database (break-glass, automation): password grant enabled.",
    ),
  claimMappings: z
    .strictObject({
      username: z
        .strictObject({
          claim: z.enum(USERNAME_CLAIMS).optional().describe("Default email."),
          prefix: z.string().max(BOUNDS.name).optional().describe("Default oidc: ; never empty nor system:."),
        })
        .optional(),
      groups: z
        .strictObject({
          prefix: z.string().max(BOUNDS.name).optional().describe("Default oidc: ; never empty nor system:."),
        })
        .optional(),
    })
    .optional()
    .describe("How the tenant API server names the token's user and groups."),
  roleBindings: z
    .array(
      z.strictObject({
        group: z.string().max(BOUNDS.name).describe("Group as the provider names it (before the prefix)."),
        clusterRole: z
          .string()
          .max(BOUNDS.name)
          .describe("ClusterRole the group is bound to in the tenant cluster."),
        namespace: z
          .string()
          .max(BOUNDS.name)
          .optional()
          .describe("Bind in this namespace only (a RoleBinding)."),
      }),
    )
    .max(BOUNDS.auth.roleBindings)
    .optional()
    .describe("RBAC of the tenant cluster for the provider's groups."),
});

/** `spec` of a SIPCluster (API airship.airshipit.org/v1). */
export const SipClusterSpecSchema = z.strictObject({
  nodes: boundedRecord(NodeSetSpec, BOUNDS.roles).describe(
    "Role (ControlPlane, Worker, …) → how to choose its hosts.",
  ),
  services: z
    .strictObject({
      loadBalancerControlPlane: z
        .array(z.strictObject({ ...ServiceSpec, nodePort: NodePort }))
        .max(BOUNDS.services)
        .optional(),
      loadBalancerWorker: z
        .array(
          z.strictObject({
            ...ServiceSpec,
            // SIP's CRD of the treasuremap releases requires it (every service shared one struct), but
            // SIP never reads it for workers; accepted so those SIPClusters load (warning field-ignored).
            nodePort: NodePort.optional().describe(
              "Required by some SIP releases' CRD, ignored by SIP and by metalsynth: workers use nodePortRange.",
            ),
            nodePortRange: z.strictObject({ start: z.int(), end: z.int() }),
          }),
        )
        .max(BOUNDS.services)
        .optional(),
      jumpHost: z
        .array(
          z.strictObject({
            ...ServiceSpec,
            nodePort: NodePort,
            bmc: z.strictObject({ proxy: z.boolean().optional() }).optional(),
            sshAuthorizedKeys: z
              .array(z.string().max(BOUNDS.sshKey))
              .max(BOUNDS.sshKeys)
              .optional()
              .describe("OpenSSH public keys allowed in."),
            nodeSSHPrivateKeys: z
              .string()
              .min(1)
              .max(BOUNDS.name)
              .describe("Name of the Secret holding the nodes' SSH keys."),
          }),
        )
        .max(BOUNDS.services)
        .optional(),
      auth: z
        .array(AuthServiceSpec)
        .max(1)
        .optional()
        .describe("metalsynth extension: the tenant's OIDC provider (Dex), at most one per tenant."),
    })
    .optional(),
});

/** A whole SIPCluster object. */
export const SipClusterSchema = z.looseObject({
  apiVersion: z.literal("airship.airshipit.org/v1"),
  kind: z.literal("SIPCluster"),
  metadata: ObjectMetaSpec,
  spec: SipClusterSpecSchema,
  status: IgnoredStatusSpec,
});

export type SipClusterSpec = z.infer<typeof SipClusterSchema>;
export type LabelSelectorSpec = z.infer<typeof LabelSelectorSpec>;
