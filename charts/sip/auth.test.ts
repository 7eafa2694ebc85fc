import { Certificate, Issuer } from "@kubernetes-models/cert-manager/cert-manager.io/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { ConfigMap, Service } from "kubernetes-models/v1";
import { parse, parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { toYamlStream } from "../../synth/codec/yaml-output.ts";
import type { SipClusterPlan } from "../../synth/plan/model.ts";
import { secretFindings } from "../../synth/rules/secrets.ts";
import { DEFAULT_SETTINGS, type SiteSettings } from "../../synth/schema/settings.ts";
import { authService, TEST_CA } from "../../test/support/auth.ts";
import {
  findObject,
  synthObjects,
  testApp,
  validateKubernetesObject,
  type KubeObject,
} from "../../test/support/charts.ts";
import { examplePlan, sipPlan } from "../../test/support/sip.ts";
import { AUTHENTICATION_CONFIG_KEY, AuthChart, TENANT_RBAC_KEY } from "./auth.ts";

const NAME = "auth-tenant-a";

function render(cluster: SipClusterPlan, settings: SiteSettings = DEFAULT_SETTINGS): KubeObject[] {
  return synthObjects(new AuthChart(testApp(), "auth", { cluster, settings }));
}

/** The tenant-a plan with one `auth` service made of `overrides` over {@link authService}. */
function planWith(overrides: Record<string, unknown> = {}): SipClusterPlan {
  return sipPlan({ services: { auth: [authService(overrides) as never] } });
}

function data(objects: readonly KubeObject[], name: string): Record<string, string> {
  return new ConfigMap(findObject(objects, "ConfigMap", name)).data ?? {};
}

function dexContainer(objects: readonly KubeObject[]) {
  const container = new Deployment(findObject(objects, "Deployment", NAME)).spec?.template.spec
    ?.containers[0];
  if (!container) throw new Error("no Dex container");
  return container;
}

describe("AuthChart", () => {
  // Reviewed: the example site's rendered/clusters/edge-sip/tenant-a/auth.yaml.
  it("matches the reviewed snapshot", async () => {
    const { plan, settings } = examplePlan();
    await expect(toYamlStream(render(plan, settings))).toMatchFileSnapshot("__snapshots__/auth.yaml");
  });

  it("renders Dex's ConfigMap, Deployment and NodePort Service, cert-manager's Issuer and Certificate, and the tenant's two ConfigMaps", () => {
    const objects = render(planWith());
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
      `ConfigMap/${NAME}`,
      `Deployment/${NAME}`,
      `Service/${NAME}`,
      `Issuer/${NAME}`,
      `Certificate/${NAME}`,
      "ConfigMap/authentication-config-tenant-a",
      "ConfigMap/tenant-rbac-tenant-a",
    ]);
    for (const object of objects) {
      validateKubernetesObject(object);
      expect(object.metadata.namespace).toBe("edge-sip");
    }
    expect(new Service(findObject(objects, "Service", NAME)).spec).toEqual({
      type: "NodePort",
      selector: { "app.kubernetes.io/name": "dex", "app.kubernetes.io/instance": NAME },
      ports: [{ name: "https", protocol: "TCP", port: 5554, targetPort: 5554, nodePort: 30556 }],
    });
  });

  it("issues the serving certificate for the issuer's address from the CA in caSecret", () => {
    const objects = render(planWith({ clusterIP: "fd00:41::5" }));
    expect(new Issuer(findObject(objects, "Issuer", NAME) as never).spec).toEqual({
      ca: { secretName: "tenant-a-auth-ca" },
    });
    expect(new Certificate(findObject(objects, "Certificate", NAME) as never).spec).toMatchObject({
      secretName: `${NAME}-tls`,
      ipAddresses: ["fd00:41::5"],
      issuerRef: { name: NAME, kind: "Issuer" },
    });
    const volumes = new Deployment(findObject(objects, "Deployment", NAME)).spec?.template.spec?.volumes;
    expect(volumes?.find((volume) => volume.name === "tls")?.secret?.secretName).toBe(`${NAME}-tls`);
  });

  it("mounts a serving certificate brought in tlsSecret instead, without cert-manager", () => {
    const objects = render(
      planWith({ caSecret: undefined, certificateAuthority: undefined, tlsSecret: "auth-tls" }),
    );
    expect(objects.filter((object) => object.apiVersion.startsWith("cert-manager.io"))).toEqual([]);
    const volumes = new Deployment(findObject(objects, "Deployment", NAME)).spec?.template.spec?.volumes;
    expect(volumes?.find((volume) => volume.name === "tls")?.secret?.secretName).toBe("auth-tls");
    // A public CA: the API server's own roots, no CA in its configuration.
    const authn = parse(data(objects, "authentication-config-tenant-a")[AUTHENTICATION_CONFIG_KEY] ?? "");
    expect(authn.jwt[0].issuer).toEqual({ url: "https://10.41.0.5:30556", audiences: ["kubectl"] });
  });

  it("starts Dex as the e2e suite does: the binary, serve, the config relative to the working directory", () => {
    const container = dexContainer(render(planWith()));
    expect(container.command).toEqual(["/usr/local/bin/dex", "serve", "config/config.yaml"]);
    expect(container.args).toBeUndefined();
    expect(container.workingDir).toBe("/etc/dex");
    expect(container.volumeMounts).toEqual([
      { name: "config", mountPath: "/etc/dex/config", readOnly: true },
      { name: "tls", mountPath: "/etc/dex/tls", readOnly: true },
    ]);
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(container.resources?.requests).toBeDefined();
  });

  it("writes Dex's configuration with connector secrets and password hashes as variables from their Secrets", () => {
    const objects = render(planWith());
    const config = parse(data(objects, NAME)["config.yaml"] ?? "");
    expect(config).toEqual({
      issuer: "https://10.41.0.5:30556",
      storage: { type: "memory" },
      web: { https: ":5554", tlsCert: "tls/tls.crt", tlsKey: "tls/tls.key", tlsMinVersion: "1.2" },
      telemetry: { http: ":5558" },
      frontend: { issuer: "edge-sip/tenant-a" },
      oauth2: { responseTypes: ["code"], skipApprovalScreen: true, passwordConnector: "local" },
      logger: { level: "info", format: "json" },
      staticClients: [
        {
          id: "kubectl",
          name: "kubectl",
          public: true,
          redirectURIs: ["http://localhost:8000", "http://localhost:18000"],
        },
      ],
      enablePasswordDB: true,
      staticPasswords: [
        {
          email: "break-glass@example.com",
          username: "break-glass@example.com",
          userID: "break-glass@example.com",
          hashFromEnv: "AUTH_USER_0_HASH",
          groups: ["tenant-admins"],
        },
      ],
      connectors: [
        {
          type: "github",
          id: "github",
          name: "GitHub",
          config: {
            clientID: "metalsynth-tenant-a",
            orgs: [{ name: "acme", teams: ["platform"] }],
            redirectURI: "https://10.41.0.5:30556/callback",
            clientSecret: "${AUTH_CONNECTOR_0_clientSecret}",
          },
        },
      ],
    });
    expect(dexContainer(objects).env).toEqual([
      { name: "DEX_EXPAND_ENV", value: "true" },
      {
        name: "AUTH_CONNECTOR_0_clientSecret",
        valueFrom: { secretKeyRef: { name: "tenant-a-github", key: "client-secret" } },
      },
      {
        name: "AUTH_USER_0_HASH",
        valueFrom: { secretKeyRef: { name: "tenant-a-auth-users", key: "break-glass" } },
      },
    ]);
  });

  it("leaves the password grant off without static users, and a connector's own redirectURI alone", () => {
    const objects = render(
      planWith({
        staticUsers: undefined,
        connectors: [
          {
            type: "oidc",
            id: "corp",
            name: "Corp",
            config: { redirectURI: "https://dex.example.com/callback" },
          },
          { type: "ldap", id: "ldap", name: "LDAP", config: { host: "ldap.example.com:636" } },
        ],
      }),
    );
    const config = parse(data(objects, NAME)["config.yaml"] ?? "");
    expect(config.oauth2).toEqual({ responseTypes: ["code"], skipApprovalScreen: true });
    expect(config.enablePasswordDB).toBeUndefined();
    expect(config.connectors.map((connector: { config: unknown }) => connector.config)).toEqual([
      { redirectURI: "https://dex.example.com/callback" },
      { host: "ldap.example.com:636" },
    ]);
  });

  it("gives the tenant API server the issuer, every client as an audience, the CA and the prefixed claims", () => {
    const objects = render(
      planWith({
        clients: [
          { id: "kubectl", redirectURIs: ["http://localhost:8000"] },
          { id: "headlamp", redirectURIs: ["https://headlamp.example.com/oidc-callback"] },
        ],
        claimMappings: { username: { claim: "sub", prefix: "tenant-a:" } },
      }),
    );
    const configMap = data(objects, "authentication-config-tenant-a");
    expect(parse(configMap[AUTHENTICATION_CONFIG_KEY] ?? "")).toEqual({
      apiVersion: "apiserver.config.k8s.io/v1beta1",
      kind: "AuthenticationConfiguration",
      jwt: [
        {
          issuer: {
            url: "https://10.41.0.5:30556",
            audiences: ["kubectl", "headlamp"],
            audienceMatchPolicy: "MatchAny",
            certificateAuthority: TEST_CA,
          },
          claimMappings: {
            username: { claim: "sub", prefix: "tenant-a:" },
            groups: { claim: "groups", prefix: "oidc:" },
          },
        },
      ],
    });
    expect(configMap["ca.crt"]).toBe(TEST_CA);
  });

  it("binds each ClusterRole to its groups once, cluster-wide or in a namespace, for the tenant cluster", () => {
    const objects = render(
      planWith({
        roleBindings: [
          { group: "ops", clusterRole: "cluster-admin" },
          { group: "dev", clusterRole: "edit", namespace: "apps" },
          { group: "admins", clusterRole: "cluster-admin" },
          { group: "admins", clusterRole: "cluster-admin" },
        ],
      }),
    );
    const rbac = parseAllDocuments(data(objects, "tenant-rbac-tenant-a")[TENANT_RBAC_KEY] ?? "").map(
      (document) => document.toJS() as KubeObject & { subjects: { name: string }[] },
    );
    expect(
      rbac.map((object) => `${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`),
    ).toEqual(["ClusterRoleBinding /metalsynth-auth:cluster-admin", "RoleBinding apps/metalsynth-auth:edit"]);
    expect(rbac.map((object) => object.subjects.map((subject) => subject.name))).toEqual([
      ["oidc:admins", "oidc:ops"],
      ["oidc:dev"],
    ]);
    for (const object of rbac) validateKubernetesObject(object);
    expect(render(planWith({ roleBindings: [] })).map((object) => object.metadata.name)).not.toContain(
      "tenant-rbac-tenant-a",
    );
  });

  it("puts no secret into Git, not even the example site's", () => {
    for (const objects of [render(planWith()), render(examplePlan().plan, examplePlan().settings)]) {
      expect(secretFindings(objects)).toEqual([]);
      expect(toYamlStream(objects)).not.toMatch(/hunter|\$2[aby]\$/);
    }
  });
});
