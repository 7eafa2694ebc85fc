import { z } from "zod";
import { BOUNDS } from "./bounds.ts";
import { ObjectMetaSpec } from "./formats.ts";
import { apiVersionOf, type KindDefinition } from "./kinds.ts";

/**
 * `spec` of an Allocation: one cluster's entries of Git's lock (decision 0039). Published as the
 * CRD's schema so the API server refuses a hand-made object of the wrong shape; the webhook reads the
 * entries with the lock file's own checks (`lockFromAllocations`), which are stricter.
 */
export const AllocationSpecSchema = z.strictObject({
  kind: z.enum(["bpa", "sip"]).describe("Which planner made the allocations: bpa or sip."),
  hosts: z
    .array(
      z.strictObject({
        host: z.string().min(1).max(BOUNDS.name).describe("namespace/name of the BareMetalHost."),
        role: z.string().min(1).max(BOUNDS.label).describe("master or worker (BPA); the SIP role (SIP)."),
        node: z
          .string()
          .min(1)
          .max(BOUNDS.label)
          .optional()
          .describe("BPA: the node label the host serves as."),
        standby: z.boolean().optional().describe("SIP: the host is a standby of its role."),
        released: z.boolean().optional().describe("SIP: the cluster is giving the host up."),
        snapshot: z
          .string()
          .max(BOUNDS.label)
          .optional()
          .describe("SIP, released: the host as last seen (8 hex digits)."),
      }),
    )
    .max(BOUNDS.allocationHosts)
    .describe("The cluster's hosts, in the lock's order."),
});

/** A whole Allocation object. */
export const AllocationSchema = z.looseObject({
  apiVersion: z.literal("metalsynth.io/v1alpha1"),
  kind: z.literal("Allocation"),
  metadata: ObjectMetaSpec,
  spec: AllocationSpecSchema,
});

/**
 * The Allocation kind: rendered by synth, never read from `specs/`, so it is not one of `KINDS`.
 * The API server prints only the first value of a printer column's JSONPath (its table convertor
 * takes `results[0][0]`), so a column cannot list a cluster's hosts; the README shows the
 * `-o custom-columns` that does.
 */
export const ALLOCATION_DEFINITION = {
  group: "metalsynth.io",
  version: "v1alpha1",
  kind: "Allocation",
  plural: "allocations",
  singular: "allocation",
  shortNames: ["alloc"],
  schema: AllocationSchema,
  specSchema: AllocationSpecSchema,
  printerColumns: [{ name: "Kind", type: "string", jsonPath: ".spec.kind" }],
  upstream: "metalsynth: one cluster's entries of rendered/metalsynth.lock.yaml",
} as const satisfies KindDefinition;

/** The Allocation's `apiVersion` and `kind`. */
export const ALLOCATION_API_VERSION = apiVersionOf(ALLOCATION_DEFINITION);
export const ALLOCATION_KIND = ALLOCATION_DEFINITION.kind;

/**
 * The field managers that apply rendered directories, so the ones an Allocation's spec is written
 * by: Flux's kustomize-controller, Argo CD's server-side apply, and client-side apply, which Argo
 * CD's default sync and `kubectl apply` share. The webhook trusts an Allocation whose spec only
 * they wrote, unless the site declares others (decision 0056).
 */
export const DEFAULT_ALLOCATION_MANAGERS: readonly string[] = [
  "kustomize-controller",
  "argocd-controller",
  "kubectl-client-side-apply",
];
