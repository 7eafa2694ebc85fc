import { k8s } from "cdk8s-plus-27";
import { Construct } from "constructs";
import { ALLOCATION_DEFINITION } from "../../synth/schema/allocation.ts";
import { KINDS } from "../../synth/schema/kinds.ts";
import { ADMISSIONS_CONFIGMAP, SECRETS_ROLE, WEBHOOK_NAME } from "./names.ts";

/** Props of {@link WebhookRbac}. */
export interface WebhookRbacProps {
  /** The webhook's namespace, where its ServiceAccount is. */
  readonly namespace: string;
  /** The namespaces holding the inventory's networkData Secrets: a Role there reads them. */
  readonly inventoryNamespaces: readonly string[];
}

const READ = ["get", "list", "watch"];

/**
 * The webhook's identity: its ServiceAccount, a read-only ClusterRole (the hosts, the four CR kinds
 * and Allocations; no Secrets) and, in each inventory namespace, a Role reading Secrets.
 */
export class WebhookRbac extends Construct {
  constructor(scope: Construct, id: string, props: WebhookRbacProps) {
    super(scope, id);
    const { namespace, inventoryNamespaces } = props;
    const subjects = [{ kind: "ServiceAccount", name: WEBHOOK_NAME, namespace }];
    new k8s.KubeServiceAccount(this, "service-account", { metadata: { name: WEBHOOK_NAME, namespace } });

    // It reads the four CR kinds it reviews, and the Allocations that carry Git's lock (decision 0039).
    const watched = [...Object.values(KINDS), ALLOCATION_DEFINITION];
    new k8s.KubeClusterRole(this, "cluster-role", {
      metadata: { name: WEBHOOK_NAME },
      rules: [
        { apiGroups: ["metal3.io"], resources: ["baremetalhosts", "hardwaredata"], verbs: READ },
        ...[...new Set(watched.map((definition) => definition.group))].map((group) => ({
          apiGroups: [group],
          resources: watched
            .filter((definition) => definition.group === group)
            .map((definition) => definition.plural),
          verbs: READ,
        })),
      ],
    });
    new k8s.KubeClusterRoleBinding(this, "cluster-role-binding", {
      metadata: { name: WEBHOOK_NAME },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: WEBHOOK_NAME },
      subjects,
    });
    // Secrets in the inventory namespaces only, nothing cluster-wide (decision 0037). RBAC can't
    // select by label: this allows reading every Secret of those namespaces, but the webhook lists and
    // watches only those labelled metalsynth.io/network-data=true.
    for (const inventoryNamespace of inventoryNamespaces) {
      new k8s.KubeRole(this, `secrets-role-${inventoryNamespace}`, {
        metadata: { name: SECRETS_ROLE, namespace: inventoryNamespace },
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: READ }],
      });
      new k8s.KubeRoleBinding(this, `secrets-role-binding-${inventoryNamespace}`, {
        metadata: { name: SECRETS_ROLE, namespace: inventoryNamespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: SECRETS_ROLE },
        subjects,
      });
    }
  }
}

/** Props of {@link AdmissionsRecord}. */
export interface AdmissionsRecordProps {
  /** The webhook's namespace: the ConfigMap's, and its ServiceAccount's. */
  readonly namespace: string;
}

/**
 * Admissions in flight, shared by the replicas (decision 0056): the ConfigMap they record them in,
 * and a Role that reads and updates this ConfigMap and no other.
 */
export class AdmissionsRecord extends Construct {
  constructor(scope: Construct, id: string, props: AdmissionsRecordProps) {
    super(scope, id);
    const metadata = { name: ADMISSIONS_CONFIGMAP, namespace: props.namespace };
    new k8s.KubeConfigMap(this, "admissions", { metadata });
    new k8s.KubeRole(this, "admissions-role", {
      metadata,
      rules: [
        {
          apiGroups: [""],
          resources: ["configmaps"],
          resourceNames: [ADMISSIONS_CONFIGMAP],
          verbs: ["get", "list", "watch", "update"],
        },
      ],
    });
    new k8s.KubeRoleBinding(this, "admissions-role-binding", {
      metadata,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: ADMISSIONS_CONFIGMAP },
      subjects: [{ kind: "ServiceAccount", name: WEBHOOK_NAME, namespace: props.namespace }],
    });
  }
}
