import { Chart } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import type { ImageReference } from "../../synth/checked.ts";
import { toYaml, toYamlStream } from "../../synth/codec/yaml-output.ts";
import type { SipAuth } from "../../synth/model/sip.ts";
import { authObjectNames } from "../../synth/names.ts";
import type { SipRender } from "../../synth/plan/render-plan.ts";
import type { SiteSettings } from "../../synth/schema/settings.ts";
import { KubeObject } from "../kube-object.ts";
import {
  NOBODY,
  SYNC_WAVES,
  clusterChartProps,
  nobodyPodSecurityContext,
  unprivilegedContainerSecurityContext,
  waveAnnotations,
} from "../metadata.ts";
import {
  DEX_FILES,
  DEX_PORTS,
  DEX_WORKING_DIR,
  authenticationConfiguration,
  dexConfig,
  tenantRbac,
  type DexEnv,
} from "./auth-config.ts";
import { serviceWorkload } from "./workload.ts";

export { DEX_FILES, DEX_PORTS, DEX_VERSION, DEX_WORKING_DIR } from "./auth-config.ts";

/** Props of {@link AuthChart}. */
export interface AuthChartProps {
  /** The SIPCluster's plan; its `auth` service is rendered. */
  readonly cluster: SipRender;
  /** `images.auth` is the image of a service that names none. */
  readonly settings: SiteSettings;
}

/** The key of the AuthenticationConfiguration in its ConfigMap: the file kube-apiserver is given. */
export const AUTHENTICATION_CONFIG_KEY = "authentication-config.yaml";
/** The key of the tenant's RBAC bindings in their ConfigMap (a YAML stream). */
export const TENANT_RBAC_KEY = "rbac.yaml";
/** Where the Dex image keeps its binary; the command starts it directly, past the image's entrypoint. */
const DEX_BINARY = "/usr/local/bin/dex";

/**
 * A SIPCluster's OIDC provider, SIP's third service (docs/contract.md §4.2, decision 0058), all in
 * the cluster's namespace and named after it (`synth/names.ts`):
 * - `auth-<cluster>`: a ConfigMap with Dex's `config.yaml`, a Deployment of one Dex, a NodePort
 *   Service 5554 → `nodePort`, the issuer's port; with `caSecret`, a cert-manager Issuer of that CA
 *   and the Certificate it signs for the issuer's address, into Secret `auth-<cluster>-tls`;
 * - `authentication-config-<cluster>`: a ConfigMap with the tenant kube-apiserver's
 *   `authentication-config.yaml` (and the CA as `ca.crt`, for kubelogin), the one file the tenant's
 *   control plane mounts;
 * - `tenant-rbac-<cluster>`: a ConfigMap with the tenant cluster's bindings of the named groups, for a
 *   ClusterResourceSet or a first apply to take into the tenant cluster (never applied to the hub).
 *
 * No secret enters Git: connector secrets and static users' password hashes reach Dex as variables
 * from their Secrets (`secretKeyRef`), the serving key is mounted from its Secret.
 */
export class AuthChart extends Chart {
  constructor(scope: Construct, id: string, props: AuthChartProps) {
    const { cluster, settings } = props;
    super(scope, id, clusterChartProps(cluster));
    const annotations = waveAnnotations(SYNC_WAVES.services);
    for (const auth of cluster.sip.services.auth ?? []) {
      const names = authObjectNames(cluster.name);
      const { config, env } = dexConfig(auth, cluster.key);
      const tlsSecret = "caSecret" in auth.serving ? names.tls : auth.serving.tlsSecret;
      serviceWorkload(this, {
        name: names.service,
        app: "dex",
        cluster,
        annotations,
        configData: { "config.yaml": toYaml(config) },
        // Memory storage: one provider per tenant holds its signing keys (decision 0058).
        replicas: 1,
        podSpec: () => dexPod(auth.image ?? settings.images.auth, names.service, tlsSecret, env),
        ports: [{ name: "https", port: DEX_PORTS.https, nodePort: auth.nodePort }],
      });
      if ("caSecret" in auth.serving) this.certificate(auth, auth.serving.caSecret, names, annotations);
      new KubeObject(
        this,
        "authentication-config",
        k8s.KubeConfigMap.manifest({
          metadata: { name: names.authenticationConfig, annotations },
          data: {
            [AUTHENTICATION_CONFIG_KEY]: toYaml(authenticationConfiguration(auth)),
            ...(auth.serving.certificateAuthority === undefined
              ? {}
              : { "ca.crt": auth.serving.certificateAuthority }),
          },
        }),
      );
      const rbac = tenantRbac(auth, cluster.name);
      if (rbac.length > 0)
        new KubeObject(
          this,
          "tenant-rbac",
          k8s.KubeConfigMap.manifest({
            metadata: { name: names.tenantRbac, annotations },
            data: { [TENANT_RBAC_KEY]: toYamlStream(rbac) },
          }),
        );
    }
  }

  /**
   * The chain of the webhook's chart without its self-signed root (decision 0037): the tenant's API
   * server must trust the root before anything is issued, so the root is the operator's, in
   * `caSecret` (SIP's field, which SIP also made a CA issuer of). A CA Issuer of it signs the serving
   * certificate for the issuer's address; renewals keep the root, so the AuthenticationConfiguration
   * never changes, and Dex reloads the renewed certificate from its mounted Secret.
   */
  private certificate(
    auth: SipAuth,
    caSecret: string,
    names: ReturnType<typeof authObjectNames>,
    annotations: Record<string, string>,
  ): void {
    new KubeObject(this, "issuer", {
      apiVersion: "cert-manager.io/v1",
      kind: "Issuer",
      metadata: { name: names.service, annotations },
      spec: { ca: { secretName: caSecret } },
    });
    new KubeObject(this, "certificate", {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: names.service, annotations },
      spec: {
        secretName: names.tls,
        ipAddresses: [auth.address],
        issuerRef: { name: names.service, kind: "Issuer" },
        privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      },
    });
  }
}

/**
 * Dex as the pod runs it: the binary started directly (the image's entrypoint would template a
 * `.tpl` config with gomplate; this one is final), in {@link DEX_WORKING_DIR} with the config and the
 * serving certificate mounted below it, as `nobody` with a read-only root. Memory storage writes
 * nothing; the probes ask Dex's telemetry listener.
 */
function dexPod(
  image: ImageReference,
  configMap: string,
  tlsSecret: string,
  env: readonly DexEnv[],
): k8s.PodSpec {
  const telemetry = k8s.IntOrString.fromString("telemetry");
  return {
    automountServiceAccountToken: false,
    // fsGroup: the serving key is mounted 0440, readable by the group only.
    securityContext: { ...nobodyPodSecurityContext(), fsGroup: NOBODY },
    containers: [
      {
        name: "dex",
        image,
        command: [DEX_BINARY, "serve", DEX_FILES.config],
        workingDir: DEX_WORKING_DIR,
        env: env.map((variable) =>
          "value" in variable
            ? { name: variable.name, value: variable.value }
            : {
                name: variable.name,
                valueFrom: { secretKeyRef: { name: variable.secret.name, key: variable.secret.key } },
              },
        ),
        securityContext: unprivilegedContainerSecurityContext(),
        ports: [
          { name: "https", containerPort: DEX_PORTS.https },
          { name: "telemetry", containerPort: DEX_PORTS.telemetry },
        ],
        readinessProbe: { httpGet: { path: "/healthz/ready", port: telemetry }, periodSeconds: 10 },
        livenessProbe: { httpGet: { path: "/healthz/live", port: telemetry }, periodSeconds: 20 },
        resources: {
          requests: { cpu: k8s.Quantity.fromString("50m"), memory: k8s.Quantity.fromString("64Mi") },
          limits: { memory: k8s.Quantity.fromString("256Mi") },
        },
        volumeMounts: [
          { name: "config", mountPath: `${DEX_WORKING_DIR}/${DEX_FILES.configDir}`, readOnly: true },
          { name: "tls", mountPath: `${DEX_WORKING_DIR}/${DEX_FILES.tlsDir}`, readOnly: true },
        ],
      },
    ],
    volumes: [
      { name: "config", configMap: { name: configMap } },
      {
        name: "tls",
        secret: {
          secretName: tlsSecret,
          defaultMode: 0o440,
          items: [
            { key: "tls.crt", path: "tls.crt" },
            { key: "tls.key", path: "tls.key" },
          ],
        },
      },
    ],
  };
}
