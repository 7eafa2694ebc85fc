import { Job } from "kubernetes-models/batch/v1";
import { ConfigMap } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { checked } from "../test/builders/inventory.ts";
import { parseImageReference } from "../synth/checked.ts";

const image = (text: string) => checked(parseImageReference, text);
import { parse } from "yaml";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { toYamlStream } from "../synth/codec/yaml-output.ts";
import { KudInstallerChart } from "./kud-installer.ts";
import {
  bpaPlan,
  containersOf,
  findObject,
  settings,
  synthObjects,
  testApp,
  validateKubernetesObject,
  type BpaPlanOptions,
  type KubeObject,
} from "../test/support/charts.ts";

function render(options: BpaPlanOptions = {}, siteSettings = settings()) {
  const chart = new KudInstallerChart(testApp(), "kud-installer", {
    cluster: bpaPlan(options),
    ...siteSettings,
  });
  return { chart, objects: synthObjects(chart) };
}

function podSpec(objects: readonly KubeObject[]) {
  const spec = new Job(findObject(objects, "Job")).spec?.template.spec;
  if (!spec) throw new Error("Job without pod spec");
  return spec;
}

function container(objects: readonly KubeObject[], name: string) {
  const found = containersOf(findObject(objects, "Job")).find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

describe("KudInstallerChart", () => {
  it("renders hosts.ini, the kubeconfig kustomization, RBAC and the Job, in that order", () => {
    const { chart, objects } = render();
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
      "ConfigMap/cluster-east-hosts-ini",
      "ConfigMap/cluster-east-kubeconfig-kustomization",
      "ServiceAccount/kud-cluster-east",
      "Role/kud-cluster-east",
      "RoleBinding/kud-cluster-east",
      `Job/${chart.jobName}`,
    ]);
    expect(chart.jobName).toMatch(/^kud-cluster-east-[0-9a-f]{8}$/);
  });

  // Reviewed: the whole output, as it lands in rendered/clusters/edge-a/cluster-east/kud-installer.yaml.
  it("matches the reviewed snapshot", async () => {
    await expect(toYamlStream(render().objects)).toMatchFileSnapshot("__snapshots__/kud-installer.yaml");
  });

  it("puts every object in the CR's namespace with the labels and sync wave 1, each valid for its kind", () => {
    const { objects } = render({ namespace: "site-b", cluster: "west" });
    for (const object of objects) {
      expect(object.metadata.namespace).toBe("site-b");
      expect(object.metadata.labels).toEqual({
        "app.kubernetes.io/managed-by": "metalsynth",
        "metalsynth.io/cluster": "west",
        // Upstream BPA's Job label (its controller test asserts it); the Job only.
        ...(object.kind === "Job" ? { cluster: "west" } : {}),
      });
      expect(object.metadata.annotations).toEqual({
        "argocd.argoproj.io/sync-wave": "1",
        "argocd.argoproj.io/sync-options": "Delete=false",
      });
      validateKubernetesObject(object);
    }
  });

  it("labels the Job cluster: <name>, as upstream BPA does and tools select it by", () => {
    const { objects } = render({ cluster: "west" });
    expect(findObject(objects, "Job").metadata.labels?.["cluster"]).toBe("west");
  });

  it("stores hosts.ini under data key hosts.ini, byte for byte", () => {
    const { objects } = render({ masters: { "master-1": "node-01" }, workers: { "worker-1": "node-04" } });
    expect(findObject(objects, "ConfigMap", "cluster-east-hosts-ini").data).toEqual({
      "hosts.ini":
        "[all]\n" +
        "master-1  ansible_ssh_host=10.10.110.21 ansible_ssh_port=22\n" +
        "worker-1  ansible_ssh_host=10.10.110.31 ansible_ssh_port=22\n" +
        "\n" +
        "[kube-master]\nmaster-1\n\n[kube-node]\nworker-1\n\n[etcd]\nmaster-1\n\n[ovn-central]\nmaster-1\n\n" +
        "[ovn-controller]\nworker-1\n\n[virtlet]\nworker-1\n\n[k8s-cluster:children]\nkube-node\nkube-master\n",
    });
  });

  it.each<[string, BpaPlanOptions, string[]]>([
    [
      "plugins and pod subnet",
      {},
      ["--cluster", "cluster-east", "--plugins", "multus", "ovn4nfv", "--network", "10.244.64.0/18"],
    ],
    ["neither", { plugins: [], podSubnet: null }, ["--cluster", "cluster-east"]],
    [
      "a pod subnet only",
      { plugins: [], podSubnet: "10.10.0.0/16" },
      ["--cluster", "cluster-east", "--network", "10.10.0.0/16"],
    ],
  ])("runs ./installer as an argument vector: %s", (_, options, args) => {
    const installer = container(render(options).objects, "kud-installer");
    expect(installer.command).toEqual(["./installer"]);
    expect(installer.args).toEqual(args);
  });

  it("never hands a CR value to a shell: no `sh -c`, every value its own argument", () => {
    const { objects } = render({ plugins: ["multus", "sriov-network"] });
    for (const candidate of containersOf(findObject(objects, "Job"))) {
      const argv = [...asStrings(candidate.command), ...asStrings(candidate.args)];
      expect(argv).not.toContain("-c");
      expect(argv[0]).not.toMatch(/(^|\/)(ba|da|a)?sh$/);
      for (const argument of argv) expect(argument).not.toMatch(/\s/);
    }
  });

  it("mounts hosts.ini where KUD reads it and the SSH key by reference with mode 0400", () => {
    const { objects } = render();
    expect(container(objects, "kud-installer").volumeMounts).toEqual([
      { name: "multi-cluster", mountPath: "/opt/kud/multi-cluster" },
      {
        name: "hosts-ini",
        mountPath: "/opt/kud/multi-cluster/cluster-east/hosts.ini",
        subPath: "hosts.ini",
        readOnly: true,
      },
      { name: "ssh-key", mountPath: "/root/.ssh/id_rsa", subPath: "id_rsa", readOnly: true },
    ]);
    const volumes = podSpec(objects).volumes ?? [];
    expect(volumes.find((volume) => volume.name === "ssh-key")).toEqual({
      name: "ssh-key",
      secret: {
        secretName: "ssh-key-secret",
        defaultMode: 0o400,
        items: [{ key: "id_rsa", path: "id_rsa" }],
      },
    });
    expect(volumes.find((volume) => volume.name === "hosts-ini")).toEqual({
      name: "hosts-ini",
      configMap: { name: "cluster-east-hosts-ini" },
    });
  });

  it("takes images, pull policy, hostNetwork, privileged and backoffLimit from the settings", () => {
    const custom = settings({
      job: { imagePullPolicy: "Always", hostNetwork: false, privileged: true, backoffLimit: 2 },
    });
    const siteSettings = {
      ...custom,
      images: {
        ...custom.images,
        kudInstaller: image("registry.local/kud:1"),
        kubectl: image("registry.local/kubectl:1"),
      },
      sshKeySecret: "site-key",
    };
    const { objects } = render({}, siteSettings);
    const job = new Job(findObject(objects, "Job"));
    expect(job.spec?.backoffLimit).toBe(2);
    expect(job.spec?.template.spec?.hostNetwork).toBe(false);
    const installer = container(objects, "kud-installer");
    expect(installer).toMatchObject({ image: "registry.local/kud:1", imagePullPolicy: "Always" });
    // The API server refuses allowPrivilegeEscalation: false next to privileged: true.
    expect(installer.securityContext).toEqual({
      runAsUser: 0,
      runAsNonRoot: false,
      privileged: true,
      readOnlyRootFilesystem: false,
    });
    expect(container(objects, "store-kubeconfig")).toMatchObject({
      image: "registry.local/kubectl:1",
      imagePullPolicy: "Always",
    });
    expect(
      job.spec?.template.spec?.volumes?.find((volume) => volume.name === "ssh-key")?.secret?.secretName,
    ).toBe("site-key");
    job.validate();
  });

  it("runs the installer first, then stores admin.conf as Secret <cluster>-kubeconfig key value via server-side apply", () => {
    const { objects } = render();
    const spec = podSpec(objects);
    expect(spec.initContainers?.map((step) => step.name)).toEqual(["kud-installer"]);
    expect(spec.containers.map((step) => step.name)).toEqual(["store-kubeconfig"]);
    const store = container(objects, "store-kubeconfig");
    expect(store.command).toEqual(["kubectl"]);
    expect(store.args).toEqual([
      "apply",
      "--server-side",
      "--field-manager=metalsynth-kud",
      "--force-conflicts",
      "--cache-dir=/tmp/kube-cache",
      "--kustomize=/kubeconfig",
    ]);
    expect(store.volumeMounts).toContainEqual({
      name: "multi-cluster",
      mountPath: "/kubeconfig/artifacts",
      subPath: "cluster-east/artifacts",
      readOnly: true,
    });
    const configMap = new ConfigMap(
      findObject(objects, "ConfigMap", "cluster-east-kubeconfig-kustomization"),
    );
    expect(parse(configMap.data?.["kustomization.yaml"] ?? "")).toEqual({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      namespace: "edge-a",
      secretGenerator: [
        {
          name: "cluster-east-kubeconfig",
          type: "Opaque",
          files: ["value=artifacts/admin.conf"],
          options: {
            disableNameSuffixHash: true,
            labels: { "app.kubernetes.io/managed-by": "metalsynth", "metalsynth.io/cluster": "cluster-east" },
          },
        },
      ],
    });
  });

  it("lets the ServiceAccount touch only its kubeconfig Secret, and only from the kubectl step", () => {
    const { objects } = render();
    expect(findObject(objects, "Role").rules).toEqual([
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: ["cluster-east-kubeconfig"],
        verbs: ["create", "get", "patch", "update"],
      },
    ]);
    expect(findObject(objects, "RoleBinding")).toMatchObject({
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "kud-cluster-east" },
      subjects: [{ kind: "ServiceAccount", name: "kud-cluster-east", namespace: "edge-a" }],
    });
    const spec = podSpec(objects);
    expect(spec.serviceAccountName).toBe("kud-cluster-east");
    expect(spec.automountServiceAccountToken).toBe(false);
    const tokenMounts = containersOf(findObject(objects, "Job")).filter((candidate) =>
      JSON.stringify(candidate.volumeMounts).includes("kube-api-access"),
    );
    expect(tokenMounts.map((candidate) => candidate.name)).toEqual(["store-kubeconfig"]);
  });

  describe("Job name", () => {
    const base = settings();
    const nameOf = (options: BpaPlanOptions = {}, siteSettings = settings()) =>
      render(options, siteSettings).chart.jobName;

    it("is stable for the same input, including a Software CR the installer does not use", () => {
      expect(nameOf()).toBe(nameOf());
      expect(nameOf({ masterSoftware: ["htop"] })).toBe(nameOf());
    });

    it.each<[string, BpaPlanOptions]>([
      ["a master's IP", { ips: { "node-02": "10.10.110.99" } }],
      ["a worker's IP", { ips: { "node-05": "10.10.110.99" } }],
      ["a node label", { workers: { "worker-1": "node-04", "worker-9": "node-05" } }],
      ["the plugins", { plugins: ["multus"] }],
      ["the pod subnet", { podSubnet: "10.245.0.0/16" }],
      ["the namespace", { namespace: "site-b" }],
    ])("changes with %s", (_, options) => {
      expect(nameOf(options)).not.toBe(nameOf());
    });

    it.each<[string, SiteSettings]>([
      ["the installer image", { ...base, images: { ...base.images, kudInstaller: image("kud:next") } }],
      ["the kubectl image", { ...base, images: { ...base.images, kubectl: image("kubectl:next") } }],
      ["the pull policy", settings({ job: { imagePullPolicy: "Always" } })],
      ["hostNetwork", settings({ job: { hostNetwork: false } })],
      ["privileged", settings({ job: { privileged: true } })],
      ["backoffLimit", settings({ job: { backoffLimit: 1 } })],
      ["the SSH key Secret", { ...base, sshKeySecret: "other" }],
    ])("changes with the site setting %s", (_, siteSettings) => {
      expect(nameOf({}, siteSettings)).not.toBe(nameOf());
    });

    it("stays a valid label value for the longest cluster name", () => {
      const cluster = `c${"-x".repeat(31)}`; // 63 characters
      const name = nameOf({ cluster });
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name).toMatch(/^kud-[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      for (const object of render({ cluster }).objects) validateKubernetesObject(object);
    });
  });
});

function asStrings(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string"))
    throw new Error(`not an argv: ${JSON.stringify(value)}`);
  return value;
}
