import { structuralSchema } from "./openapi.ts";
import { ALLOCATION_DEFINITION } from "./allocation.ts";
import { KINDS, type KindDefinition } from "./kinds.ts";

/**
 * The `apiextensions.k8s.io/v1` CustomResourceDefinition of a kind, generated from the same zod schema
 * that validates input, so the API server and metalsynth can't disagree on shape.
 */
export function customResourceDefinition(definition: KindDefinition): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${definition.plural}.${definition.group}`,
      labels: { "app.kubernetes.io/managed-by": "metalsynth" },
    },
    spec: {
      group: definition.group,
      names: {
        kind: definition.kind,
        listKind: `${definition.kind}List`,
        plural: definition.plural,
        singular: definition.singular,
        shortNames: [...definition.shortNames],
      },
      scope: "Namespaced",
      versions: [
        {
          name: definition.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          // Age last of what `kubectl get` shows; what only `-o wide` shows (a message) after it.
          additionalPrinterColumns: [
            ...definition.printerColumns.filter((column) => column.priority === undefined),
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
            ...definition.printerColumns.filter((column) => column.priority !== undefined),
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: `${definition.kind} (${definition.upstream}), validated by metalsynth.`,
              required: ["spec"],
              properties: {
                apiVersion: { type: "string" },
                kind: { type: "string" },
                metadata: { type: "object" },
                spec: structuralSchema(definition.specSchema),
                status:
                  definition.statusSchema === undefined
                    ? { type: "object", "x-kubernetes-preserve-unknown-fields": true }
                    : structuralSchema(definition.statusSchema),
              },
            },
          },
        },
      ],
    },
  };
}

/** The CRDs of the four CR kinds, in a fixed order, then the Allocation synth renders. */
export function customResourceDefinitions(): Record<string, unknown>[] {
  return [...Object.values(KINDS), ALLOCATION_DEFINITION].map(customResourceDefinition);
}
