/**
 * Allocations at the door (decision 0056): the site's trust (namespaces, the managers that wrote the
 * spec) and the lock file's checks refuse; a host another Allocation lists only warns.
 */
import { describe, expect, it } from "vitest";
import { allocation } from "../test/builders/allocations.ts";
import { AllocationReviewer } from "./allocation-review.ts";
import { DEFAULT_ALLOCATION_TRUST, distrust, specManagers } from "./allocation-trust.ts";

const trust = { ...DEFAULT_ALLOCATION_TRUST, namespaces: ["edge-a"] };
const lock = {
  entries: [
    { kind: "bpa", cluster: "edge-a/east", host: "metal3/node-01", role: "master", node: "master-1" },
  ],
} as const;
const reviewer = new AllocationReviewer(lock as never, trust);

/** `object` with managed fields: each manager owning `spec` (`true`) or only metadata. */
function managedBy(object: ReturnType<typeof allocation>, managers: Record<string, boolean>) {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      managedFields: Object.entries(managers).map(([manager, spec]) => ({
        manager,
        operation: "Update",
        fieldsV1: spec ? { "f:spec": { "f:hosts": {} } } : { "f:metadata": { "f:labels": {} } },
      })),
    },
  };
}

const west = (role = "master", host = "metal3/node-02") =>
  allocation("edge-a", "west", "bpa", [{ host, role, node: "master-1" }]);

describe("the Allocation endpoint", () => {
  it("admits a sound Allocation of the site, written by the GitOps agents", () => {
    expect(
      reviewer.review(managedBy(west(), { "kustomize-controller": true, "kubectl-label": false })),
    ).toEqual([]);
  });

  it.each([
    [
      "outside the declared namespaces",
      allocation("default", "west", "bpa", [{ host: "metal3/node-02", role: "master", node: "master-1" }]),
      "Allocation default/west is not the site's: it is in namespace \"default\", and the site's Allocations are in edge-a only; Allocations are rendered by metalsynth from Git's lock and applied by the GitOps agents",
    ],
    [
      "whose spec a hand edit wrote",
      managedBy(west(), { "kustomize-controller": true, "kubectl-edit": true }),
      "Allocation edge-a/west is not the site's: its spec was written by \"kubectl-edit\", not by the managers that apply Git (kustomize-controller, argocd-controller, kubectl-client-side-apply); Allocations are rendered by metalsynth from Git's lock and applied by the GitOps agents",
    ],
  ])("refuses an Allocation %s", (_case, object, text) => {
    expect(reviewer.review(object)).toEqual([{ rule: "lock-invalid", severity: "error", text }]);
  });

  it("refuses a damaged Allocation with the finding the webhook logs", () => {
    const findings = reviewer.review(west("mastr"));
    expect(findings).toEqual([
      {
        rule: "lock-invalid",
        severity: "error",
        text: expect.stringMatching(
          /^error\[lock-invalid\] Allocation\/edge-a\/west\.spec\.hosts\[0\]\.role: .*"mastr"/,
        ),
      },
    ]);
  });

  it("warns, and admits, an Allocation listing a host another lists: a sync in the other order", () => {
    expect(reviewer.review(west("master", "metal3/node-01"))).toEqual([
      {
        rule: "lock-invalid",
        severity: "warning",
        text: "spec.hosts: metal3/node-01 is also allocated by Allocation edge-a/east: no new node gets it until one of the two no longer lists it (the directory that frees it has not synced yet)",
      },
    ]);
  });
});

describe("the site's trust", () => {
  it("reads the managers of the spec, not of the metadata", () => {
    const object = managedBy(west(), { "argocd-controller": true, "kubectl-annotate": false });
    expect(specManagers(object)).toEqual(["argocd-controller"]);
    expect(distrust(object, trust)).toBeUndefined();
  });

  it("trusts every namespace when none is declared, and judges an object without managed fields by its namespace", () => {
    expect(distrust(allocation("anywhere", "x", "bpa", []), DEFAULT_ALLOCATION_TRUST)).toBeUndefined();
    expect(distrust(allocation("anywhere", "x", "bpa", []), trust)).toMatch(/namespace "anywhere"/);
  });
});
