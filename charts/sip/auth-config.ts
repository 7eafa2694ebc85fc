/**
 * What a SIPCluster's `auth` service writes besides its Kubernetes objects (docs/contract.md §4.2,
 * decision 0058): Dex's configuration with the environment it expects, the tenant API server's
 * `AuthenticationConfiguration`, and the tenant cluster's RBAC bindings for the named groups. Each is
 * a plain object built only from checked values (`synth/checked.ts`), written as YAML by the one
 * writer (`toYaml`), whose output YAML 1.1 readers read alike: Dex reads its file with go-yaml.
 */
import type { ConnectorField, DnsLabel } from "../../synth/checked.ts";
import { compareText } from "../../synth/issue.ts";
import type { AuthConnector, SecretKeyReference, SipAuth } from "../../synth/model/sip.ts";
import { clusterLabels } from "../metadata.ts";

/** Where the pod's files are, relative to its working directory (`DEX_WORKING_DIR`). */
export const DEX_FILES = {
  /** The ConfigMap's directory; Dex reads `config.yaml` in it. */
  configDir: "config",
  config: "config/config.yaml",
  /** The serving certificate's Secret: `tls.crt`, `tls.key`. */
  tlsDir: "tls",
  tlsCert: "tls/tls.crt",
  tlsKey: "tls/tls.key",
} as const;

/**
 * The pod's working directory. Dex resolves the relative paths of its config against it, so the
 * same arguments and file start Dex in the pod and, in the e2e suite, in a directory laid out the
 * same way (test/e2e/auth.test.ts).
 */
export const DEX_WORKING_DIR = "/etc/dex";
/** Where Dex listens: HTTPS (Dex's default port for it) and telemetry (metrics, health). */
export const DEX_PORTS = { https: 5554, telemetry: 5558 } as const;
/** The Dex release the site default image carries and the e2e suite builds (test/e2e/go-dex). */
export const DEX_VERSION = "v2.45.1";

/**
 * Connector types that send the browser to an upstream provider and back to `<issuer>/callback`;
 * the rest (LDAP, Keystone, Crowd, an authenticating proxy) take a password or a header instead.
 */
const CALLBACK_CONNECTORS: ReadonlySet<AuthConnector["type"]> = new Set([
  "bitbucket-cloud",
  "gitea",
  "github",
  "gitlab",
  "google",
  "linkedin",
  "microsoft",
  "oauth",
  "oidc",
  "openshift",
  "saml",
]);

/** An environment variable of the Dex container: a literal, or a Secret's key by reference. */
export type DexEnv =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly secret: SecretKeyReference };

/** Dex's configuration file as an object, and the environment it reads secrets from. */
export interface DexConfig {
  readonly config: Record<string, unknown>;
  readonly env: readonly DexEnv[];
}

/** The variable holding connector `index`'s `field` (`$` and the name are all Dex expands). */
function connectorVariable(index: number, field: ConnectorField): string {
  return `AUTH_CONNECTOR_${index}_${field}`;
}

/** The variable holding static user `index`'s bcrypt hash (Dex's `hashFromEnv`). */
function userVariable(index: number): string {
  return `AUTH_USER_${index}_HASH`;
}

/**
 * Dex's configuration for `auth` of cluster `title` (shown on the login page): memory storage, the
 * HTTPS listener with the serving certificate, telemetry for the probes, the public clients, the
 * static users with their hashes from the environment (and the password grant, which they are for),
 * and the connectors with `redirectURI` defaulting to `<issuer>/callback` and their secrets as
 * `${VARIABLE}`s Dex expands (`DEX_EXPAND_ENV`, on by default and set explicitly).
 */
export function dexConfig(auth: SipAuth, title: string): DexConfig {
  const env: DexEnv[] = [{ name: "DEX_EXPAND_ENV", value: "true" }];
  const connectors = auth.connectors.map((connector, index) => {
    const config: Record<string, unknown> = { ...connector.config };
    if (CALLBACK_CONNECTORS.has(connector.type) && config["redirectURI"] === undefined)
      config["redirectURI"] = `${auth.issuer}/callback`;
    for (const { field, secret } of connector.secrets) {
      const name = connectorVariable(index, field);
      env.push({ name, secret });
      config[field] = `\${${name}}`;
    }
    return { type: connector.type, id: connector.id, name: connector.name, config };
  });
  const passwords = auth.staticUsers.map((user, index) => {
    env.push({ name: userVariable(index), secret: user.passwordHash });
    return {
      email: user.email,
      username: user.username,
      userID: user.userID,
      hashFromEnv: userVariable(index),
      ...(user.groups.length === 0 ? {} : { groups: [...user.groups] }),
    };
  });
  const config: Record<string, unknown> = {
    issuer: auth.issuer,
    // One replica; a restart signs everyone in again (decision 0058).
    storage: { type: "memory" },
    web: {
      https: `:${DEX_PORTS.https}`,
      tlsCert: DEX_FILES.tlsCert,
      tlsKey: DEX_FILES.tlsKey,
      tlsMinVersion: "1.2",
    },
    telemetry: { http: `:${DEX_PORTS.telemetry}` },
    frontend: { issuer: title },
    oauth2: {
      responseTypes: ["code"],
      skipApprovalScreen: true,
      ...(passwords.length === 0 ? {} : { passwordConnector: "local" }),
    },
    logger: { level: "info", format: "json" },
    staticClients: auth.clients.map((client) => ({
      id: client.id,
      name: client.name,
      public: true,
      redirectURIs: [...client.redirectURIs],
    })),
    ...(passwords.length === 0 ? {} : { enablePasswordDB: true, staticPasswords: passwords }),
    ...(connectors.length === 0 ? {} : { connectors }),
  };
  return { config, env };
}

/**
 * The tenant kube-apiserver's `--authentication-config` (structured authentication, Kubernetes ≥ 1.30:
 * `apiserver.config.k8s.io/v1beta1`, which 1.30 to 1.34 all read): one JWT authenticator for the
 * provider's issuer, its clients as audiences, the CA, and the claim mappings with their prefixes.
 */
export function authenticationConfiguration(auth: SipAuth): Record<string, unknown> {
  const audiences = auth.clients.map((client) => client.id);
  return {
    apiVersion: "apiserver.config.k8s.io/v1beta1",
    kind: "AuthenticationConfiguration",
    jwt: [
      {
        issuer: {
          url: auth.issuer,
          audiences,
          // The API server requires it for more than one audience, and refuses it otherwise.
          ...(audiences.length > 1 ? { audienceMatchPolicy: "MatchAny" } : {}),
          ...(auth.serving.certificateAuthority === undefined
            ? {}
            : { certificateAuthority: auth.serving.certificateAuthority }),
        },
        claimMappings: {
          username: { claim: auth.claims.username.claim, prefix: auth.claims.username.prefix },
          groups: { claim: "groups", prefix: auth.claims.groups.prefix },
        },
      },
    ],
  };
}

/**
 * The tenant cluster's RBAC for `auth`'s role bindings: per ClusterRole (and namespace), one binding
 * `metalsynth-auth:<role>` of every group bound to it, each as the API server names it (prefixed).
 * Cluster-wide ones first, then by namespace; groups sorted. Meant for the tenant cluster (a Cluster
 * API ClusterResourceSet applies such a ConfigMap), never the hub: the hub would grant the tenant's
 * groups its own roles.
 */
export function tenantRbac(auth: SipAuth, cluster: DnsLabel): Record<string, unknown>[] {
  const bindings = new Map<string, { namespace?: DnsLabel; role: string; groups: Set<string> }>();
  for (const binding of auth.roleBindings) {
    const key = `${binding.namespace ?? ""}\n${binding.clusterRole}`;
    const entry = bindings.get(key) ?? {
      ...(binding.namespace === undefined ? {} : { namespace: binding.namespace }),
      role: binding.clusterRole,
      groups: new Set<string>(),
    };
    entry.groups.add(`${auth.claims.groups.prefix}${binding.group}`);
    bindings.set(key, entry);
  }
  return [...bindings]
    .sort(([a], [b]) => compareText(a, b))
    .map(([, { namespace, role, groups }]) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: namespace === undefined ? "ClusterRoleBinding" : "RoleBinding",
      metadata: {
        name: `metalsynth-auth:${role}`,
        ...(namespace === undefined ? {} : { namespace }),
        labels: clusterLabels(cluster),
      },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [...groups]
        .sort(compareText)
        .map((name) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name })),
    }));
}
