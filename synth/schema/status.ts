import { z } from "zod";

/**
 * `.status` of the four CR kinds as the status reporter writes it (docs/contract.md §5, decision 0059),
 * published in each CRD instead of `x-kubernetes-preserve-unknown-fields`, so the API server refuses a
 * status of another shape from anyone, and `kubectl explain provisioning.status` documents it. Only
 * the reporter (field manager `metalsynth-status`) writes it, through the status subresource.
 */

/** Conditions of one object: one per type (the reporter writes at most six). */
const MAX_CONDITIONS = 16;
/** A condition's message: Kubernetes' metav1.Condition bound. */
const MAX_MESSAGE = 32768;
/** Hosts of one cluster in a status: a Provisioning's masters and workers, a SIPCluster's roles. */
const MAX_HOSTS = 2048;
/** Jobs of one status: the KUD installer, the Software installer or the label Job. */
const MAX_JOBS = 8;
/** A name, a host id (`namespace/name`), a revision: far above any real one. */
const MAX_NAME = 512;

/**
 * One condition, as `metav1.Condition` has it. `reason` is CamelCase for the reporter's own reasons
 * and the rule id (`no-fit`, `host-vanished`) for a rule's finding, so the pattern admits the dash
 * that rule ids carry, which metav1.Condition's pattern does not (decision 0059).
 */
export const ConditionSchema = z.strictObject({
  type: z
    .string()
    .min(1)
    .max(316)
    .describe("Valid, HostsAllocated, Applied, KudInstalled, SoftwareInstalled, HostsLabelled or Ready."),
  status: z.enum(["True", "False", "Unknown"]),
  observedGeneration: z
    .int()
    .min(0)
    .optional()
    .describe("The metadata.generation the condition was set for."),
  lastTransitionTime: z.string().meta({ format: "date-time" }).describe("When status last changed."),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .meta({ pattern: "^[A-Za-z]([A-Za-z0-9_,:-]*[A-Za-z0-9_])?$" })
    .describe("CamelCase, or the id of the rule whose finding it is."),
  message: z
    .string()
    .max(MAX_MESSAGE)
    .describe("What happened, in words, with what to do when there is something."),
});

/** A host Git allocated to the cluster (its Allocation), as the reporter finds it in the inventory. */
export const HostStatusSchema = z.strictObject({
  host: z.string().min(1).max(MAX_NAME).describe("namespace/name of the BareMetalHost."),
  role: z.string().min(1).max(MAX_NAME).describe("master or worker (BPA); the SIP role (SIPCluster)."),
  node: z.string().max(MAX_NAME).optional().describe("BPA: the node label the host serves as."),
  standby: z.boolean().optional().describe("SIP: a standby of its role."),
  address: z
    .string()
    .max(MAX_NAME)
    .optional()
    .describe(
      "What the rendered files reach the host at: hosts.ini's address (BPA), the address on the interface its role's load balancer targets (SIP); absent when the inventory has none.",
    ),
  present: z.boolean().describe("The host is in the live inventory (false: it vanished)."),
});

/** A Job metalsynth rendered for the cluster, as it last ran. */
export const JobStatusSchema = z.strictObject({
  name: z.string().min(1).max(MAX_NAME).describe("The Job, in the object's namespace."),
  component: z
    .enum(["kud", "software", "labels"])
    .describe("What it runs: the KUD installer, the Software installer, the BMH labels."),
  phase: z.enum(["Pending", "Running", "Succeeded", "Failed"]),
  reason: z.string().max(MAX_NAME).optional().describe("The Job's Complete or Failed condition reason."),
  startTime: z.string().meta({ format: "date-time" }).optional(),
  completionTime: z.string().meta({ format: "date-time" }).optional(),
  logs: z.string().max(MAX_NAME).describe("The command that prints its logs."),
});

/** The GitOps agent object that applied this object, and the revision it applied. */
export const GitOpsStatusSchema = z.strictObject({
  kind: z.enum(["Kustomization", "Application"]).describe("Flux Kustomization or Argo CD Application."),
  namespace: z.string().max(MAX_NAME).optional(),
  name: z.string().min(1).max(MAX_NAME),
  revision: z.string().max(MAX_NAME).optional().describe("The Git revision it last applied."),
});

/** `.status` of a Provisioning, Software, Cluster or SIPCluster. */
export const CrStatusSchema = z.strictObject({
  observedGeneration: z.int().min(0).optional().describe("The metadata.generation this status describes."),
  conditions: z
    .array(ConditionSchema)
    .max(MAX_CONDITIONS)
    .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })
    .optional(),
  hostSummary: z
    .string()
    .max(32)
    .optional()
    .describe("Hosts in the inventory / hosts allocated, as the HOSTS column shows them (5/5)."),
  hosts: z.array(HostStatusSchema).max(MAX_HOSTS).optional(),
  gitops: GitOpsStatusSchema.optional(),
  jobs: z.array(JobStatusSchema).max(MAX_JOBS).optional(),
});

export type Condition = z.infer<typeof ConditionSchema>;
export type HostStatus = z.infer<typeof HostStatusSchema>;
export type JobStatus = z.infer<typeof JobStatusSchema>;
export type GitOpsStatus = z.infer<typeof GitOpsStatusSchema>;
export type CrStatus = z.infer<typeof CrStatusSchema>;
