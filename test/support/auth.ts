/**
 * Fixtures for the tests of a SIPCluster's `auth` service (issue #39): a CA certificate and an
 * `auth` entry that passes every rule.
 */

/** A self-signed P-256 CA certificate of a key that exists nowhere (public: a certificate only). */
export const TEST_CA = `-----BEGIN CERTIFICATE-----
MIIBnzCCAUWgAwIBAgIUGec8XuzgEIUjrKw2qJEgkNxDI8MwCgYIKoZIzj0EAwIw
JDEiMCAGA1UEAwwZbWV0YWxzeW50aCB0ZXN0IHRlbmFudCBDQTAgFw0yNjExMjkw
NTI0MTRaGA8yMTI2MTEwNTA1MjQxNFowJDEiMCAGA1UEAwwZbWV0YWxzeW50aCB0
ZXN0IHRlbmFudCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPaMHxxE+Ubn
YXAPm894MS4mUAThuBafPYDhwNRi44e7q96ei/DflCGK2E6M8CRZQ1ah1GrqBA0F
CYZumtJYysyjUzBRMB0GA1UdDgQWBBT8JCHQH+f1BoQfp1Vykf4+C5/44zAfBgNV
HSMEGDAWgBT8JCHQH+f1BoQfp1Vykf4+C5/44zAPBgNVHRMBAf8EBTADAQH/MAoG
CCqGSM49BAMCA0gAMEUCIHobfWKRW8kwqGIDpUCuCHsqm0p7uARJxHy9Rk9vA58m
AiEAjLDMMkzT6gBmnS2IxiNbWI6EsCvCOE45uO5wQhZMDUo=
-----END CERTIFICATE-----
`;

/** An `auth` entry with every kind of field, valid. */
export function authService(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterIP: "10.41.0.5",
    nodePort: 30556,
    caSecret: "tenant-a-auth-ca",
    certificateAuthority: TEST_CA,
    connectors: [
      {
        type: "github",
        id: "github",
        name: "GitHub",
        config: { clientID: "metalsynth-tenant-a", orgs: [{ name: "acme", teams: ["platform"] }] },
        secretKeyRefs: { clientSecret: { name: "tenant-a-github", key: "client-secret" } },
      },
    ],
    staticUsers: [
      {
        email: "break-glass@example.com",
        groups: ["tenant-admins"],
        passwordHash: { name: "tenant-a-auth-users", key: "break-glass" },
      },
    ],
    roleBindings: [
      { group: "tenant-admins", clusterRole: "cluster-admin" },
      { group: "acme:platform", clusterRole: "edit", namespace: "apps" },
    ],
    ...overrides,
  };
}
