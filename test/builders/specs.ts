/**
 * Fixture builders for the CRs of a site, normalised as planning sees them. Each goes through the
 * real reader (YAML text → schema → normalisation), so the fixtures can't drift from what a site
 * file gives; a fixture that fails its schema throws. Every call returns fresh objects.
 */
import { stringify } from "yaml";
import { parseDocuments } from "../../synth/codec/read-documents.ts";
import type { Provisioning } from "../../synth/model/bpa.ts";
import { normalizeProvisioning } from "../../synth/site/bpa.ts";
import { readResources } from "../../synth/site/resources.ts";
import type { AnyResource } from "../../synth/model/resource.ts";
import { normalizeSipCluster } from "../../synth/site/sip.ts";
import type { SipCluster } from "../../synth/model/sip.ts";

/** A `spec.masters` / `spec.workers` entry's value; `null` is "the same host as that master". */
export type NodeEntry = {
  readonly "mac-address"?: string;
  readonly cpu?: number;
  readonly memory?: string;
  readonly sriov?: boolean;
  readonly qat?: boolean;
} | null;

/** Overrides for {@link makeProvisioning}. */
export interface ProvisioningOptions {
  /** The cluster label and the CR's name. @default "c1" */
  readonly cluster?: string;
  /** @default "ns" */
  readonly namespace?: string;
  /** Node label → entry, in CR order. @default one master `master-1` asking for nothing */
  readonly masters?: Readonly<Record<string, NodeEntry>>;
  readonly workers?: Readonly<Record<string, NodeEntry>>;
}

/** A fresh normalised {@link Provisioning}. */
export function makeProvisioning(options: ProvisioningOptions = {}): Provisioning {
  const cluster = options.cluster ?? "c1";
  const entries = (nodes: Readonly<Record<string, NodeEntry>>) =>
    Object.entries(nodes).map(([label, entry]) => ({ [label]: entry }));
  const resource = readOne("Provisioning", {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: { name: cluster, namespace: options.namespace ?? "ns", labels: { cluster } },
    spec: {
      masters: entries(options.masters ?? { "master-1": {} }),
      ...(options.workers && { workers: entries(options.workers) }),
    },
  });
  if (resource.kind !== "Provisioning") throw new Error(`fixture read as ${resource.kind}`);
  return normalizeProvisioning(resource).provisioning;
}

/** One `spec.nodes` role of {@link makeSipCluster}. */
export interface SipRoleOptions {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly topologyKey?: string;
  readonly active: number;
  readonly standby?: number;
}

/** Overrides for {@link makeSipCluster}. */
export interface SipClusterOptions {
  /** @default "sip" */
  readonly name?: string;
  /** @default "ns" */
  readonly namespace?: string;
  /** Role → what it asks for. @default ControlPlane, one active host, any labels */
  readonly nodes?: Readonly<Record<string, SipRoleOptions>>;
}

/** A fresh normalised {@link SipCluster} without services. */
export function makeSipCluster(options: SipClusterOptions = {}): SipCluster {
  const nodes = Object.fromEntries(
    Object.entries(options.nodes ?? { ControlPlane: { active: 1 } }).map(([role, node]) => [
      role,
      {
        labelSelector: { matchLabels: { ...node.matchLabels } },
        ...(node.topologyKey !== undefined && { topologyKey: node.topologyKey }),
        count: { active: node.active, standby: node.standby ?? 0 },
      },
    ]),
  );
  const resource = readOne("SIPCluster", {
    apiVersion: "airship.airshipit.org/v1",
    kind: "SIPCluster",
    metadata: { name: options.name ?? "sip", namespace: options.namespace ?? "ns" },
    spec: { nodes },
  });
  if (resource.kind !== "SIPCluster") throw new Error(`fixture read as ${resource.kind}`);
  const { sip } = normalizeSipCluster(resource);
  if (!sip) throw new Error(`fixture SIPCluster ${resource.name} is not planned (its name is no DNS label)`);
  return sip;
}

function readOne(kind: string, object: Record<string, unknown>): AnyResource {
  const { documents } = parseDocuments(`${kind}.yaml`, stringify(object));
  const { resources, issues } = readResources(documents);
  const [resource] = resources;
  if (issues.length > 0 || !resource) {
    throw new Error(`fixture ${kind} does not read: ${issues.map((found) => found.message).join("; ")}`);
  }
  return resource;
}
