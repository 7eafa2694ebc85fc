/**
 * AdmissionReview requests shaped like the ones kube-apiserver sends (admission.k8s.io/v1, with
 * userInfo, options and the server-set metadata of the object), and CRs to put in them.
 */
import { KINDS, type CrKind } from "../../synth/schema/kinds.ts";

/** A CR as a plain object. */
export type Cr = Record<string, unknown> & {
  kind: CrKind;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

/** Overrides for {@link admissionReview}. */
export interface ReviewOptions {
  /** @default "CREATE" */
  readonly operation?: "CREATE" | "UPDATE" | "DELETE";
  /** @default a uid derived from the object's name */
  readonly uid?: string;
  readonly dryRun?: boolean;
  /** The stored object an UPDATE or DELETE replaces. */
  readonly oldObject?: Cr;
}

const OPTIONS_KIND = { CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions" } as const;

/** The AdmissionReview the API server sends for `object`. */
export function admissionReview(object: Cr, options: ReviewOptions = {}): Record<string, unknown> {
  const definition = KINDS[object.kind];
  const operation = options.operation ?? "CREATE";
  const kind = { group: definition.group, version: definition.version, kind: definition.kind };
  const resource = { group: definition.group, version: definition.version, resource: definition.plural };
  const stored = (cr: Cr) => ({
    ...cr,
    metadata: {
      ...cr.metadata,
      uid: "6b0e3f5c-1c55-4c1e-9d2f-5b2b3d9c0a11",
      generation: 1,
      creationTimestamp: "2026-11-21T10:00:00Z",
      managedFields: [{ manager: "kubectl-client-side-apply", operation: "Update", apiVersion: "v1" }],
    },
  });
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: options.uid ?? `uid-${object.metadata.name}`,
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      name: object.metadata.name,
      namespace: object.metadata.namespace ?? "default",
      operation,
      userInfo: { username: "kubernetes-admin", groups: ["system:masters", "system:authenticated"] },
      object: operation === "DELETE" ? null : stored(object),
      oldObject: options.oldObject ? stored(options.oldObject) : null,
      dryRun: options.dryRun ?? false,
      options: { apiVersion: "meta.k8s.io/v1", kind: OPTIONS_KIND[operation] },
    },
  };
}

/** One BPA node entry: the label and what it asks for (`null` for "same host as that master"). */
export type NodeEntry = readonly [label: string, request: Record<string, unknown> | null];

/** A Provisioning CR. */
export function provisioning(options: {
  name: string;
  namespace?: string;
  cluster?: string;
  masters: readonly NodeEntry[];
  workers?: readonly NodeEntry[];
}): Cr {
  const entries = (list: readonly NodeEntry[]) => list.map(([label, request]) => ({ [label]: request }));
  return {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Provisioning",
    metadata: {
      name: options.name,
      namespace: options.namespace ?? "edge-a",
      labels: { cluster: options.cluster ?? options.name },
    },
    spec: {
      masters: entries(options.masters),
      ...(options.workers && { workers: entries(options.workers) }),
      KUDPlugins: ["multus"],
    },
  };
}

/** A Software CR for `cluster` (its `metadata.labels.cluster`), named `<cluster>-software`, installing htop. */
export function software(options: { cluster: string; namespace?: string }): Cr {
  return {
    apiVersion: "bpa.akraino.org/v1alpha1",
    kind: "Software",
    metadata: {
      name: `${options.cluster}-software`,
      namespace: options.namespace ?? "edge-a",
      labels: { cluster: options.cluster },
    },
    spec: { masterSoftware: ["htop"] },
  };
}

/** A SIPCluster with a Worker role over `vino.airshipit.org/flavor: worker` hosts and a jump host. */
export function sipCluster(options: { name: string; namespace?: string; workers: number }): Cr {
  return {
    apiVersion: "airship.airshipit.org/v1",
    kind: "SIPCluster",
    metadata: { name: options.name, namespace: options.namespace ?? "edge-sip" },
    spec: {
      nodes: {
        Worker: {
          labelSelector: { matchLabels: { "vino.airshipit.org/flavor": "worker" } },
          topologyKey: "vino.airshipit.org/host",
          count: { active: options.workers, standby: 0 },
        },
      },
    },
  };
}
