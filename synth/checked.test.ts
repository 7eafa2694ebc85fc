import { describe, expect, it } from "vitest";
import {
  authorizedKeyProblem,
  parseAuthorizedKey,
  parseDnsLabel,
  parseDnsSubdomain,
  parseImageReference,
  parseInterfaceId,
  parseIpAddress,
  parseLabelValue,
  parseAnnotations,
  parseLabels,
  parsePort,
  qualifiedNameProblem,
  issuerUrl,
  parseClaimPrefix,
  parseClientId,
  parseConnectorConfig,
  parseConnectorField,
  parseConnectorId,
  parseDisplayName,
  parseEmailAddress,
  parseGroupName,
  parsePemCertificates,
  parseRedirectUri,
  parseRoleName,
  parseSecretKey,
} from "./checked.ts";
import { TEST_CA } from "../test/support/auth.ts";

const ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@site";

describe("the door's parsers", () => {
  it.each([
    [
      parseDnsLabel,
      ["edge-a", "a", "0", "a".repeat(63)],
      ["", "Edge_A", "-a", "a-", "a.b", "../x", "a".repeat(64), "a\nb"],
    ],
    [
      parseDnsSubdomain,
      ["r01-node-04", "a.b-c.d", "a".repeat(253)],
      [
        "",
        "a..b",
        ".a",
        "A",
        "a_b",
        "a".repeat(254),
        "a-node\n      server evil 6.6.6.6:6443",
        "../../../etc",
      ],
    ],
    [
      parseIpAddress,
      ["10.41.0.11", "0.0.0.0", "fd00::11", "::", "::1", "2001:db8:0:0:0:0:0:1", "FD00::A"],
      [
        "",
        "10.41.0.11:6443",
        "10.41.0.11 ",
        "10.41.0.256",
        "10.41.0.11/24",
        "fe80::1%eth0",
        "1::2::3",
        "1:2:3:4:5:6:7:8:9",
        ":1::",
        "10.41.0.11:6443 check\n    server evil 6.6.6.6",
      ],
    ],
    [parseLabelValue, ["", "tenant-a", "A_b.c", "a".repeat(63)], ["-a", "a-", "a b", "a".repeat(64), "a/b"]],
    [
      parseImageReference,
      ["haproxy:2.3.2", "quay.io/airshipit/jump-host:latest", "localhost:5000/a/b@sha256:" + "0".repeat(64)],
      ["", "haproxy:2.3.2 --evil", "Haproxy", "a\nb", "a:b:c"],
    ],
    [
      parseInterfaceId,
      ["oam-ipv4", "enp1s0", "bond0.100", "net_1:a@b"],
      ["", "-a", "oam ipv4", "oam-ipv4\nserver evil 6.6.6.6", "a".repeat(254)],
    ],
    [
      parseAuthorizedKey,
      [ED25519, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"],
      [
        "",
        `command="sh -c id" ${ED25519}`,
        `${ED25519}\ncommand="sh -c id" ${ED25519}`,
        `${ED25519}\r x`,
        "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
      ],
    ],
  ] as const)("%o accepts exactly its kind", (parse, good, bad) => {
    for (const text of good) expect(parse(text), text).toBe(text);
    for (const text of bad) expect(parse(text), text).toBeUndefined();
  });

  it("trims an authorized key, and says why a second line is refused (issue #21 case 3)", () => {
    expect(parseAuthorizedKey(`  ${ED25519}\n`)).toBe(ED25519);
    expect(authorizedKeyProblem(`${ED25519}\ncommand="sh -c id" ${ED25519}`)).toMatch(/exactly one line/);
  });

  it.each([
    ["a", ""],
    ["app.kubernetes.io/name", ""],
    ["example.com/My_Name.v2", ""],
    [`${"a".repeat(253)}/${"b".repeat(63)}`, ""],
    ["a/b/c", "more than one '/'"],
    ["/x", 'prefix "" is not a DNS-1123 subdomain'],
    ["Example.com/x", 'prefix "Example.com" is not a DNS-1123 subdomain'],
    [`${"a".repeat(254)}/x`, "is not a DNS-1123 subdomain"],
    ["example.com/", "name part is empty"],
    ["", "name part is empty"],
    ["k".repeat(64), "64 characters long"],
    ["bad key", 'name part "bad key" has a character other than'],
    ["-a", 'name part "-a" has a character other than'],
  ])("says whether %j is a qualified name (label and annotation keys)", (text, problem) => {
    if (problem === "") expect(qualifiedNameProblem(text)).toBeUndefined();
    else expect(qualifiedNameProblem(text)).toContain(problem);
  });

  it("checks labels and annotations whole: keys, values, the annotations' size", () => {
    expect(parseLabels({ "app.kubernetes.io/name": "A-b_c.9", empty: "" })).toEqual({
      "app.kubernetes.io/name": "A-b_c.9",
      empty: "",
    });
    expect(parseLabels({ team: "team a" })).toBeUndefined();
    expect(parseLabels({ "bad key": "x" })).toBeUndefined();
    expect(parseAnnotations({ "Example.COM/Note": "any text: yes" })).toEqual({
      "Example.COM/Note": "any text: yes",
    });
    expect(parseAnnotations({ "my note": "x" })).toBeUndefined();
    expect(parseAnnotations({ a: "é".repeat(128 * 1024) })).toBeUndefined();
  });

  it("accepts ports 1-65535 only", () => {
    expect([0, 1, 22, 65535, 65536, 1.5, -1].map(parsePort)).toEqual([
      undefined,
      1,
      22,
      65535,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe("the door's parsers of tenant identity (issue #39)", () => {
  it.each([
    [
      parseClientId,
      ["kubectl", "a", "Headlamp.v2_x-1", "a".repeat(63)],
      ["", "-a", "kube ctl", "a".repeat(64), "a\nb", "é"],
    ],
    [
      parseRedirectUri,
      [
        "http://localhost:8000",
        "http://127.0.0.1:18000/callback",
        "http://[::1]:8000",
        "https://headlamp.example.com/oidc-callback?x=1",
        "urn:ietf:wg:oauth:2.0:oob",
      ],
      [
        "",
        "http://evil.example.com/",
        "http://localhost.evil.com/",
        "https://a.example.com/#frag",
        "https://user@a.example.com/",
        "https://a.example.com/\nx",
        "https://a.example.com/\u2028x",
        "https://a b.example.com/",
        "ftp://a.example.com/",
        "javascript:alert(1)",
      ],
    ],
    [
      parseDisplayName,
      ["GitHub", "Corporate directory", "é".repeat(254)],
      ["", " GitHub", "Git\nHub", "Git\u0085Hub", "a".repeat(255)],
    ],
    [parseConnectorId, ["github", "corp-ldap", "a"], ["", "local", "Corp", "a.b", "a_b"]],
    [parseConnectorField, ["clientSecret", "bindPW", "a_1"], ["", "1a", "client-secret", "a.b"]],
    [parseSecretKey, ["client-secret", "tls.crt", "A_b"], ["", "a b", "a/b", "a\n"]],
    [
      parseGroupName,
      ["tenant-admins", "acme:platform", "Domain Admins", "cn=ops,dc=example,dc=com"],
      ["", " a", "a ", "a\nsystem:masters", "a".repeat(257)],
    ],
    [
      parseClaimPrefix,
      ["oidc:", "tenant-a:", "A.b_c:"],
      ["", "oidc", ":", "system:", "System:", "a b:", "oidc::"],
    ],
    [
      parseEmailAddress,
      ["alice@example.com", "break-glass+x@site-a.example.com"],
      ["", "Alice@example.com", "alice", "a@b@c", "alice@example.com\n", "a b@c.d"],
    ],
    [
      parseRoleName,
      ["view", "cluster-admin", "system:aggregate-to-edit"],
      ["", "View", "a b", "a/b", ":a", "a:"],
    ],
  ] as const)("%o accepts exactly its kind", (parse, good, bad) => {
    for (const text of good) expect(parse(text), text).toBe(text);
    for (const text of bad) expect(parse(text), text).toBeUndefined();
  });

  it("makes the issuer URL of an address and a port, bracketing IPv6", () => {
    expect(issuerUrl(parseIpAddress("10.41.0.5")!, parsePort(30556)!)).toBe("https://10.41.0.5:30556");
    expect(issuerUrl(parseIpAddress("fd00::5")!, parsePort(30556)!)).toBe("https://[fd00::5]:30556");
  });

  it("reads PEM certificates as blocks of DER sequences, and nothing else", () => {
    expect(parsePemCertificates(TEST_CA)).toBe(TEST_CA);
    expect(parsePemCertificates(`${TEST_CA}\n${TEST_CA}`)).toBe(`${TEST_CA}${TEST_CA}`);
    expect(parsePemCertificates(TEST_CA.replaceAll("\n", "\r\n"))).toBe(TEST_CA);
    expect(parsePemCertificates(TEST_CA.trimEnd())).toBe(TEST_CA);
    for (const bad of [
      "",
      "text",
      `${TEST_CA}x`,
      TEST_CA.replace("AiEAjLDMMkzT6gBmnS2IxiNbWI6EsCvCOE45uO5wQhZMDUo=\n", ""),
      TEST_CA.replace("-----END CERTIFICATE-----", ""),
      TEST_CA.replaceAll("CERTIFICATE", "PRIVATE KEY"),
    ])
      expect(parsePemCertificates(bad), bad).toBeUndefined();
  });

  it("takes a connector config of one-line strings without '$', field-name keys, shallow and small", () => {
    const good = {
      clientID: "a",
      orgs: [{ name: "acme", teams: ["x"] }],
      insecure: false,
      port: 636,
      none: null,
    };
    expect(parseConnectorConfig(good)).toEqual({ config: good });
    expect(parseConnectorConfig({ clientID: "$SECRET" })).toEqual({
      problem: expect.stringMatching(/config.clientID holds '\$'/),
    });
    expect(parseConnectorConfig({ a: ["x\ny"] })).toEqual({
      problem: expect.stringMatching(/config.a\[0\] is not one line/),
    });
    expect(parseConnectorConfig({ "bad key": 1 })).toEqual({ problem: expect.stringMatching(/"bad key"/) });
    expect(parseConnectorConfig({ a: { b: { c: { d: { e: { f: { g: 1 } } } } } } })).toEqual({
      problem: expect.stringMatching(/nests deeper/),
    });
    expect(
      parseConnectorConfig({
        a: "x".repeat(4000),
        b: "x".repeat(4000),
        c: "x".repeat(4000),
        d: "x".repeat(4000),
        e: "x".repeat(1000),
      }),
    ).toEqual({
      problem: expect.stringMatching(/at most 16384/),
    });
  });
});
