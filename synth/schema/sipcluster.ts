import { z } from "zod";
import { ObjectMetaSpec, IgnoredStatusSpec } from "./formats.ts";

/** Kubernetes `LabelSelector` (matchLabels / matchExpressions). */
const LabelSelectorSpec = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(
      z.strictObject({
        key: z.string(),
        operator: z.string().describe("In, NotIn, Exists or DoesNotExist."),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});

/** How many hosts of a role, and where they may come from. Upstream: airship/sip api/v1 NodeSet. */
const NodeSetSpec = z.strictObject({
  labelSelector: LabelSelectorSpec.describe("Which BareMetalHosts may serve this role."),
  topologyKey: z.string().optional().describe("Host label; at most one host per value within the role."),
  count: z.strictObject({
    active: z.int().min(0).describe("Hosts in service."),
    standby: z.int().min(0).optional().describe("Spare hosts kept labelled for upgrades."),
  }),
});

/** Fields every SIP service shares. `nodeLabels`/`clusterIP` are upstream fields accepted but unused. */
const ServiceSpec = {
  image: z
    .string()
    .optional()
    .describe("Container image; site default when omitted or empty (as upstream SIP)."),
  nodeInterfaceId: z.string().min(1).describe("networkData network id whose IP the service targets."),
  nodeLabels: z.record(z.string(), z.string()).optional().describe("Upstream field, not implemented."),
  clusterIP: z.string().optional().describe("Upstream field, not implemented."),
};

const NodePort = z.int().describe("30000–32767, or 0 to let Kubernetes choose.");

/** `spec` of a SIPCluster (API airship.airshipit.org/v1). */
export const SipClusterSpecSchema = z.strictObject({
  nodes: z
    .record(z.string(), NodeSetSpec)
    .describe("Role (ControlPlane, Worker, …) → how to choose its hosts."),
  services: z
    .strictObject({
      loadBalancerControlPlane: z.array(z.strictObject({ ...ServiceSpec, nodePort: NodePort })).optional(),
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
        .optional(),
      jumpHost: z
        .array(
          z.strictObject({
            ...ServiceSpec,
            nodePort: NodePort,
            bmc: z.strictObject({ proxy: z.boolean().optional() }).optional(),
            sshAuthorizedKeys: z.array(z.string()).optional().describe("OpenSSH public keys allowed in."),
            nodeSSHPrivateKeys: z.string().min(1).describe("Name of the Secret holding the nodes' SSH keys."),
          }),
        )
        .optional(),
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
