import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConfigMap } from "kubernetes-models/v1";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checked } from "../test/builders/inventory.ts";
import { parseImageReference } from "../synth/checked.ts";

const image = (text: string) => checked(parseImageReference, text);
import { INSTALL_PACKAGES_SCRIPT, SoftwareChart } from "./software.ts";
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

const SOFTWARE: BpaPlanOptions = {
  masterSoftware: ["htop", "jq=1.6-2.1ubuntu3"],
  workerSoftware: ["curl", "ethtool=1:5.16-1"],
};

function render(options: BpaPlanOptions = SOFTWARE, siteSettings = settings()) {
  const cluster = bpaPlan(options);
  if (!cluster.software) throw new Error("fixture without a Software CR");
  const chart = new SoftwareChart(testApp(), "software", {
    cluster,
    software: cluster.software,
    ...siteSettings,
  });
  return { chart, objects: synthObjects(chart) };
}

function configMapData(objects: readonly KubeObject[]): Record<string, string> {
  return { ...new ConfigMap(findObject(objects, "ConfigMap")).data };
}

function job(objects: readonly KubeObject[]): KubeObject {
  return findObject(objects, "Job");
}

describe("SoftwareChart", () => {
  it("renders the package ConfigMap then the Job, in the CR's namespace, sync wave 2, valid for their kinds", () => {
    const { chart, objects } = render({ ...SOFTWARE, namespace: "site-b" });
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual([
      "ConfigMap/cluster-east-software",
      `Job/${chart.jobName}`,
    ]);
    expect(chart.jobName).toMatch(/^software-cluster-east-[0-9a-f]{8}$/);
    for (const object of objects) {
      expect(object.metadata.namespace).toBe("site-b");
      expect(object.metadata.labels).toEqual({
        "app.kubernetes.io/managed-by": "metalsynth",
        "metalsynth.io/cluster": "cluster-east",
      });
      expect(object.metadata.annotations).toEqual({
        "argocd.argoproj.io/sync-wave": "2",
        "argocd.argoproj.io/sync-options": "Delete=false",
      });
      validateKubernetesObject(object);
    }
  });

  it("passes packages and hosts as data files, one item per line", () => {
    expect(configMapData(render().objects)).toEqual({
      "install-packages.sh": INSTALL_PACKAGES_SCRIPT,
      "master-packages": "htop\njq=1.6-2.1ubuntu3\n",
      "worker-packages": "curl\nethtool=1:5.16-1\n",
      masters: "10.10.110.21\n10.10.110.22\n10.10.110.23\n",
      workers: "10.10.110.31\n10.10.110.32\n",
    });
  });

  it("installs worker packages on the masters of a cluster without workers", () => {
    const data = configMapData(
      render({ ...SOFTWARE, masters: { "master-1": "node-01" }, workers: {} }).objects,
    );
    expect(data).toMatchObject({ masters: "10.10.110.21\n", workers: "10.10.110.21\n" });
  });

  it("runs a static script file: no `sh -c`, no CR value in the command", () => {
    const containers = containersOf(job(render().objects));
    expect(containers).toHaveLength(1);
    expect(containers[0]).toMatchObject({
      command: ["/bin/sh", "/opt/metalsynth/software/install-packages.sh"],
      image: "integratedcloudnative/bpa-software-installer:v0.4.0",
      imagePullPolicy: "IfNotPresent",
      securityContext: {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      },
    });
    expect(containers[0]?.args).toBeUndefined();
    expect(JSON.stringify(containers[0]?.command)).not.toMatch(/htop|jq|10\.10\.110/);
  });

  it("runs as nobody with the SSH key Secret by reference, mode 0400, and no API token", () => {
    const { objects } = render();
    expect(job(objects)).toMatchObject({
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            automountServiceAccountToken: false,
            hostNetwork: true,
            securityContext: { runAsNonRoot: true, runAsUser: 65534, fsGroup: 65534 },
            volumes: [
              { name: "software", configMap: { name: "cluster-east-software" } },
              {
                name: "ssh-key",
                secret: {
                  secretName: "ssh-key-secret",
                  defaultMode: 0o400,
                  items: [{ key: "id_rsa", path: "id_rsa" }],
                },
              },
              { name: "tmp", emptyDir: {} },
              {
                name: "kud-done",
                secret: {
                  secretName: "cluster-east-kubeconfig",
                  defaultMode: 0,
                  items: [{ key: "value", path: "admin.conf" }],
                },
              },
            ],
          },
        },
      },
    });
  });

  it("starts only once the installer has stored the kubeconfig, without being able to read it", () => {
    const [container] = containersOf(job(render().objects));
    expect(container?.["volumeMounts"]).toContainEqual({
      name: "kud-done",
      mountPath: "/run/metalsynth/kud-done",
      readOnly: true,
    });
  });

  it("names the Job by content: stable for the same input, new for any package, host or setting change", () => {
    const nameOf = (options: BpaPlanOptions = SOFTWARE, siteSettings = settings()) =>
      render(options, siteSettings).chart.jobName;
    expect(nameOf()).toBe(nameOf());
    expect(nameOf({ ...SOFTWARE, plugins: ["multus"] })).toBe(nameOf()); // the installer's business, not ours
    expect(nameOf({ ...SOFTWARE, workerSoftware: ["curl"] })).not.toBe(nameOf());
    expect(nameOf({ ...SOFTWARE, masterSoftware: ["htop", "jq=1.6-2.1ubuntu4"] })).not.toBe(nameOf());
    expect(nameOf({ ...SOFTWARE, ips: { "node-04": "10.10.110.99" } })).not.toBe(nameOf());
    expect(nameOf({ ...SOFTWARE, namespace: "site-b" })).not.toBe(nameOf());
    const base = settings();
    expect(
      nameOf(SOFTWARE, { ...base, images: { ...base.images, softwareInstaller: image("installer:next") } }),
    ).not.toBe(nameOf());
    expect(nameOf(SOFTWARE, { ...base, sshKeySecret: "other" })).not.toBe(nameOf());
    expect(nameOf(SOFTWARE, settings({ job: { hostNetwork: false } }))).not.toBe(nameOf());
  });

  it.each([
    ["a shell command", { name: "htop;reboot" }],
    ["an option", { name: "--allow-unauthenticated" }],
    ["a version with a space", { name: "htop", version: "1.0 reboot" }],
  ])("refuses to render a package with %s, whatever let it through", (_, bad) => {
    const cluster = bpaPlan(SOFTWARE);
    const software = cluster.software!;
    const tampered = { ...software, workerPackages: [bad] };
    expect(
      () => new SoftwareChart(testApp(), "software", { cluster, software: tampered, ...settings() }),
    ).toThrow("is not a Debian package name or version");
  });
});

/** POSIX shells present here: the image's `/bin/sh` may be any of them. */
const SHELLS = ["dash", "bash", "busybox"].filter(
  (shell) => spawnSync(shell, ["-s"], { input: "exit 0" }).error === undefined,
);

/**
 * The script itself, run by each shell against a fake `ssh` that records its argv: what reaches the
 * remote side is exactly `apt-get install -y --` and one single-quoted word per package.
 */
describe.each(SHELLS)("INSTALL_PACKAGES_SCRIPT under %s", (shell) => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "metalsynth-software-"));
    writeFileSync(
      path.join(dir, "ssh"),
      // One line per call, arguments separated by "|"; a host named in FAIL_HOST fails.
      '#!/bin/sh\nprintf "%s|" "$@" >>"$SSH_LOG"\necho >>"$SSH_LOG"\ncase "$*" in *"root@$FAIL_HOST "*) exit 1 ;; esac\n',
    );
    chmodSync(path.join(dir, "ssh"), 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function run(files: Record<string, string>, failHost = "none") {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const result = spawnSync(shell, shell === "busybox" ? ["sh", "-s"] : ["-s"], {
      input: INSTALL_PACKAGES_SCRIPT,
      encoding: "utf8",
      env: {
        PATH: `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        SOFTWARE_DATA_DIR: dir,
        SSH_KEY_FILE: "/key",
        SSH_LOG: path.join(dir, "log"),
        FAIL_HOST: failHost,
      },
    });
    let calls: string[] = [];
    try {
      calls = readFileSync(path.join(dir, "log"), "utf8").trimEnd().split("\n");
    } catch {
      calls = [];
    }
    return { status: result.status, stderr: result.stderr, calls };
  }

  const ssh =
    "-n|-i|/key|-o|BatchMode=yes|-o|ConnectTimeout=30|-o|StrictHostKeyChecking=no|-o|UserKnownHostsFile=/dev/null|-o|LogLevel=ERROR";

  it("installs each role's packages on each of its hosts, one quoted argument per package", () => {
    const result = run({
      "master-packages": "htop\njq=1.6-2.1ubuntu3\n",
      "worker-packages": "curl", // no final newline: still read
      masters: "10.0.0.1\n",
      workers: "10.0.0.2\nfd00::3\n",
    });
    expect(result.status).toBe(0);
    expect(result.calls).toEqual([
      `${ssh}|root@10.0.0.1|apt-get|update|`,
      `${ssh}|root@10.0.0.1|DEBIAN_FRONTEND=noninteractive|apt-get|install|-y|--|'htop'|'jq=1.6-2.1ubuntu3'|`,
      `${ssh}|root@10.0.0.2|apt-get|update|`,
      `${ssh}|root@10.0.0.2|DEBIAN_FRONTEND=noninteractive|apt-get|install|-y|--|'curl'|`,
      `${ssh}|root@fd00::3|apt-get|update|`,
      `${ssh}|root@fd00::3|DEBIAN_FRONTEND=noninteractive|apt-get|install|-y|--|'curl'|`,
    ]);
  });

  it("skips a role without packages", () => {
    const result = run({
      "master-packages": "",
      "worker-packages": "curl\n",
      masters: "10.0.0.1\n",
      workers: "10.0.0.2\n",
    });
    expect(result.status).toBe(0);
    expect(result.calls.every((call) => call.includes("root@10.0.0.2"))).toBe(true);
  });

  it.each([
    ["a shell command", "htop;reboot"],
    ["a command substitution", "$(reboot)"],
    ["a quote", "htop'"],
    ["an option", "--allow-unauthenticated"],
    ["a space", "htop reboot"],
  ])("refuses a package with %s before connecting anywhere", (_, bad) => {
    const result = run({
      "master-packages": "htop\n",
      "worker-packages": `curl\n${bad}\n`,
      masters: "10.0.0.1\n",
      workers: "10.0.0.2\n",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`refusing worker-packages: ${bad} is not a Debian name[=version]`);
    expect(result.calls).toEqual([]);
  });

  it("refuses a host that is not an IP address before connecting anywhere", () => {
    const result = run({
      "master-packages": "htop\n",
      "worker-packages": "curl\n",
      masters: "10.0.0.1\n",
      workers: "10.0.0.2\n10.0.0.3;reboot\n",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("refusing workers: 10.0.0.3;reboot is not an IP address");
    expect(result.calls).toEqual([]);
  });

  it("tries every host and fails at the end when one failed", () => {
    const result = run(
      {
        "master-packages": "htop\n",
        "worker-packages": "curl\n",
        masters: "10.0.0.1\n",
        workers: "10.0.0.2\n",
      },
      "10.0.0.1",
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("10.0.0.1: installing master packages failed");
    expect(result.calls.some((call) => call.includes("root@10.0.0.2|DEBIAN_FRONTEND"))).toBe(true);
  });
});
