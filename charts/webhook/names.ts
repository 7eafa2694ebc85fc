/**
 * The names the webhook's objects go by, and the port and selector that tie its Service, pods,
 * PodDisruptionBudget, NetworkPolicy and ServiceMonitor together: shared by the parts of the
 * webhook chart (charts/webhook/webhook-chart.ts) and the Helm chart generated from it.
 */

/** Name of the Deployment, Service, ServiceAccount, RBAC objects, PDB, certificate and configuration. */
export const WEBHOOK_NAME = "metalsynth-webhook";
/** The Role (and RoleBinding) in each inventory namespace that lets the webhook read Secrets there. */
export const SECRETS_ROLE = `${WEBHOOK_NAME}-secrets`;
/**
 * The ConfigMap the replicas record admissions in flight in (decision 0056): made by the chart, so
 * the webhook needs no right to create ConfigMaps, only to read and write this one.
 */
export const ADMISSIONS_CONFIGMAP = `${WEBHOOK_NAME}-admissions`;
/** The ResourceQuota that lets the namespace run pods of the webhook's priority class. */
export const CRITICAL_PODS_QUOTA = `${WEBHOOK_NAME}-critical-pods`;
/** The Secret cert-manager writes the serving certificate into. */
export const TLS_SECRET = `${WEBHOOK_NAME}-tls`;
/** The root CA's Certificate and Secret: it issues the serving certificate; its certificate is the CA bundle. */
export const CA_NAME = `${WEBHOOK_NAME}-ca`;
/** The self-signed Issuer that makes the root CA. */
export const ROOT_ISSUER = `${WEBHOOK_NAME}-selfsigned`;
/** The port the server listens on inside the pod (non-root: above 1024). */
export const WEBHOOK_PORT = 8443;
/** The labels that select the webhook's pods. */
export const SELECTOR = { "app.kubernetes.io/name": WEBHOOK_NAME };

/** The Service's DNS name inside the cluster: the serving certificate's name, and what a scrape verifies. */
export function serviceHost(namespace: string): string {
  return `${WEBHOOK_NAME}.${namespace}.svc`;
}
