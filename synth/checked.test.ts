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
} from "./checked.ts";

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
