import { Deployment } from "kubernetes-models/apps/v1";
import { ConfigMap, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import type { SipClusterPlan } from "../../synth/plan/model.ts";
import { DEFAULT_SETTINGS, type SiteSettings } from "../../synth/schema/settings.ts";
import { toYamlStream } from "../../synth/codec/yaml-output.ts";
import {
  findObject,
  synthObjects,
  testApp,
  type KubeObject,
  validateKubernetesObject,
} from "../../test/support/charts.ts";
import { JumpHostChart } from "./jumphost.ts";
import {
  PUBLIC_KEY,
  SIP_HOSTS,
  examplePlan,
  sipHost,
  sipPlan,
  type SipServices,
} from "../../test/support/sip.ts";

const NAME = "jumphost-tenant-a";

function render(cluster: SipClusterPlan, settings: SiteSettings = DEFAULT_SETTINGS) {
  return synthObjects(new JumpHostChart(testApp(), "jumphost", { cluster, settings }));
}

function find(objects: readonly KubeObject[], kind: string, name = NAME): KubeObject {
  return findObject(objects, kind, name);
}

function podSpec(objects: readonly KubeObject[], name = NAME) {
  const spec = new Deployment(find(objects, "Deployment", name)).spec?.template.spec;
  if (!spec) throw new Error(`Deployment ${name} without a pod spec`);
  return spec;
}

function jumpHost(overrides: Partial<NonNullable<SipServices["jumpHost"]>[number]> = {}): SipServices {
  return {
    jumpHost: [
      {
        nodeInterfaceId: "oam-ipv4",
        nodePort: 30022,
        sshAuthorizedKeys: [PUBLIC_KEY],
        nodeSSHPrivateKeys: "tenant-a-ssh-keys",
        ...overrides,
      },
    ],
  };
}

describe("JumpHostChart", () => {
  // Reviewed: the example site's rendered/clusters/edge-sip/tenant-a/jumphost.yaml.
  it("matches the reviewed snapshot", async () => {
    const { plan, settings } = examplePlan();
    await expect(toYamlStream(render(plan, settings))).toMatchFileSnapshot("__snapshots__/jumphost.yaml");
  });

  it("renders a ConfigMap, a Deployment and a NodePort Service 22 → nodePort", () => {
    const objects = render(sipPlan());
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
      `ConfigMap/${NAME}`,
      `Deployment/${NAME}`,
      `Service/${NAME}`,
    ]);
    for (const object of objects) validateKubernetesObject(object);
    expect(new Service(find(objects, "Service")).spec).toEqual({
      type: "NodePort",
      selector: { "app.kubernetes.io/name": "jumphost", "app.kubernetes.io/instance": NAME },
      ports: [{ name: "ssh", protocol: "TCP", port: 22, targetPort: 22, nodePort: 30022 }],
    });
  });

  it("writes authorized_keys, ssh_config and the hosts table, standby hosts included, byte for byte", () => {
    // ControlPlane 2 + 1 (cp-3 standby), Worker 2 + 0; wk-2 has no BMC, wk-1 no credentials Secret.
    const hosts = SIP_HOSTS().map((host) =>
      host.name === "wk-2"
        ? { ...host, bmc: undefined }
        : host.name === "wk-1"
          ? { ...host, bmc: { address: "ipmi://10.20.0.21:623" } }
          : host,
    );
    const data = new ConfigMap(find(render(sipPlan({ hosts })), "ConfigMap")).data;
    expect(data?.["authorized_keys"]).toBe(`${PUBLIC_KEY}\n`);
    expect(data?.["ssh_config"]).toBe(
      [
        "# jumphost-tenant-a (SIPCluster edge-sip/tenant-a): written by metalsynth (SPEC 4.2), do not edit.",
        "Host cp-1",
        "  HostName 10.41.0.11",
        "",
        "Host cp-2",
        "  HostName 10.41.0.12",
        "",
        "Host cp-3",
        "  HostName 10.41.0.13",
        "",
        "Host wk-1",
        "  HostName 10.41.0.21",
        "",
        "Host wk-2",
        "  HostName 10.41.0.22",
        "",
        "Host *",
        "  IdentityFile /etc/opt/sip/ssh-private-keys/key",
        "  IdentityFile /etc/opt/sip/ssh-private-keys/id_ed25519",
        "  IdentityFile /etc/opt/sip/ssh-private-keys/id_ecdsa",
        "  IdentityFile /etc/opt/sip/ssh-private-keys/id_rsa",
        "",
      ].join("\n"),
    );
    const bmc = (name: string, address: string) => ({
      address,
      credentials: `/etc/opt/sip/bmc/${name}`,
    });
    expect(JSON.parse(data?.["hosts"] ?? "")).toEqual([
      {
        name: "cp-1",
        bareMetalHost: "metal3/cp-1",
        role: "ControlPlane",
        standby: false,
        ip: "10.41.0.11",
        bmc: bmc("cp-1", "redfish+https://10.20.0.11/redfish/v1/Systems/1"),
      },
      {
        name: "cp-2",
        bareMetalHost: "metal3/cp-2",
        role: "ControlPlane",
        standby: false,
        ip: "10.41.0.12",
        bmc: bmc("cp-2", "redfish+https://10.20.0.12/redfish/v1/Systems/1"),
      },
      {
        name: "cp-3",
        bareMetalHost: "metal3/cp-3",
        role: "ControlPlane",
        standby: true,
        ip: "10.41.0.13",
        bmc: bmc("cp-3", "redfish+https://10.20.0.13/redfish/v1/Systems/1"),
      },
      {
        name: "wk-1",
        bareMetalHost: "metal3/wk-1",
        role: "Worker",
        standby: false,
        ip: "10.41.0.21",
        bmc: { address: "ipmi://10.20.0.21:623" },
      },
      { name: "wk-2", bareMetalHost: "metal3/wk-2", role: "Worker", standby: false, ip: "10.41.0.22" },
    ]);
    expect(data?.["hosts"]).toMatch(/^\[\n {2}\{\n {4}"name": "cp-1",\n/);
    expect(data?.["hosts"]).toMatch(/\n\]\n$/);
  });

  it("maps every member's name to its address in the pod's /etc/hosts", () => {
    expect(podSpec(render(sipPlan())).hostAliases).toEqual([
      { ip: "10.41.0.11", hostnames: ["cp-1"] },
      { ip: "10.41.0.12", hostnames: ["cp-2"] },
      { ip: "10.41.0.13", hostnames: ["cp-3"] },
      { ip: "10.41.0.21", hostnames: ["wk-1"] },
      { ip: "10.41.0.22", hostnames: ["wk-2"] },
    ]);
  });

  it("gives hosts that share an address one /etc/hosts entry, as server-side apply requires", () => {
    const hosts = [
      ...SIP_HOSTS().slice(0, 3),
      sipHost("wk-1", "worker", "10.41.0.11"),
      sipHost("wk-2", "worker", "10.41.0.22"),
    ];
    expect(podSpec(render(sipPlan({ hosts }))).hostAliases).toEqual([
      { ip: "10.41.0.11", hostnames: ["cp-1", "wk-1"] },
      { ip: "10.41.0.12", hostnames: ["cp-2"] },
      { ip: "10.41.0.13", hostnames: ["cp-3"] },
      { ip: "10.41.0.22", hostnames: ["wk-2"] },
    ]);
  });

  it("names hosts that share a BMH name across namespaces <name>.<namespace>", () => {
    const plan = sipPlan({
      hosts: [...SIP_HOSTS(), sipHost("cp-1", "control-plane", "10.41.1.11", { namespace: "metal3-b" })],
      controlPlane: { active: 4, standby: 0 },
    });
    expect(podSpec(render(plan)).hostAliases?.map((alias) => alias.hostnames)).toEqual([
      ["cp-1.metal3"],
      ["cp-1.metal3-b"],
      ["cp-2"],
      ["cp-3"],
      ["wk-1"],
      ["wk-2"],
    ]);
  });

  it("mounts the node keys and each host's BMC credentials by Secret name, optional where it may be missing", () => {
    const hosts = SIP_HOSTS().map((host) => (host.name === "wk-2" ? { ...host, bmc: undefined } : host));
    const spec = podSpec(render(sipPlan({ hosts })));
    expect(spec.securityContext?.fsGroup).toBe(1000);
    const volume = (name: string) => spec.volumes?.find((candidate) => candidate.name === name);
    expect(volume("node-ssh-keys")).toEqual({
      name: "node-ssh-keys",
      secret: { secretName: "tenant-a-ssh-keys", defaultMode: 0o440 },
    });
    const sources = volume("bmc-credentials")?.projected?.sources ?? [];
    expect(volume("bmc-credentials")?.projected?.defaultMode).toBe(0o440);
    expect(sources.map((source) => source.secret)).toEqual(
      ["cp-1", "cp-2", "cp-3", "wk-1"].map((name) => ({
        name: `${name}-bmc`,
        optional: true,
        items: [
          { key: "username", path: `${name}/username` },
          { key: "password", path: `${name}/password` },
        ],
      })),
    );
    expect(spec.containers[0]?.volumeMounts).toEqual([
      {
        name: "config",
        mountPath: "/home/ubuntu/.ssh/authorized_keys",
        subPath: "authorized_keys",
        readOnly: true,
      },
      { name: "config", mountPath: "/etc/ssh/ssh_config", subPath: "ssh_config", readOnly: true },
      { name: "config", mountPath: "/etc/opt/sip/hosts", subPath: "hosts", readOnly: true },
      { name: "node-ssh-keys", mountPath: "/etc/opt/sip/ssh-private-keys", readOnly: true },
      { name: "bmc-credentials", mountPath: "/etc/opt/sip/bmc", readOnly: true },
    ]);
  });

  it("leaves the BMC volume out when no host has a credentials Secret", () => {
    const hosts = SIP_HOSTS().map((host) => ({ ...host, bmc: undefined }));
    const spec = podSpec(render(sipPlan({ hosts })));
    expect(spec.volumes?.map((volume) => volume.name)).toEqual(["config", "node-ssh-keys"]);
    expect(spec.containers[0]?.volumeMounts?.map((mount) => mount.name)).not.toContain("bmc-credentials");
  });

  it("runs sshd as root without privilege escalation and with only the capabilities it uses", () => {
    const [container] = podSpec(render(sipPlan())).containers;
    expect(container?.securityContext).toEqual({
      runAsUser: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: false,
      capabilities: {
        drop: ["ALL"],
        add: [
          "AUDIT_WRITE",
          "CHOWN",
          "DAC_OVERRIDE",
          "FOWNER",
          "KILL",
          "NET_BIND_SERVICE",
          "SETGID",
          "SETUID",
          "SYS_CHROOT",
        ],
      },
    });
    expect(container?.readinessProbe?.tcpSocket).toEqual({ port: "ssh" });
  });

  it.each<[string, SipServices, { name: string; value: string }[] | undefined]>([
    [
      "without bmc settings",
      jumpHost(),
      [
        { name: "NO_PROXY", value: "*" },
        { name: "no_proxy", value: "*" },
      ],
    ],
    [
      "with bmc.proxy: false",
      jumpHost({ bmc: { proxy: false } }),
      [
        { name: "NO_PROXY", value: "*" },
        { name: "no_proxy", value: "*" },
      ],
    ],
    ["with bmc.proxy: true", jumpHost({ bmc: { proxy: true } }), undefined],
  ])("bypasses proxies for BMC traffic unless the CR says bmc.proxy: true (%s)", (_, services, env) => {
    expect(podSpec(render(sipPlan({ services }))).containers[0]?.env).toEqual(env);
  });

  it("takes the image from the CR, else from the site settings", () => {
    const image = (services: SipServices) => podSpec(render(sipPlan({ services }))).containers[0]?.image;
    expect(image(jumpHost())).toBe(DEFAULT_SETTINGS.images.jumpHost);
    expect(image(jumpHost({ image: "registry.local/jump-host:v3" }))).toBe("registry.local/jump-host:v3");
  });

  it("rolls the pod when the ConfigMap changes", () => {
    const hash = (services: SipServices) =>
      new Deployment(find(render(sipPlan({ services })), "Deployment")).spec?.template.metadata
        ?.annotations?.["metalsynth.io/config-hash"];
    expect(hash(jumpHost())).toBe(hash(jumpHost()));
    expect(hash(jumpHost({ sshAuthorizedKeys: [] }))).not.toBe(hash(jumpHost()));
  });
});
