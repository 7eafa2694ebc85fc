import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dnsLabel } from "../test/builders/inventory.ts";
import { parseDnsLabel, parseDnsSubdomain, type DnsLabel } from "./checked.ts";
import {
  boundedName,
  bpaObjectNames,
  clusterDirectoryName,
  labelJobName,
  labelRoleName,
  SERVICE_NAME_PREFIXES,
  serviceObjectName,
} from "./names.ts";

/** DNS-1123 labels heavy in dashes, where joined names used to meet; some as long as allowed. */
const label = fc
  .oneof(
    fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?$/),
    fc.constantFrom("a", "a-b", "edge-a", "a-edge-sip", "x".repeat(63), `${"y".repeat(60)}-ab`),
  )
  .map(dnsLabel);
const pair = fc.tuple(label, label);

describe("clusterDirectoryName", () => {
  it.each([
    // Issue #21 case 4: both used to be edge-a-cluster-east, one Flux file and one Application.
    ["edge-a", "cluster-east", "edge-a.cluster-east"],
    ["edge", "a-cluster-east", "edge-a-cluster-east"],
    ["edge-a-b", "c", "edge-a-b.c"],
    ["default", "cluster-xyz", "default-cluster-xyz"],
    ["sipcluster-system", "sipcluster-system", "sipcluster-system.sipcluster-system"],
  ])("names %s/%s %s", (namespace, cluster, expected) => {
    expect(clusterDirectoryName(dnsLabel(namespace), dnsLabel(cluster))).toBe(expected);
  });

  it("gives different directories different names, each a DNS subdomain of at most 63 (property)", () => {
    fc.assert(
      fc.property(pair, pair, ([namespaceA, clusterA], [namespaceB, clusterB]) => {
        const a = clusterDirectoryName(namespaceA, clusterA);
        expect(a.length).toBeLessThanOrEqual(63);
        expect(parseDnsSubdomain(a)).toBe(a);
        fc.pre(namespaceA !== namespaceB || clusterA !== clusterB);
        expect(a).not.toBe(clusterDirectoryName(namespaceB, clusterB));
      }),
      { numRuns: 3000 },
    );
  });

  it("shortens the longest pairs to 63 and keeps the one dot a valid place", () => {
    const long = clusterDirectoryName(dnsLabel("n".repeat(63)), dnsLabel("c".repeat(63)));
    expect(long).toMatch(/^n{54}-[0-9a-f]{8}$/);
    // Cut right after the dot: a-a…a. would end a label in a dot, so the dot becomes a dash.
    expect(clusterDirectoryName(dnsLabel(`a-${"a".repeat(51)}`), dnsLabel("b".repeat(10)))).toMatch(
      /^a-a{51}--[0-9a-f]{8}$/,
    );
  });
});

describe("labelRoleName", () => {
  it.each([
    // Issue #21 case 4: both used to be bmh-labels-tenant-a-edge-sip.
    ["edge-sip", "tenant-a", "bmh-labels-tenant-a.edge-sip"],
    ["a-edge-sip", "tenant", "bmh-labels-tenant.a-edge-sip"],
    ["metal3", "tenant", "bmh-labels-tenant-metal3"],
  ])("names the Role of %s/%s %s", (namespace, cluster, expected) => {
    expect(labelRoleName(dnsLabel(namespace), dnsLabel(cluster))).toBe(expected);
  });

  it("gives different SIPClusters different Role names, each a DNS subdomain (property)", () => {
    fc.assert(
      fc.property(pair, pair, ([namespaceA, clusterA], [namespaceB, clusterB]) => {
        const a = labelRoleName(namespaceA, clusterA);
        expect(parseDnsSubdomain(a)).toBe(a);
        fc.pre(namespaceA !== namespaceB || clusterA !== clusterB);
        expect(a).not.toBe(labelRoleName(namespaceB, clusterB));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("boundedName", () => {
  it.each([
    ["a name shorter than the limit", "a".repeat(62), "a".repeat(62)],
    ["a name as long as the limit", "a".repeat(63), /^a{54}-[0-9a-f]{8}$/],
    [
      "a name ending in a dash where it is cut",
      `${"a".repeat(53)}-${"b".repeat(20)}`,
      /^a{53}--[0-9a-f]{8}$/,
    ],
  ])("keeps or shortens %s", (_, wanted, expected) => {
    const name = boundedName(wanted, 63);
    if (typeof expected === "string") expect(name).toBe(expected);
    else expect(name).toMatch(expected);
  });

  it("never shortens one name into another that is kept (property)", () => {
    // A shortened name is exactly the limit long and a kept one shorter, whatever the names hold.
    const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,80}[a-z0-9])?$/);
    fc.assert(
      fc.property(name, name, (a, b) => {
        fc.pre(a !== b);
        expect(boundedName(a, 63)).not.toBe(boundedName(b, 63));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("labelJobName and serviceObjectName", () => {
  it("stay DNS labels of at most 63 for the longest cluster names, and apart", () => {
    const long = dnsLabel("a".repeat(63));
    const other = dnsLabel(`${"a".repeat(62)}b`);
    for (const name of [labelJobName(long), serviceObjectName(SERVICE_NAME_PREFIXES.jumpHost, long, 3)]) {
      expect(parseDnsLabel(name)).toBe(name);
    }
    expect(labelJobName(long)).not.toBe(labelJobName(other));
    // The shortest that must be shortened: bmh-labels- and 52 characters.
    expect(labelJobName(dnsLabel("a".repeat(51)))).toBe(`bmh-labels-${"a".repeat(51)}`);
    expect(labelJobName(dnsLabel("a".repeat(52)))).toMatch(/^bmh-labels-a{43}-[0-9a-f]{8}$/);
  });
});

describe("bpaObjectNames", () => {
  it("names a cluster's objects as docs/contract.md §4.1 and BPA did", () => {
    expect(bpaObjectNames(dnsLabel("cluster-east"))).toEqual({
      addressBook: "cluster-east-configmap",
      hostsIni: "cluster-east-hosts-ini",
      kubeconfigKustomization: "cluster-east-kubeconfig-kustomization",
      software: "cluster-east-software",
      installer: "kud-cluster-east",
    });
  });

  it("gives two clusters of one namespace no ConfigMap name in common (property)", () => {
    fc.assert(
      fc.property(label, label, (a, b) => {
        fc.pre(a !== b);
        const configMaps = (cluster: DnsLabel) => {
          const names = bpaObjectNames(cluster);
          return [names.addressBook, names.hostsIni, names.kubeconfigKustomization, names.software];
        };
        const of = new Set(configMaps(a));
        expect(configMaps(b).filter((name) => of.has(name))).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });
});
