import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clusterKey } from "../../synth/cluster-key.ts";
import { synthObjects, testApp, validateKubernetesObject } from "../../test/support/charts.ts";
import { BmhLabelsChart, LABEL_SCRIPT, MISSING_HOST_EXIT_CODE } from "./bmh-labels.ts";
import { SIP_HOSTS, sipHost, sipPlan } from "../../test/support/sip.ts";
import type { SipClusterPlan } from "../../synth/plan/model.ts";
import { dnsLabel } from "../../test/builders/inventory.ts";

const LABEL_JOB = { image: "kubectl:test", imagePullPolicy: "IfNotPresent" };

const render = (cluster: SipClusterPlan) =>
  synthObjects(new BmhLabelsChart(testApp(), "bmh-labels", { cluster, labelJob: LABEL_JOB }));

interface Container {
  readonly command: string[];
  readonly args: string[];
}

function jobOf(cluster: SipClusterPlan) {
  const job = render(cluster).find((object) => object.kind === "Job");
  if (!job) throw new Error("no label Job");
  return job as typeof job & {
    spec: { podFailurePolicy: unknown; template: { spec: { containers: Container[] } } };
  };
}

/** The arguments each container passes to the label script. */
const scriptArguments = (cluster: SipClusterPlan) =>
  jobOf(cluster).spec.template.spec.containers.map((container) => {
    expect(container.command).toEqual(["/bin/sh", "-c", LABEL_SCRIPT, "bmh-labels"]);
    return container.args;
  });

const member = (nodeType: string) => [
  "metalsynth.io/cluster=tenant-a",
  "sip.airshipit.org/cluster-namespace=edge-sip",
  "sip.airshipit.org/cluster-name=tenant-a",
  `sip.airshipit.org/node-type=${nodeType}`,
];
const RELEASE = [
  "metalsynth.io/cluster-",
  "sip.airshipit.org/cluster-namespace-",
  "sip.airshipit.org/cluster-name-",
  "sip.airshipit.org/node-type-",
];

/** tenant-a after its workers shrink from three to two: the highest name, wk-3, is released. */
const shrunk = () =>
  sipPlan({
    lock: {
      entries: ["cp-1", "cp-2", "cp-3", "wk-1", "wk-2", "wk-3"].map((name) => ({
        host: `metal3/${name}`,
        cluster: clusterKey("edge-sip", "tenant-a"),
        kind: "sip" as const,
        role: name.startsWith("cp") ? "ControlPlane" : "Worker",
      })),
    },
    worker: { active: 2, standby: 0 },
  });

describe("BmhLabelsChart", () => {
  it("renders no BareMetalHost: applying one would create a host deleted since the snapshot", () => {
    const objects = render(shrunk());
    expect(objects.map((object) => object.kind)).toEqual(["ServiceAccount", "Role", "RoleBinding", "Job"]);
    for (const object of objects) validateKubernetesObject(object);
  });

  it("labels every member, standby hosts too, and unlabels released hosts, one container per label set", () => {
    // cp-3 is the ControlPlane standby; wk-3 is released.
    expect(shrunk().released.map((host) => host.id)).toEqual(["metal3/wk-3"]);
    expect(scriptArguments(shrunk())).toEqual([
      ["metal3", "cp-1", "cp-2", "cp-3", "--", ...member("ControlPlane")],
      ["metal3", "wk-1", "wk-2", "--", ...member("Worker")],
      ["metal3", "wk-3", "--", ...RELEASE],
    ]);
  });

  it("lists hosts by namespace/name whatever order the plan has them in", () => {
    const plan = sipPlan({
      hosts: [...SIP_HOSTS(), sipHost("cp-0", "control-plane", "10.41.0.10", { namespace: "metal3-b" })],
      controlPlane: { active: 4, standby: 0 },
    });
    const reversed = { ...plan, members: [...plan.members].reverse() };
    expect(scriptArguments(reversed)).toEqual(scriptArguments(plan));
    expect(scriptArguments(plan)).toEqual([
      ["metal3-b", "cp-0", "--", ...member("ControlPlane")],
      ["metal3", "cp-1", "cp-2", "cp-3", "--", ...member("ControlPlane")],
      ["metal3", "wk-1", "wk-2", "--", ...member("Worker")],
    ]);
  });

  it("is an Argo CD PostSync hook, named after what it does so Flux applies a new label set as a new Job", () => {
    const job = jobOf(sipPlan());
    expect(job.metadata).toMatchObject({
      namespace: "edge-sip",
      annotations: {
        "argocd.argoproj.io/hook": "PostSync",
        "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded",
        "argocd.argoproj.io/sync-wave": "-1",
      },
    });
    expect(job.metadata.name).toMatch(/^bmh-labels-tenant-a-[0-9a-f]{8}$/);
    expect(JSON.stringify(job.metadata)).not.toContain("kustomize.toolkit.fluxcd.io");
    expect(jobOf(sipPlan()).metadata.name).toBe(job.metadata.name);
    expect(jobOf(shrunk()).metadata.name).not.toBe(job.metadata.name);
  });

  it("fails at once when a host is missing, and retries anything else", () => {
    expect(jobOf(sipPlan()).spec.podFailurePolicy).toEqual({
      rules: [
        {
          action: "FailJob",
          onExitCodes: { operator: "In", values: [MISSING_HOST_EXIT_CODE] },
          onPodConditions: [],
        },
      ],
    });
  });

  it("lets the Job get and patch exactly the hosts it labels, in their namespace", () => {
    const objects = render(shrunk());
    const role = objects.find((object) => object.kind === "Role");
    expect(role?.metadata).toMatchObject({ name: "bmh-labels-tenant-a.edge-sip", namespace: "metal3" });
    expect(role?.rules).toEqual([
      {
        apiGroups: ["metal3.io"],
        resources: ["baremetalhosts"],
        resourceNames: ["cp-1", "cp-2", "cp-3", "wk-1", "wk-2", "wk-3"],
        verbs: ["get", "patch"],
      },
    ]);
    const binding = objects.find((object) => object.kind === "RoleBinding");
    expect(binding?.subjects).toEqual([
      { kind: "ServiceAccount", name: "bmh-labels-tenant-a", namespace: "edge-sip" },
    ]);
  });

  it("gives edge-sip/tenant-a and a-edge-sip/tenant different Roles in metal3 (issue #21 case 4)", () => {
    const roleNames = [
      sipPlan(),
      {
        ...sipPlan(),
        key: clusterKey("a-edge-sip", "tenant"),
        namespace: dnsLabel("a-edge-sip"),
        name: dnsLabel("tenant"),
      },
    ].map((cluster) =>
      synthObjects(new BmhLabelsChart(testApp(), "bmh-labels", { cluster, labelJob: LABEL_JOB }))
        .filter((object) => object.kind === "Role" || object.kind === "RoleBinding")
        .map((object) => `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`),
    );
    expect(roleNames).toEqual([
      ["Role metal3/bmh-labels-tenant-a.edge-sip", "RoleBinding metal3/bmh-labels-tenant-a.edge-sip"],
      ["Role metal3/bmh-labels-tenant.a-edge-sip", "RoleBinding metal3/bmh-labels-tenant.a-edge-sip"],
    ]);
  });
});

/**
 * The label script run by `/bin/sh` against a stand-in `kubectl` on PATH that knows some hosts,
 * fails for others, and records every call.
 */
describe("LABEL_SCRIPT", () => {
  const scratch = mkdtempSync(path.join(tmpdir(), "bmh-labels-script-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const calls = path.join(scratch, "calls");
  // get: prints the name of a host listed in $HOSTS, nothing for another, fails for one in $BROKEN.
  writeFileSync(
    path.join(scratch, "kubectl"),
    `#!/bin/sh
echo "$*" >> "$CALLS"
verb=$1 host=$3
case " $BROKEN " in *" $host "*) echo "error: the server is unreachable" >&2; exit 1;; esac
if [ "$verb" = get ]; then
  case " $HOSTS " in *" $host "*) echo "baremetalhost.metal3.io/$host";; esac
fi
exit 0
`,
  );
  chmodSync(path.join(scratch, "kubectl"), 0o755);

  function run(args: string[], hosts: string, broken = "") {
    rmSync(calls, { force: true });
    const result = spawnSync("/bin/sh", ["-c", LABEL_SCRIPT, "bmh-labels", ...args], {
      encoding: "utf8",
      env: { PATH: `${scratch}:/usr/bin:/bin`, CALLS: calls, HOSTS: hosts, BROKEN: broken },
    });
    const labelled = readFileSync(calls, "utf8")
      .split("\n")
      .filter((line) => line.startsWith("label "))
      .map((line) => line.split(" ")[2]);
    return { code: result.status, stderr: result.stderr, labelled };
  }

  const labels = ["sip.airshipit.org/node-type=Worker", "metalsynth.io/cluster-"];

  it.each([
    ["every host there", "a b c", "", 0, ["a", "b", "c"], []],
    ["one host deleted since the snapshot", "a c", "", MISSING_HOST_EXIT_CODE, ["a", "c"], ["b"]],
    ["every host gone", "", "", MISSING_HOST_EXIT_CODE, [], ["a", "b", "c"]],
    ["the API server failing for one host: retried, not called missing", "a b c", "b", 1, ["a", "c"], []],
    ["a failure and a missing host: retried", "a", "b", 1, ["a"], ["c"]],
  ])("%s", (_, present, broken, code, labelled, missing) => {
    const result = run(["metal3", "a", "b", "c", "--", ...labels], present, broken);
    expect(result.code).toBe(code);
    expect(result.labelled).toEqual(labelled);
    for (const host of missing) {
      expect(result.stderr).toContain(
        `BareMetalHost metal3/${host} not found: not labelled; deleted since the inventory snapshot?`,
      );
    }
    expect(result.stderr.match(/not found/g) ?? []).toHaveLength(missing.length);
  });

  it("passes the label arguments through untouched, and never expands a host name as a pattern", () => {
    rmSync(calls, { force: true });
    writeFileSync(path.join(scratch, "a1"), "");
    const result = spawnSync("/bin/sh", ["-c", LABEL_SCRIPT, "bmh-labels", "metal3", "a*", "--", ...labels], {
      encoding: "utf8",
      cwd: scratch,
      env: { PATH: `${scratch}:/usr/bin:/bin`, CALLS: calls, HOSTS: "a*", BROKEN: "" },
    });
    expect(result.status).toBe(0);
    expect(readFileSync(calls, "utf8")).toContain(
      `label baremetalhost a* ${labels.join(" ")} --overwrite --namespace=metal3 --cache-dir=/tmp/kube-cache`,
    );
  });
});
