import { z } from "zod";
import { BOUNDS } from "./bounds.ts";
import { ObjectMetaSpec, IgnoredStatusSpec, formatted, oneKeyMap } from "./formats.ts";
import { HardwareRequestSpec } from "./hardware.ts";

/**
 * What a master asks of its host. Upstream: ICN BPA `Provisioning.spec.masters[]`
 * (https://github.com/akraino-edge-stack/icn, cmd/bpa-operator/pkg/apis/bpa/v1alpha1).
 */
const MasterRequestSpec = z.strictObject({
  "mac-address": formatted("mac")
    .optional()
    .describe("MAC of one of the host's NICs; the host's IP for this node is that NIC's IPv4."),
  cpu: z.int().min(1).optional().describe("Minimum logical CPUs (BMH status.hardware.cpu.count)."),
  memory: z
    .union([z.string().max(BOUNDS.short), z.int()])
    .optional()
    .describe(
      "Minimum RAM as a Kubernetes quantity (64Gi); a bare number means bytes and must be ≥ 1048576 (1Mi).",
    ),
  hardware: HardwareRequestSpec.optional(),
});

/** A worker may also require SR-IOV or QAT capable hardware (BMH labels feature.metalsynth.io/*). */
const WorkerRequestSpec = MasterRequestSpec.extend({
  sriov: z.boolean().optional().describe("Host must be labelled feature.metalsynth.io/sriov=true."),
  qat: z.boolean().optional().describe("Host must be labelled feature.metalsynth.io/qat=true."),
});

/** `spec` of a Provisioning: which hosts form the cluster, and how KUD installs it. */
export const ProvisioningSpecSchema = z.strictObject({
  masters: z
    .array(oneKeyMap(MasterRequestSpec.nullable()))
    .max(BOUNDS.masters)
    .optional()
    .describe("Control-plane nodes: `- <node-label>: {mac-address?, cpu?, memory?}`."),
  workers: z
    .array(oneKeyMap(WorkerRequestSpec.nullable()))
    .max(BOUNDS.workers)
    .optional()
    .describe("Worker nodes; a null value (`- master-1:`) means the master with that label also works."),
  KUDPlugins: z
    .array(formatted("plugin").max(BOUNDS.label))
    .max(BOUNDS.plugins)
    .optional()
    .describe("KUD plugins passed to the installer."),
  PodSubnet: z
    .string()
    .max(BOUNDS.short)
    .optional()
    .describe("Pod network CIDR passed to the installer as --network."),
});

/** A whole Provisioning object as it appears in a site or an AdmissionReview. */
export const ProvisioningSchema = z.looseObject({
  apiVersion: z.literal("bpa.akraino.org/v1alpha1"),
  kind: z.literal("Provisioning"),
  metadata: ObjectMetaSpec,
  spec: ProvisioningSpecSchema,
  status: IgnoredStatusSpec,
});

export type ProvisioningSpec = z.infer<typeof ProvisioningSchema>;
export type WorkerRequestSpec = z.infer<typeof WorkerRequestSpec>;
