import type { z } from "zod";
import { ClusterSchema, ClusterSpecSchema } from "./cluster.ts";
import { ProvisioningSchema, ProvisioningSpecSchema } from "./provisioning.ts";
import { SipClusterSchema, SipClusterSpecSchema } from "./sipcluster.ts";
import { SoftwareSchema, SoftwareSpecSchema } from "./software.ts";
import { CrStatusSchema } from "./status.ts";

/** A printer column of the published CRD (`kubectl get provisionings`). */
export interface PrinterColumn {
  readonly name: string;
  readonly type: "string" | "integer";
  readonly jsonPath: string;
  /** 1: shown by `kubectl get -o wide` only. */
  readonly priority?: number;
}

/** Everything metalsynth knows about one CR kind: its identity, schema and CRD presentation. */
export interface KindDefinition {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  /** The whole object, validated on input. */
  readonly schema: z.ZodType;
  /** `spec` alone, published as the CRD's structural schema. */
  readonly specSchema: z.ZodType;
  /** `status`, published likewise; absent: a kind with no status (any content kept). */
  readonly statusSchema?: z.ZodType;
  readonly printerColumns: readonly PrinterColumn[];
  /** The upstream project this kind comes from, for docs and messages. */
  readonly upstream: string;
}

const clusterLabelColumn: PrinterColumn = {
  name: "Cluster",
  type: "string",
  jsonPath: ".metadata.labels.cluster",
};

/**
 * What the status reporter found, at a glance (decision 0059): the `Ready` condition's status and
 * reason, and the hosts in the inventory out of those Git allocated; `-o wide` adds the message.
 * `kubectl` prints the first value a JSONPath finds, so each column names one field.
 */
const statusColumns: readonly PrinterColumn[] = [
  { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: "Hosts", type: "string", jsonPath: ".status.hostSummary" },
  { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
  {
    name: "Message",
    type: "string",
    jsonPath: '.status.conditions[?(@.type=="Ready")].message',
    priority: 1,
  },
];

/** The four CR kinds metalsynth reads, keyed by kind. */
export const KINDS = {
  Provisioning: {
    group: "bpa.akraino.org",
    version: "v1alpha1",
    kind: "Provisioning",
    plural: "provisionings",
    singular: "provisioning",
    shortNames: ["bpa"],
    schema: ProvisioningSchema,
    specSchema: ProvisioningSpecSchema,
    statusSchema: CrStatusSchema,
    printerColumns: [clusterLabelColumn, ...statusColumns],
    upstream: "Akraino ICN BPA",
  },
  Software: {
    group: "bpa.akraino.org",
    version: "v1alpha1",
    kind: "Software",
    plural: "softwares",
    singular: "software",
    shortNames: ["sw"],
    schema: SoftwareSchema,
    specSchema: SoftwareSpecSchema,
    statusSchema: CrStatusSchema,
    printerColumns: [clusterLabelColumn, ...statusColumns],
    upstream: "Akraino ICN BPA",
  },
  Cluster: {
    group: "bpa.akraino.org",
    version: "v1alpha1",
    kind: "Cluster",
    plural: "clusters",
    singular: "cluster",
    shortNames: ["bpacluster"],
    schema: ClusterSchema,
    specSchema: ClusterSpecSchema,
    statusSchema: CrStatusSchema,
    printerColumns: [clusterLabelColumn, ...statusColumns],
    upstream: "Akraino ICN BPA (draft cluster CRD)",
  },
  SIPCluster: {
    group: "airship.airshipit.org",
    version: "v1",
    kind: "SIPCluster",
    plural: "sipclusters",
    singular: "sipcluster",
    shortNames: ["sip"],
    schema: SipClusterSchema,
    specSchema: SipClusterSpecSchema,
    statusSchema: CrStatusSchema,
    printerColumns: statusColumns,
    upstream: "Airship SIP",
  },
} as const satisfies Record<string, KindDefinition>;

/** One of the four CR kinds. */
export type CrKind = keyof typeof KINDS;

/** `group/version` of a kind, as written in `apiVersion`. */
export function apiVersionOf(definition: KindDefinition): string {
  return `${definition.group}/${definition.version}`;
}

/** The kind definition for an `apiVersion`/`kind` pair, if metalsynth reads it. */
export function kindFor(apiVersion: unknown, kind: unknown): KindDefinition | undefined {
  const definition = typeof kind === "string" ? (KINDS as Record<string, KindDefinition>)[kind] : undefined;
  return definition && apiVersionOf(definition) === apiVersion ? definition : undefined;
}
