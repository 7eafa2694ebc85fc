import { z } from "zod";
import { BOUNDS } from "./bounds.ts";
import { ObjectMetaSpec, IgnoredStatusSpec, oneKeyMap } from "./formats.ts";

/** A package: `htop`, or pinned `{ jq: { version: 1.5+dfsg-1ubuntu0.1 } }` (upstream BPA style). */
const PackageSpec = z.union([
  z.string().max(BOUNDS.name),
  oneKeyMap(
    z.strictObject({
      version: z.string().max(BOUNDS.short).describe("Debian version, passed as name=version."),
    }),
  ),
]);

/** `spec` of a Software CR: packages for the cluster's masters and workers. */
export const SoftwareSpecSchema = z.strictObject({
  masterSoftware: z
    .array(PackageSpec)
    .max(BOUNDS.packages)
    .optional()
    .describe("Packages installed on every master."),
  workerSoftware: z
    .array(PackageSpec)
    .max(BOUNDS.packages)
    .optional()
    .describe("Packages installed on every worker."),
});

/** A whole Software object. */
export const SoftwareSchema = z.looseObject({
  apiVersion: z.literal("bpa.akraino.org/v1alpha1"),
  kind: z.literal("Software"),
  metadata: ObjectMetaSpec,
  spec: SoftwareSpecSchema,
  status: IgnoredStatusSpec,
});

export type SoftwareSpec = z.infer<typeof SoftwareSchema>;
