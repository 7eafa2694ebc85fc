import { describe, expect, it } from "vitest";
import { makeInventory } from "../test/builders/inventory.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import { readResources } from "../synth/site/resources.ts";
import type { AnyResource } from "../synth/model/resource.ts";
import { provisioning, software } from "../test/builders/reviews.ts";
import { SiteReviewer, knownResources, objectDocument } from "./site-review.ts";

const inventory = makeInventory(
  ["01", "02", "03", "04"].map((suffix) => ({
    name: `node-${suffix}`,
    nics: [{ name: "eno1", mac: `00:00:00:00:00:${suffix}`, ipv4: `10.0.0.${Number(suffix)}` }],
    ...(suffix === "04" ? { provisioningState: "inspecting" } : {}),
  })),
);

function read(...objects: object[]) {
  return readResources(
    objects.map((object, index) => ({ ...objectDocument(object, `site-${index}`), index })),
  );
}

function resources(...objects: object[]): AnyResource[] {
  return read(...objects).resources;
}

const east = provisioning({
  name: "cluster-east",
  masters: [["master-1", { "mac-address": "00:00:00:00:00:01" }]],
});
/** A CR of the site that is broken on its own: its MAC is nobody's. */
const broken = provisioning({
  name: "cluster-broken",
  masters: [["master-1", { "mac-address": "00:00:00:00:00:99" }]],
});

describe("SiteReviewer", () => {
  const reviewer = new SiteReviewer({ inventory, resources: resources(east, broken), lock: EMPTY_LOCK });

  it("does not blame the object under review for what other CRs of the site get wrong", () => {
    const fine = provisioning({
      name: "cluster-west",
      masters: [["master-1", { "mac-address": "00:00:00:00:00:02" }]],
    });
    expect(reviewer.review(fine)).toEqual([]);
  });

  it("replaces the known object of the same kind, namespace and name", () => {
    expect(reviewer.review(east)).toEqual([]);
    const moved = provisioning({
      name: "cluster-east",
      masters: [["master-1", { "mac-address": "00:00:00:00:00:03" }]],
    });
    expect(reviewer.review(moved)).toEqual([]);
    // Fixing the broken CR is judged on the fix alone.
    expect(
      reviewer.review(
        provisioning({ name: "cluster-broken", masters: [["m", { "mac-address": "00:00:00:00:00:02" }]] }),
      ),
    ).toEqual([]);
  });

  it("reports the errors it causes on other CRs, naming them, but not their warnings", () => {
    const taker = provisioning({
      name: "cluster-a",
      masters: [["master-1", { "mac-address": "00:00:00:00:00:01" }]],
    });
    expect(reviewer.review(taker)).toEqual([
      {
        rule: "host-claimed",
        severity: "error",
        text: "Provisioning edge-a/cluster-east spec.masters[0].master-1.mac-address: host metal3/node-01 (00:00:00:00:00:01) is already requested by mac-address for cluster edge-a/cluster-a in Provisioning edge-a/cluster-a; a host belongs to at most one cluster",
      },
    ]);
  });

  it("reports its own findings in path order, warnings included", () => {
    const own = provisioning({
      name: "cluster-z",
      masters: [
        ["master-1", { "mac-address": "00:00:00:00:00:04" }],
        ["master-2", { "mac-address": "00:00:00:00:00:01" }],
      ],
    });
    expect(
      reviewer.review(own).map((found) => `${found.severity} ${found.rule} ${found.text.split(":")[0]}`),
    ).toEqual([
      "warning host-not-ready spec.masters[0].master-1",
      "error host-claimed spec.masters[1].master-2.mac-address",
    ]);
  });

  it("reports schema findings of an object the rules can't read", () => {
    const typo = { ...east, spec: { masters: [{ "master-1": { "mac-adress": "00:00:00:00:00:01" } }] } };
    expect(reviewer.review(typo)).toEqual([
      expect.objectContaining({
        rule: "schema",
        text: expect.stringMatching(/^spec\.masters\[0\]\.master-1\.mac-adress: unknown field/),
      }),
    ]);
  });
});

describe("SiteReviewer with a known CR that fails its schema", () => {
  /** Provisioning `cluster-north` with a misspelt field: the site reports it, the rules can't read it. */
  const typo = provisioning({
    name: "cluster-north",
    masters: [["master-1", { "mac-adress": "00:00:00:00:00:02" }]],
  });
  const site = read(east, typo);
  const reviewer = new SiteReviewer({
    inventory,
    resources: site.resources,
    invalid: site.invalid,
    lock: EMPTY_LOCK,
  });

  it("does not tell a Software that the cluster's Provisioning is missing", () => {
    expect(site.invalid).toEqual([
      { kind: "Provisioning", namespace: "edge-a", name: "cluster-north", cluster: "cluster-north" },
    ]);
    expect(reviewer.review(software({ cluster: "cluster-north" }))).toEqual([]);
    // Without knowing of the invalid CR, the review would blame the Software for it.
    expect(
      new SiteReviewer({ inventory, resources: site.resources, lock: EMPTY_LOCK }).review(
        software({ cluster: "cluster-north" }),
      ),
    ).toEqual([
      {
        rule: "cluster-ref",
        severity: "warning",
        text: "metadata.labels.cluster: no Provisioning for cluster edge-a/cluster-north: Software installs on a cluster's hosts, so the cluster must be provisioned here (not refused: it may be applied next)",
      },
    ]);
    // A cluster nothing is known of still is reported.
    expect(reviewer.review(software({ cluster: "cluster-nowhere" })).map((found) => found.rule)).toEqual([
      "cluster-ref",
    ]);
  });

  it("judges a fix of the invalid CR on the fix alone, not on what the invalid one said", () => {
    const north = read(east, typo, software({ cluster: "cluster-north" }));
    const withSoftware = new SiteReviewer({
      inventory,
      resources: north.resources,
      invalid: north.invalid,
      lock: EMPTY_LOCK,
    });
    const fixed = provisioning({
      name: "cluster-north",
      masters: [["master-1", { "mac-address": "00:00:00:00:00:02" }]],
    });
    expect(withSoftware.review(fixed)).toEqual([]);
    // The fix moves to another cluster label: the Software of cluster-north now lacks its Provisioning.
    const relabelled = { ...fixed, metadata: { ...fixed.metadata, labels: { cluster: "cluster-south" } } };
    expect(withSoftware.review(relabelled).map((found) => found.text.split(":")[0])).toEqual([
      "Software edge-a/cluster-north-software metadata.labels.cluster",
    ]);
  });
});

describe("knownResources", () => {
  it("takes the cluster's copy of an object both know, sorted by key", () => {
    const fromSite = resources(east, broken);
    const fromCluster = resources({ ...east, metadata: { ...east.metadata, labels: { cluster: "other" } } });
    const known = knownResources(fromSite, fromCluster);
    expect(known.map((resource) => resource.key)).toEqual([
      "Provisioning/edge-a/cluster-broken",
      "Provisioning/edge-a/cluster-east",
    ]);
    expect(known[1]?.object.metadata.labels?.cluster).toBe("other");
  });
});

describe("objectDocument", () => {
  it("makes a document of the value whose every path points at the object's origin", () => {
    const value = { a: 1 };
    const document = objectDocument(value, "cluster");
    expect(document).toMatchObject({ file: "cluster", index: 0 });
    expect(document.value).toBe(value);
    for (const path of [[], ["spec", "x"], ["items", 3]]) {
      expect(document.position(path)).toEqual({ file: "cluster", line: 1, column: 1 });
    }
  });
});
