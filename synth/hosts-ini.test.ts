import { describe, expect, it } from "vitest";
import { checked } from "../test/builders/inventory.ts";
import { parseDnsLabel, parseIpAddress } from "./checked.ts";
import { hostsIni, kudRoles, type InventoryNode } from "./hosts-ini.ts";

/** A node from text, through the parsers the door uses. */
function node(label: string, ip: string): InventoryNode {
  return { label: checked(parseDnsLabel, label), ip: checked(parseIpAddress, ip) };
}

const m1 = node("master-1", "10.10.110.21");
const m2 = node("master-2", "10.10.110.22");
const w1 = node("worker-1", "10.10.110.31");
const w2 = node("worker-2", "10.10.110.32");

// Expected texts are written out byte for byte: they are the compatibility contract with KUD.
describe("hostsIni", () => {
  it("1 master: the master is also the worker", () => {
    expect(hostsIni([m1], [])).toBe(
      [
        "[all]",
        "master-1  ansible_ssh_host=10.10.110.21 ansible_ssh_port=22",
        "",
        "[kube-master]",
        "master-1",
        "",
        "[kube-node]",
        "master-1",
        "",
        "[etcd]",
        "master-1",
        "",
        "[ovn-central]",
        "master-1",
        "",
        "[ovn-controller]",
        "master-1",
        "",
        "[virtlet]",
        "master-1",
        "",
        "[k8s-cluster:children]",
        "kube-node",
        "kube-master",
        "",
      ].join("\n"),
    );
  });

  it("1 master + 1 worker", () => {
    expect(hostsIni([m1], [w1])).toBe(
      "[all]\n" +
        "master-1  ansible_ssh_host=10.10.110.21 ansible_ssh_port=22\n" +
        "worker-1  ansible_ssh_host=10.10.110.31 ansible_ssh_port=22\n" +
        "\n" +
        "[kube-master]\nmaster-1\n\n" +
        "[kube-node]\nworker-1\n\n" +
        "[etcd]\nmaster-1\n\n" +
        "[ovn-central]\nmaster-1\n\n" +
        "[ovn-controller]\nworker-1\n\n" +
        "[virtlet]\nworker-1\n\n" +
        "[k8s-cluster:children]\nkube-node\nkube-master\n",
    );
  });

  it("2 masters + 2 workers, each group in CR order", () => {
    expect(hostsIni([m1, m2], [w1, w2])).toBe(
      "[all]\n" +
        "master-1  ansible_ssh_host=10.10.110.21 ansible_ssh_port=22\n" +
        "master-2  ansible_ssh_host=10.10.110.22 ansible_ssh_port=22\n" +
        "worker-1  ansible_ssh_host=10.10.110.31 ansible_ssh_port=22\n" +
        "worker-2  ansible_ssh_host=10.10.110.32 ansible_ssh_port=22\n" +
        "\n" +
        "[kube-master]\nmaster-1\nmaster-2\n\n" +
        "[kube-node]\nworker-1\nworker-2\n\n" +
        "[etcd]\nmaster-1\nmaster-2\n\n" +
        "[ovn-central]\nmaster-1\nmaster-2\n\n" +
        "[ovn-controller]\nworker-1\nworker-2\n\n" +
        "[virtlet]\nworker-1\nworker-2\n\n" +
        "[k8s-cluster:children]\nkube-node\nkube-master\n",
    );
  });

  it("masters only: every master is also a worker", () => {
    expect(hostsIni([m1, m2], [])).toBe(
      "[all]\n" +
        "master-1  ansible_ssh_host=10.10.110.21 ansible_ssh_port=22\n" +
        "master-2  ansible_ssh_host=10.10.110.22 ansible_ssh_port=22\n" +
        "\n" +
        "[kube-master]\nmaster-1\nmaster-2\n\n" +
        "[kube-node]\nmaster-1\nmaster-2\n\n" +
        "[etcd]\nmaster-1\nmaster-2\n\n" +
        "[ovn-central]\nmaster-1\nmaster-2\n\n" +
        "[ovn-controller]\nmaster-1\nmaster-2\n\n" +
        "[virtlet]\nmaster-1\nmaster-2\n\n" +
        "[k8s-cluster:children]\nkube-node\nkube-master\n",
    );
  });

  it("a host in both roles is listed once in [all] and in both role groups", () => {
    expect(hostsIni([m1, m2], [m1, w1])).toBe(
      "[all]\n" +
        "master-1  ansible_ssh_host=10.10.110.21 ansible_ssh_port=22\n" +
        "master-2  ansible_ssh_host=10.10.110.22 ansible_ssh_port=22\n" +
        "worker-1  ansible_ssh_host=10.10.110.31 ansible_ssh_port=22\n" +
        "\n" +
        "[kube-master]\nmaster-1\nmaster-2\n\n" +
        "[kube-node]\nmaster-1\nworker-1\n\n" +
        "[etcd]\nmaster-1\nmaster-2\n\n" +
        "[ovn-central]\nmaster-1\nmaster-2\n\n" +
        "[ovn-controller]\nmaster-1\nworker-1\n\n" +
        "[virtlet]\nmaster-1\nworker-1\n\n" +
        "[k8s-cluster:children]\nkube-node\nkube-master\n",
    );
  });

  it("matches labels exactly (upstream's substring check dropped node-1 after node-10)", () => {
    const text = hostsIni([node("node-10", "10.0.0.10")], [node("node-1", "10.0.0.1")]);
    expect(text).toContain("[kube-node]\nnode-1\n\n");
    expect(text).toContain("node-1  ansible_ssh_host=10.0.0.1 ansible_ssh_port=22\n");
  });

  it("writes IPv6 addresses as they are", () => {
    expect(hostsIni([node("m", "fd00::21")], [])).toContain(
      "m  ansible_ssh_host=fd00::21 ansible_ssh_port=22\n",
    );
  });

  it.each([
    ["a label with a space", "m 1", "10.0.0.1"],
    ["a label with a newline", "m1\n[all]", "10.0.0.1"],
    ["an address with a variable", "m1", "10.0.0.1 ansible_become=yes"],
    ["an empty address", "m1", ""],
  ])("can't be handed %s: the parsers refuse it and plain text does not compile", (_, label, ip) => {
    expect(parseDnsLabel(label) === undefined || parseIpAddress(ip) === undefined).toBe(true);
    // @ts-expect-error hostsIni takes only a DnsLabel and an IpAddress, which only the parsers make.
    const write = () => hostsIni([{ label, ip }], []);
    expect(write).toBeTypeOf("function");
  });
});

describe("kudRoles", () => {
  it("keeps the first address of a label listed twice", () => {
    const roles = kudRoles([m1], [node("master-1", "10.99.99.99"), w1]);
    expect(roles.all).toEqual([m1, w1]);
    expect(roles.workers).toEqual([node("master-1", "10.99.99.99"), w1]);
  });
});
