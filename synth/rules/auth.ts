/**
 * The rules of a SIPCluster's `auth` service (docs/contract.md §2, §4.2; issue #39, decision 0058):
 * every value that reaches Dex's configuration, the tenant API server's AuthenticationConfiguration or
 * the tenant's RBAC bindings is parsed here, once, into its checked type (`schema` for a value of the
 * wrong form, `name-invalid` for a Secret or namespace name), and `auth-config` reports an `auth`
 * service the tenant could not log in with. Secrets written into the CR are `secret-inline`
 * (`secrets.ts`, which scans every CR). The normaliser in `synth/site/sip.ts` calls {@link authService}.
 */
import {
  EXPECTED,
  EXPECTED_AUTH,
  issuerUrl,
  parseClaimPrefix,
  parseClientId,
  parseConnectorConfig,
  parseConnectorField,
  parseConnectorId,
  parseDisplayName,
  parseDnsLabel,
  parseEmailAddress,
  parseGroupName,
  parseIpAddress,
  parsePemCertificates,
  parsePort,
  parseRedirectUri,
  parseRoleName,
  parseSecretKey,
  type ClaimPrefix,
  type IpAddress,
} from "../checked.ts";
import type { FieldPath } from "../field-path.ts";
import type { Issue } from "../issue.ts";
import type { Reporter } from "../model/resource.ts";
import type {
  AuthClient,
  AuthConnector,
  AuthRoleBinding,
  AuthServing,
  AuthUser,
  RequestedPort,
  SecretKeyReference,
  SipAuth,
} from "../model/sip.ts";
import type { SipClusterSpec } from "../schema/sipcluster.ts";
import { nodePort, secretReference, serviceImage } from "./sip.ts";

type AuthSpec = NonNullable<NonNullable<SipClusterSpec["spec"]["services"]>["auth"]>[number];

/** The prefix of a token's user and groups when the SIPCluster names none. */
export const DEFAULT_CLAIM_PREFIX = "oidc:" as ClaimPrefix;

/**
 * The client a tenant gets when the SIPCluster names none: kubectl through kubelogin, whose local
 * server listens on port 8000, or 18000 when 8000 is taken (kubelogin's `--listen-address` default).
 */
export const DEFAULT_CLIENT = {
  id: "kubectl",
  redirectURIs: ["http://localhost:8000", "http://localhost:18000"],
} as const;

/** What {@link authService} made of an `auth` entry. */
export interface CheckedAuth {
  /** The service, when everything it renders was valid. */
  readonly auth?: SipAuth;
  readonly ports: readonly RequestedPort[];
  readonly issues: readonly Issue[];
}

/**
 * Checks `spec.services.auth[index]` and returns it normalised. `fallbackAddress` is the
 * control-plane load balancer's `clusterIP`, as written: the hub address the tenant already reaches
 * its API through, which the issuer uses when the service names none.
 */
export function authService(
  spec: AuthSpec,
  path: FieldPath,
  report: Reporter,
  fallbackAddress: string | undefined,
): CheckedAuth {
  const issues: Issue[] = [];
  let valid = true;
  /** A finding that keeps the service from rendering. */
  const refuse = (rule: Parameters<Reporter>[0], where: FieldPath, message: string): undefined => {
    issues.push(report(rule, where, message));
    valid = false;
    return undefined;
  };
  const typed = <T>(value: T | undefined, where: FieldPath, found: string, expected: string): T | undefined =>
    value ?? refuse("schema", where, `${JSON.stringify(found)} is not ${expected}`);
  const secretName = (name: string, where: FieldPath) => {
    const checked = secretReference(name, where, report);
    issues.push(...checked.issues);
    if (checked.name === undefined) valid = false;
    return checked.name;
  };
  const secretKeyRef = (
    ref: { name: string; key: string },
    where: FieldPath,
  ): SecretKeyReference | undefined => {
    const name = secretName(ref.name, [...where, "name"]);
    const key = typed(parseSecretKey(ref.key), [...where, "key"], ref.key, EXPECTED_AUTH.secretKey);
    return name === undefined || key === undefined ? undefined : { name, key };
  };

  const image = serviceImage(spec.image, path, report);
  issues.push(...image.issues);
  if (image.issues.length > 0) valid = false;
  if (spec.nodeInterfaceId !== undefined)
    issues.push(
      report(
        "field-ignored",
        [...path, "nodeInterfaceId"],
        "nodeInterfaceId is ignored: the auth service reaches no host (the tenant's API server and users reach it); remove it",
      ),
    );

  const requested = nodePort(spec.nodePort, [...path, "nodePort"], report);
  issues.push(...requested.issues);
  if (requested.issues.length > 0) valid = false;
  const port = parsePort(spec.nodePort);
  if (spec.nodePort === 0)
    refuse(
      "auth-config",
      [...path, "nodePort"],
      "nodePort 0 lets Kubernetes choose the port, but the issuer URL the tenant's API server and users trust names it: choose one from 30000–32767",
    );

  const address = issuerAddress(spec, path, fallbackAddress, refuse);
  const serving = servingCertificate(spec, path, secretName, typed, refuse);

  const written: readonly { id: string; name?: string; redirectURIs: readonly string[] }[] = spec.clients ?? [
    DEFAULT_CLIENT,
  ];
  const clients = written.map((client, index): AuthClient | undefined => {
    const where: FieldPath = [...path, "clients", index];
    const id = typed(parseClientId(client.id), [...where, "id"], client.id, EXPECTED_AUTH.clientId);
    const shown = client.name ?? client.id;
    const name = typed(parseDisplayName(shown), [...where, "name"], shown, EXPECTED_AUTH.displayName);
    const redirectURIs = client.redirectURIs.map((uri, at) =>
      typed(parseRedirectUri(uri), [...where, "redirectURIs", at], uri, EXPECTED_AUTH.redirectUri),
    );
    if (id === undefined || name === undefined || !redirectURIs.every(present)) return undefined;
    return { id, name, redirectURIs };
  });
  duplicates(
    spec.clients ?? [],
    (client) => client.id,
    (index) => [...path, "clients", index, "id"],
    "client id",
    refuse,
  );
  if (written.length === 0)
    refuse(
      "auth-config",
      [...path, "clients"],
      "clients is empty: the tenant's API server takes the client ids as its audiences and needs one (leave clients out for kubectl's)",
    );

  const connectors = (spec.connectors ?? []).map((connector, index): AuthConnector | undefined => {
    const where: FieldPath = [...path, "connectors", index];
    const id = typed(
      parseConnectorId(connector.id),
      [...where, "id"],
      connector.id,
      EXPECTED_AUTH.connectorId,
    );
    const name = typed(
      parseDisplayName(connector.name),
      [...where, "name"],
      connector.name,
      EXPECTED_AUTH.displayName,
    );
    const parsed = parseConnectorConfig(connector.config ?? {});
    if ("problem" in parsed) refuse("schema", [...where, "config"], `the connector ${parsed.problem}`);
    const secrets = Object.entries(connector.secretKeyRefs ?? {}).map(([field, ref]) => {
      const at: FieldPath = [...where, "secretKeyRefs", field];
      const checked = typed(parseConnectorField(field), at, field, EXPECTED_AUTH.connectorField);
      if (connector.config !== undefined && field in connector.config)
        refuse(
          "auth-config",
          at,
          `config.${field} is written in the CR and taken from a Secret too: keep only the Secret reference`,
        );
      const secret = secretKeyRef(ref, at);
      return checked === undefined || secret === undefined ? undefined : { field: checked, secret };
    });
    if (id === undefined || name === undefined || !("config" in parsed) || !secrets.every(present))
      return undefined;
    return { type: connector.type, id, name, config: parsed.config, secrets };
  });
  duplicates(
    spec.connectors ?? [],
    (connector) => connector.id,
    (index) => [...path, "connectors", index, "id"],
    "connector id",
    refuse,
  );

  const staticUsers = (spec.staticUsers ?? []).map((user, index): AuthUser | undefined => {
    const where: FieldPath = [...path, "staticUsers", index];
    const email = typed(parseEmailAddress(user.email), [...where, "email"], user.email, EXPECTED_AUTH.email);
    const shown = user.username ?? user.email;
    const username = typed(parseDisplayName(shown), [...where, "username"], shown, EXPECTED_AUTH.displayName);
    const id = user.userID ?? user.email;
    const userID = typed(parseDisplayName(id), [...where, "userID"], id, EXPECTED_AUTH.displayName);
    const groups = (user.groups ?? []).map((group, at) =>
      typed(parseGroupName(group), [...where, "groups", at], group, EXPECTED_AUTH.groupName),
    );
    const passwordHash = secretKeyRef(user.passwordHash, [...where, "passwordHash"]);
    if (
      email === undefined ||
      username === undefined ||
      userID === undefined ||
      passwordHash === undefined ||
      !groups.every(present)
    )
      return undefined;
    return { email, username, userID, groups, passwordHash };
  });
  duplicates(
    spec.staticUsers ?? [],
    (user) => user.email,
    (index) => [...path, "staticUsers", index, "email"],
    "static user email",
    refuse,
  );
  if ((spec.connectors ?? []).length === 0 && (spec.staticUsers ?? []).length === 0)
    refuse(
      "auth-config",
      path,
      "no connector and no static user: nobody could log in, and Dex refuses to start without a connector",
    );

  const prefix = (text: string | undefined, where: FieldPath): ClaimPrefix | undefined =>
    text === undefined
      ? DEFAULT_CLAIM_PREFIX
      : typed(parseClaimPrefix(text), where, text, EXPECTED_AUTH.claimPrefix);
  const mappings: FieldPath = [...path, "claimMappings"];
  const usernamePrefix = prefix(spec.claimMappings?.username?.prefix, [...mappings, "username", "prefix"]);
  const groupsPrefix = prefix(spec.claimMappings?.groups?.prefix, [...mappings, "groups", "prefix"]);

  const roleBindings = (spec.roleBindings ?? []).map((binding, index): AuthRoleBinding | undefined => {
    const where: FieldPath = [...path, "roleBindings", index];
    const group = typed(
      parseGroupName(binding.group),
      [...where, "group"],
      binding.group,
      EXPECTED_AUTH.groupName,
    );
    const clusterRole = typed(
      parseRoleName(binding.clusterRole),
      [...where, "clusterRole"],
      binding.clusterRole,
      EXPECTED_AUTH.roleName,
    );
    const namespace =
      binding.namespace === undefined
        ? undefined
        : (parseDnsLabel(binding.namespace) ??
          refuse(
            "name-invalid",
            [...where, "namespace"],
            `${JSON.stringify(binding.namespace)} is not a namespace name: expected ${EXPECTED.dnsLabel}`,
          ));
    if (group === undefined || clusterRole === undefined) return undefined;
    if (binding.namespace !== undefined && namespace === undefined) return undefined;
    return { group, clusterRole, ...(namespace === undefined ? {} : { namespace }) };
  });

  const ports = requested.ports;
  if (
    !valid ||
    port === undefined ||
    address === undefined ||
    serving === undefined ||
    usernamePrefix === undefined ||
    groupsPrefix === undefined ||
    !clients.every(present) ||
    !connectors.every(present) ||
    !staticUsers.every(present) ||
    !roleBindings.every(present)
  )
    return { ports, issues };
  return {
    ports,
    issues,
    auth: {
      ...(image.image === undefined ? {} : { image: image.image }),
      address,
      nodePort: port,
      issuer: issuerUrl(address, port),
      serving,
      clients,
      connectors,
      staticUsers,
      claims: {
        username: { claim: spec.claimMappings?.username?.claim ?? "email", prefix: usernamePrefix },
        groups: { prefix: groupsPrefix },
      },
      roleBindings,
    },
  };
}

/**
 * The issuer's host: the service's `clusterIP` (SIP: "IP of the base cluster VIP"), else the
 * control-plane load balancer's, where the tenant already reaches the hub.
 */
function issuerAddress(
  spec: AuthSpec,
  path: FieldPath,
  fallbackAddress: string | undefined,
  refuse: (rule: "schema" | "auth-config", where: FieldPath, message: string) => undefined,
): IpAddress | undefined {
  if (spec.clusterIP !== undefined)
    return (
      parseIpAddress(spec.clusterIP) ??
      refuse(
        "schema",
        [...path, "clusterIP"],
        `${JSON.stringify(spec.clusterIP)} is not ${EXPECTED.ipAddress}`,
      )
    );
  const fallback = fallbackAddress === undefined ? undefined : parseIpAddress(fallbackAddress);
  return (
    fallback ??
    refuse(
      "auth-config",
      path,
      "no address for the issuer URL: set clusterIP, the address the tenant cluster and its users reach the hub's NodePorts at (or set it on the control-plane load balancer)",
    )
  );
}

/** `caSecret` with `certificateAuthority`, or `tlsSecret` (and the CA, if not a public one). */
function servingCertificate(
  spec: AuthSpec,
  path: FieldPath,
  secretName: (name: string, where: FieldPath) => ReturnType<typeof secretReference>["name"],
  typed: <T>(value: T | undefined, where: FieldPath, found: string, expected: string) => T | undefined,
  refuse: (rule: "auth-config", where: FieldPath, message: string) => undefined,
): AuthServing | undefined {
  const certificateAuthority =
    spec.certificateAuthority === undefined
      ? undefined
      : typed(
          parsePemCertificates(spec.certificateAuthority),
          [...path, "certificateAuthority"],
          "the certificateAuthority",
          EXPECTED_AUTH.certificates,
        );
  if (spec.caSecret !== undefined && spec.tlsSecret !== undefined)
    return refuse(
      "auth-config",
      [...path, "tlsSecret"],
      "caSecret and tlsSecret both name where the serving certificate comes from: keep one",
    );
  if (spec.caSecret !== undefined) {
    const caSecret = secretName(spec.caSecret, [...path, "caSecret"]);
    if (spec.certificateAuthority === undefined)
      return refuse(
        "auth-config",
        path,
        "caSecret needs certificateAuthority: the CA's certificate (public, PEM), which the tenant's API server must trust before the CA issues anything",
      );
    return caSecret === undefined || certificateAuthority === undefined
      ? undefined
      : { caSecret, certificateAuthority };
  }
  if (spec.tlsSecret !== undefined) {
    const tlsSecret = secretName(spec.tlsSecret, [...path, "tlsSecret"]);
    if (
      tlsSecret === undefined ||
      (spec.certificateAuthority !== undefined && certificateAuthority === undefined)
    )
      return undefined;
    return { tlsSecret, ...(certificateAuthority === undefined ? {} : { certificateAuthority }) };
  }
  return refuse(
    "auth-config",
    path,
    "no serving certificate: set caSecret (a CA cert-manager signs it with, and certificateAuthority) or tlsSecret (the certificate itself)",
  );
}

/** `auth-config` for each entry whose key an earlier entry has already. */
function duplicates<T>(
  items: readonly T[],
  key: (item: T) => string,
  where: (index: number) => FieldPath,
  what: string,
  refuse: (rule: "auth-config", where: FieldPath, message: string) => undefined,
): void {
  const first = new Map<string, number>();
  items.forEach((item, index) => {
    const seen = first.get(key(item));
    if (seen === undefined) first.set(key(item), index);
    else
      refuse("auth-config", where(index), `${what} ${JSON.stringify(key(item))} is already entry ${seen}'s`);
  });
}

function present<T>(value: T | undefined): value is T {
  return value !== undefined;
}
