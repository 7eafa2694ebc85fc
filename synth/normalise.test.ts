import { describe, expect, it } from "vitest";
import { formatPath } from "./field-path.ts";
import { editDistance, normalizeMac } from "./mac.ts";
import { cidrProblem } from "./network.ts";
import { formatBytes, parseMemory } from "./quantity.ts";
import { secretFindings } from "./rules/secrets.ts";

describe("normalizeMac", () => {
  it.each([
    ["00:C6:14:04:61:B3", "00:c6:14:04:61:b3"],
    ["00-c6-14-04-61-b3", "00:c6:14:04:61:b3"],
    ["00c6.1404.61b3", "00:c6:14:04:61:b3"],
  ])("%s → %s", (text, mac) => expect(normalizeMac(text)).toBe(mac));

  // Exactly what the CRD pattern refuses (synth/schema/crds.test.ts runs both on one table).
  it.each([
    "00:c6:14:04:61",
    "00:c6-14:04:61:b3",
    "00:c6:14:04:61:zz",
    "<pn4-IF2-mac>",
    "",
    "00c614.0461b3",
    " 00:c6:14:04:61:b3 ",
  ])("refuses %j", (text) => expect(normalizeMac(text)).toBeUndefined());

  it("measures edit distance for suggestions", () => {
    expect(editDistance("00:c6:14:04:61:b2", "00:c6:14:04:61:b3")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
  });
});

describe("parseMemory", () => {
  it.each([
    ["4Gi", 4 * 2 ** 30],
    ["4096Mi", 4 * 2 ** 30],
    ["8G", 8e9],
    ["8589934592", 8589934592],
    [8589934592, 8589934592],
    ["1.5Gi", 1.5 * 2 ** 30],
    [1048576, 1048576],
    // An explicit unit is taken at its word, however small.
    ["4Ki", 4096],
    // Kubernetes' grammar: a decimal point may lead or trail, a plus sign and an exponent are allowed.
    [".5Gi", 2 ** 29],
    ["2.Gi", 2 * 2 ** 30],
    ["+4Gi", 4 * 2 ** 30],
    ["8e9", 8e9],
    ["1E", 1e18],
  ])("%j is %d bytes", (text, bytes) => expect(parseMemory(text)).toEqual({ bytes }));

  it.each([
    ["64", /ambiguous/],
    [64, /ambiguous/],
    // Bytes in name only: no host is that small (docs/decisions/0014-bare-memory-numbers.md).
    [4096, /4096 bytes \(4Ki\), less than any host has.*did you mean 4096Mi\?/],
    ["1024", /did you mean 1024Mi\?/],
    [1048575, /did you mean 1048575Mi\?/],
    ["4 GiB", /not a Kubernetes quantity/],
    ["-1Gi", /"-1Gi" is negative/],
    ["4gb", /not a Kubernetes quantity/],
    // Kubernetes refuses surrounding whitespace; it was trimmed and accepted.
    ["64Gi ", /"64Gi " has spaces around it, which a Kubernetes quantity can't; write "64Gi"/],
    ["\t64Gi", /write "64Gi"/],
    ["1e9Gi", /not a Kubernetes quantity/],
    [".", /not a Kubernetes quantity/],
  ])("refuses %j", (text, problem) =>
    expect(parseMemory(text)).toEqual({ problem: expect.stringMatching(problem) }),
  );

  it("formats bytes for messages", () => {
    expect(formatBytes(64 * 2 ** 30)).toBe("64Gi");
    expect(formatBytes(1536 * 2 ** 20)).toBe("1.5Gi");
    expect(formatBytes(12)).toBe("12B");
  });
});

describe("cidrProblem", () => {
  it.each(["10.244.64.0/18", "0.0.0.0/0", "fd00:10:244::/56", "192.168.1.7/32"])("accepts %s", (cidr) =>
    expect(cidrProblem(cidr)).toBeUndefined(),
  );
  it.each([
    ["10.244.0.0/33", /longer than 32/],
    ["10.244.1.0/16", /did you mean 10.244.0.0\/16/],
    ["10.244.0.0", /not a CIDR/],
    ["300.1.1.1/8", /not an IPv4 or IPv6/],
    ["fd00::1/64", /host bits/],
    ["10.0.0.0/8; reboot", /not a CIDR/],
  ])("refuses %s", (cidr, problem) => expect(cidrProblem(cidr)).toMatch(problem));
});

describe("formatPath", () => {
  it.each([
    [["spec", "masters", 0, "master-1", "mac-address"], "spec.masters[0].master-1.mac-address"],
    [
      ["spec", "nodes", "ControlPlane", "labelSelector", "matchLabels", "vino.airshipit.org/flavor"],
      'spec.nodes.ControlPlane.labelSelector.matchLabels["vino.airshipit.org/flavor"]',
    ],
    [[], ""],
  ])("%j → %s", (path, text) => expect(formatPath(path)).toBe(text));
});

describe("secretFindings", () => {
  it.each([
    [{ note: "password=hunter2" }, "note"],
    [{ key: "-----BEGIN RSA PRIVATE KEY-----\nabc" }, "key"],
    [{ password: "hunter2" }, "password"],
    [{ list: ["x", "token: abcdefghijklmnop"] }, "list.1"],
    [{ note: "api_key=abcdefgh12345" }, "note"],
    [{ note: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijk" }, "note"],
    [{ note: "aws AKIAIOSFODNN7EXAMPLE" }, "note"],
    [{ note: `ghp_${"a1".repeat(18)}` }, "note"],
  ])("finds %j", (value, path) => {
    const findings = secretFindings(value);
    expect(findings.map((finding) => finding.path.join("."))).toEqual([path]);
    expect(JSON.stringify(findings)).not.toContain("hunter2");
  });

  it.each([
    { nodeSSHPrivateKeys: "tenant-ssh-keys" },
    { sshKeySecret: "ssh-key-secret" },
    { key: "ssh-ed25519 AAAAC3Nz ops@site" },
    { password: "" },
  ])("leaves %j alone", (value) => expect(secretFindings(value)).toEqual([]));
});
