import { z } from "zod";
import { BOUNDS } from "./bounds.ts";
import { ObjectMetaSpec, IgnoredStatusSpec } from "./formats.ts";

/** `spec` of the optional Cluster glue CR (the BPA seeds' draft "cluster CRD"). */
export const ClusterSpecSchema = z.strictObject({
  provisioningCR: z
    .string()
    .min(1)
    .max(BOUNDS.name)
    .optional()
    .describe("Name of the Provisioning CR of this cluster."),
  softwareCR: z
    .string()
    .min(1)
    .max(BOUNDS.name)
    .optional()
    .describe("Name of the Software CR of this cluster."),
});

/** A whole Cluster object. */
export const ClusterSchema = z.looseObject({
  apiVersion: z.literal("bpa.akraino.org/v1alpha1"),
  kind: z.literal("Cluster"),
  metadata: ObjectMetaSpec,
  spec: ClusterSpecSchema,
  status: IgnoredStatusSpec,
});

export type ClusterSpec = z.infer<typeof ClusterSchema>;
