import { k8s } from "cdk8s-plus-27";
import { Construct } from "constructs";
import { ALLOCATION_DEFINITION } from "../../synth/schema/allocation.ts";
import { KINDS } from "../../synth/schema/kinds.ts";
import { CA_NAME, WEBHOOK_NAME } from "./names.ts";

/** The API server gives up on a call after this many seconds (docs/contract.md §5); the server answers within 4 s. */
export const TIMEOUT_SECONDS = 5;

/** Props of {@link ValidatingWebhook}. */
export interface ValidatingWebhookProps {
  /** The webhook's namespace: its Service's, and the one namespace it does not review. */
  readonly namespace: string;
}

/**
 * The ValidatingWebhookConfiguration: one webhook for each CR kind and Allocations, called on CREATE
 * and UPDATE, failing closed, with the CA bundle cert-manager injects from the root CA.
 */
export class ValidatingWebhook extends Construct {
  constructor(scope: Construct, id: string, props: ValidatingWebhookProps) {
    super(scope, id);
    const { namespace } = props;
    new k8s.KubeValidatingWebhookConfiguration(this, "validating-webhook", {
      metadata: {
        name: WEBHOOK_NAME,
        // The root's certificate: it changes only when the root is renewed.
        annotations: { "cert-manager.io/inject-ca-from": `${namespace}/${CA_NAME}` },
      },
      webhooks: [...Object.values(KINDS), ALLOCATION_DEFINITION].map((definition) => ({
        // kubectl shows it: admission webhook "provisioning.metalsynth.io" denied the request: …
        name: `${definition.singular}.metalsynth.io`,
        admissionReviewVersions: ["v1"],
        // A CR admitted for real is recorded in the admissions ConfigMap; a dry run writes nothing
        // (decision 0056). An Allocation's review writes nothing at all.
        sideEffects: definition === ALLOCATION_DEFINITION ? "None" : "NoneOnDryRun",
        failurePolicy: "Fail",
        matchPolicy: "Equivalent",
        timeoutSeconds: TIMEOUT_SECONDS,
        clientConfig: {
          service: { namespace, name: WEBHOOK_NAME, path: `/validate/${definition.singular}`, port: 443 },
        },
        // DELETE is always allowed (docs/contract.md §5), so the API server need not call for it.
        rules: [
          {
            apiGroups: [definition.group],
            apiVersions: [definition.version],
            operations: ["CREATE", "UPDATE"],
            resources: [definition.plural],
            scope: "Namespaced",
          },
        ],
        namespaceSelector: {
          matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: [namespace] }],
        },
      })),
    });
  }
}
