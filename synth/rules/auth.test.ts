import { describe, expect, it } from "vitest";
import { authService, TEST_CA } from "../../test/support/auth.ts";
import { parseDocuments } from "../codec/read-documents.ts";
import { toYaml } from "../codec/yaml-output.ts";
import type { Issue } from "../issue.ts";
import type { SipAuth } from "../model/sip.ts";
import { siteModel } from "../site/model.ts";
import { readResources } from "../site/resources.ts";

/** A SIPCluster `edge-sip/tenant-a` with the given `spec.services`, read as synth reads it. */
function evaluate(services: Record<string, unknown>): { auth?: SipAuth; issues: Issue[] } {
  const yaml = toYaml({
    apiVersion: "airship.airshipit.org/v1",
    kind: "SIPCluster",
    metadata: { name: "tenant-a", namespace: "edge-sip" },
    spec: { nodes: {}, services },
  });
  const read = readResources(parseDocuments("specs/test.yaml", yaml).documents);
  const { model, issues } = siteModel(read.resources, read.invalid);
  return { auth: model.sips[0]?.services.auth?.[0], issues: [...read.issues, ...issues] };
}

/** `rule path` of each finding. */
function findings(services: Record<string, unknown>): string[] {
  return evaluate(services).issues.map((found) => `${found.rule} ${found.path}`);
}

const AUTH = "spec.services.auth[0]";

describe("auth: valid services pass every rule", () => {
  it.each([
    ["every kind of field", { auth: [authService()] }],
    [
      "a serving certificate brought in a Secret, from a public CA",
      {
        auth: [authService({ caSecret: undefined, certificateAuthority: undefined, tlsSecret: "auth-tls" })],
      },
    ],
    [
      "the issuer's address from the control-plane load balancer",
      {
        loadBalancerControlPlane: [{ nodeInterfaceId: "oam-ipv4", nodePort: 30443, clusterIP: "10.41.0.5" }],
        auth: [authService({ clusterIP: undefined })],
      },
    ],
    ["an IPv6 address", { auth: [authService({ clusterIP: "fd00:41::5" })] }],
    [
      "clients, claim mappings and an LDAP connector of their own",
      {
        auth: [
          authService({
            clients: [
              { id: "kubectl", redirectURIs: ["http://localhost:8000", "http://127.0.0.1:18000/callback"] },
              {
                id: "headlamp",
                name: "Headlamp",
                redirectURIs: ["https://headlamp.example.com/oidc-callback"],
              },
            ],
            claimMappings: {
              username: { claim: "sub", prefix: "tenant-a:" },
              groups: { prefix: "tenant-a:" },
            },
            connectors: [
              {
                type: "ldap",
                id: "corp-ldap",
                name: "Corporate directory",
                config: {
                  host: "ldap.example.com:636",
                  bindDN: "cn=dex,ou=services,dc=example,dc=com",
                  userSearch: { baseDN: "ou=people,dc=example,dc=com", username: "uid", idAttr: "uid" },
                },
                secretKeyRefs: { bindPW: { name: "corp-ldap", key: "password" } },
              },
            ],
          }),
        ],
      },
    ],
  ])("%s", (_, services) => {
    expect(findings(services)).toEqual([]);
  });

  it("derives the issuer, the default client and the claim mappings", () => {
    const { auth } = evaluate({ auth: [authService({ clusterIP: "fd00:41::5" })] });
    expect(auth).toMatchObject({
      address: "fd00:41::5",
      issuer: "https://[fd00:41::5]:30556",
      serving: { caSecret: "tenant-a-auth-ca", certificateAuthority: TEST_CA },
      clients: [
        { id: "kubectl", name: "kubectl", redirectURIs: ["http://localhost:8000", "http://localhost:18000"] },
      ],
      claims: { username: { claim: "email", prefix: "oidc:" }, groups: { prefix: "oidc:" } },
      staticUsers: [
        {
          email: "break-glass@example.com",
          username: "break-glass@example.com",
          userID: "break-glass@example.com",
          groups: ["tenant-admins"],
          passwordHash: { name: "tenant-a-auth-users", key: "break-glass" },
        },
      ],
    });
    expect(auth?.connectors[0]?.secrets).toEqual([
      { field: "clientSecret", secret: { name: "tenant-a-github", key: "client-secret" } },
    ]);
  });
});

describe("auth: each rule reports its id at the field path", () => {
  const github = (config: Record<string, unknown>, secretKeyRefs?: Record<string, unknown>) => [
    { type: "github", id: "github", name: "GitHub", config, ...(secretKeyRefs && { secretKeyRefs }) },
  ];
  it.each([
    ["no address for the issuer", authService({ clusterIP: undefined }), [`auth-config ${AUTH}`]],
    [
      "an address that is not one",
      authService({ clusterIP: "vip.example.com" }),
      [`schema ${AUTH}.clusterIP`],
    ],
    ["an automatic nodePort", authService({ nodePort: 0 }), [`auth-config ${AUTH}.nodePort`]],
    ["a nodePort outside the range", authService({ nodePort: 8443 }), [`node-port ${AUTH}.nodePort`]],
    ["no client at all", authService({ clients: [] }), [`auth-config ${AUTH}.clients`]],
    [
      "no way to log in: neither a connector nor a static user",
      authService({ connectors: undefined, staticUsers: undefined }),
      [`auth-config ${AUTH}`],
    ],
    [
      "caSecret without the CA's certificate",
      authService({ certificateAuthority: undefined }),
      [`auth-config ${AUTH}`],
    ],
    [
      "no serving certificate at all",
      authService({ caSecret: undefined, certificateAuthority: undefined }),
      [`auth-config ${AUTH}`],
    ],
    [
      "two sources of the serving certificate",
      authService({ tlsSecret: "tls" }),
      [`auth-config ${AUTH}.tlsSecret`],
    ],
    [
      "a CA that is no certificate",
      authService({ certificateAuthority: "not a certificate" }),
      [`schema ${AUTH}.certificateAuthority`],
    ],
    [
      "a CA with text around its blocks",
      authService({ certificateAuthority: `${TEST_CA}trailing words\n` }),
      [`schema ${AUTH}.certificateAuthority`],
    ],
    [
      "a truncated certificate",
      authService({ certificateAuthority: TEST_CA.replace("MDUo=", "MD==") }),
      [`schema ${AUTH}.certificateAuthority`],
    ],
    [
      "a caSecret that names no Secret",
      authService({ caSecret: "Tenant CA" }),
      [`name-invalid ${AUTH}.caSecret`],
    ],
    [
      "a client id with a space",
      authService({ clients: [{ id: "kube ctl", redirectURIs: [] }] }),
      [`schema ${AUTH}.clients[0].id`],
    ],
    [
      "a plain-http redirect to another host",
      authService({ clients: [{ id: "kubectl", redirectURIs: ["http://evil.example.com:8000"] }] }),
      [`schema ${AUTH}.clients[0].redirectURIs[0]`],
    ],
    [
      "a redirect with a line break",
      authService({ clients: [{ id: "kubectl", redirectURIs: ["https://a.example.com/\nx"] }] }),
      [`schema ${AUTH}.clients[0].redirectURIs[0]`],
    ],
    [
      "a client twice",
      authService({
        clients: [
          { id: "kubectl", redirectURIs: [] },
          { id: "kubectl", redirectURIs: [] },
        ],
      }),
      [`auth-config ${AUTH}.clients[1].id`],
    ],
    [
      "a connector called local",
      authService({ connectors: [{ type: "oidc", id: "local", name: "Local" }] }),
      [`schema ${AUTH}.connectors[0].id`],
    ],
    [
      "a connector twice",
      authService({ connectors: [...github({}), ...github({})] }),
      [`auth-config ${AUTH}.connectors[1].id`],
    ],
    [
      "a connector's client secret written in the CR",
      authService({ connectors: github({ clientID: "a", clientSecret: "hunter2hunter2" }) }),
      [`secret-inline ${AUTH}.connectors[0].config.clientSecret`],
    ],
    [
      "an LDAP bind password written in the CR",
      authService({
        connectors: [{ type: "ldap", id: "ldap", name: "LDAP", config: { bindPW: "hunter2" } }],
      }),
      [`secret-inline ${AUTH}.connectors[0].config.bindPW`],
    ],
    [
      "a connector value Dex would expand",
      authService({ connectors: github({ clientID: "$HOME" }) }),
      [`schema ${AUTH}.connectors[0].config`],
    ],
    [
      "a connector field written and referenced",
      authService({
        connectors: github({ clientID: "a" }, { clientID: { name: "github", key: "id" } }),
      }),
      [`auth-config ${AUTH}.connectors[0].secretKeyRefs.clientID`],
    ],
    [
      "a secret reference to a key that can't be one",
      authService({ connectors: github({}, { clientSecret: { name: "github", key: "client secret" } }) }),
      [`schema ${AUTH}.connectors[0].secretKeyRefs.clientSecret.key`],
    ],
    [
      "a static user's email in capitals",
      authService({ staticUsers: [{ email: "Alice@Example.com", passwordHash: { name: "u", key: "a" } }] }),
      [`schema ${AUTH}.staticUsers[0].email`],
    ],
    [
      "a static user twice",
      authService({
        staticUsers: [
          { email: "a@example.com", passwordHash: { name: "u", key: "a" } },
          { email: "a@example.com", passwordHash: { name: "u", key: "b" } },
        ],
      }),
      [`auth-config ${AUTH}.staticUsers[1].email`],
    ],
    [
      "a group with a line break",
      authService({ roleBindings: [{ group: "admins\nsystem:masters", clusterRole: "view" }] }),
      [`schema ${AUTH}.roleBindings[0].group`],
    ],
    [
      "a prefix that names system users",
      authService({ claimMappings: { groups: { prefix: "system:" } } }),
      [`schema ${AUTH}.claimMappings.groups.prefix`],
    ],
    [
      "an empty prefix",
      authService({ claimMappings: { username: { prefix: "" } } }),
      [`schema ${AUTH}.claimMappings.username.prefix`],
    ],
    [
      "a ClusterRole name that is none",
      authService({ roleBindings: [{ group: "a", clusterRole: "Cluster Admin" }] }),
      [`schema ${AUTH}.roleBindings[0].clusterRole`],
    ],
    [
      "a binding in a namespace that can't be one",
      authService({ roleBindings: [{ group: "a", clusterRole: "view", namespace: "Apps" }] }),
      [`name-invalid ${AUTH}.roleBindings[0].namespace`],
    ],
    [
      "a bcrypt hash written anywhere",
      authService({
        roleBindings: [
          { group: "$2a$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W", clusterRole: "view" },
        ],
      }),
      [`secret-inline ${AUTH}.roleBindings[0].group`],
    ],
  ])("%s", (_, auth, expected) => {
    expect(findings({ auth: [auth] })).toEqual(expected);
  });

  it.each([
    ["two providers for one tenant", { auth: [authService(), authService()] }, [`schema spec.services.auth`]],
    [
      "a connector type Dex lacks",
      { auth: [authService({ connectors: [{ type: "mockCallback", id: "m", name: "M" }] })] },
      [`schema ${AUTH}.connectors[0].type`],
    ],
  ])("the schema refuses %s", (_, services, expected) => {
    expect(findings(services)).toEqual(expected);
  });

  it("warns that nodeInterfaceId is ignored, and renders the service", () => {
    const { auth, issues } = evaluate({ auth: [authService({ nodeInterfaceId: "oam-ipv4" })] });
    expect(issues.map((found) => `${found.severity} ${found.rule} ${found.path}`)).toEqual([
      `warning field-ignored ${AUTH}.nodeInterfaceId`,
    ]);
    expect(auth).toBeDefined();
  });

  it("never echoes a secret it finds", () => {
    const { issues } = evaluate({
      auth: [authService({ connectors: github({ clientSecret: "hunter2hunter2" }) })],
    });
    expect(JSON.stringify(issues)).not.toContain("hunter2");
  });
});
