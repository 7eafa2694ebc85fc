import { ApiObject, App, Chart, DependencyGraph, JsonPatch, Lazy, Testing } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import { afterEach, describe, expect, it } from "vitest";
import { toYamlStream } from "../synth/codec/yaml-output.ts";
import { clusterKey } from "../synth/cluster-key.ts";
import { EMPTY_LOCK } from "../synth/rules/lock.ts";
import { DEFAULT_SETTINGS } from "../synth/schema/settings.ts";
import { bpaPlan, testApp } from "../test/support/charts.ts";
import { sipHost, sipPlan } from "../test/support/sip.ts";
import { dnsLabel } from "../test/builders/inventory.ts";
import { KubeObject, objectsOf, plainJson } from "./kube-object.ts";
import { addSiteCharts } from "./site.ts";

/**
 * What cdk8s itself synthesises for `chart`: its objects in the order of its dependency graph, each
 * through `ApiObject`'s own `toJson` (resolve, then sanitize), with keys sorted as `objectsOf` sorts
 * them. The fast path must give exactly this.
 */
function cdk8sObjects(chart: Chart): unknown[] {
  return new DependencyGraph(chart.node)
    .topology()
    .filter((construct) => ApiObject.isApiObject(construct) && Chart.of(construct) === chart)
    .map((object) => sorted(ApiObject.prototype.toJson.call(object)));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  const { apiVersion, kind, metadata } = record;
  const first = apiVersion === undefined ? {} : { apiVersion, kind, metadata };
  return { ...first, ...Object.fromEntries(keys.map((key) => [key, sorted(record[key])])) };
}

/** A site of every chart metalsynth renders: BPA with Software, a SIPCluster with its services, a retired one. */
function everyChart(): Chart[] {
  const plan = {
    clusters: [bpaPlan({ namespace: "edge-sip", cluster: "tenant-a", masterSoftware: ["htop"] }), sipPlan()],
    retired: [
      {
        key: clusterKey("edge-sip", "tenant-old"),
        namespace: dnsLabel("edge-sip"),
        name: dnsLabel("tenant-old"),
        released: [sipHost("wk-9", "worker", "10.41.0.29")],
      },
    ],
    lock: EMPTY_LOCK,
    allocations: [],
    specs: [],
  };
  const { clusters, wiring } = addSiteCharts(plan, DEFAULT_SETTINGS, testApp);
  return [...clusters.flatMap((cluster) => [...cluster.files.values()]), ...wiring.values()];
}

describe("objectsOf", () => {
  afterEach(() => {
    delete process.env.CDK8S_DISABLE_SORT;
  });

  it.each(everyChart().map((chart) => [chart.node.id, chart] as const))(
    "gives %s byte for byte what cdk8s synthesises",
    (_id, chart) => {
      expect(toYamlStream(objectsOf(chart))).toBe(toYamlStream(cdk8sObjects(chart)));
    },
  );

  it("keeps cdk8s's order when objects depend on each other", () => {
    const chart = Testing.chart();
    const first = new KubeObject(chart, "a", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a" },
    });
    const second = new KubeObject(chart, "b", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "b" },
    });
    first.addDependency(second);
    expect(objectsOf(chart).map((object) => Reflect.get(Object(object), "metadata").name)).toEqual([
      "b",
      "a",
    ]);
  });

  it("sorts keys whatever CDK8S_DISABLE_SORT says", () => {
    process.env.CDK8S_DISABLE_SORT = "1";
    const chart = Testing.chart();
    new KubeObject(chart, "cm", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "x" },
      data: { b: "1", a: "2" },
    });
    expect(toYamlStream(objectsOf(chart))).toContain('data:\n  a: "2"\n  b: "1"\n');
  });
});

describe("KubeObject", () => {
  it("resolves what is not plain JSON as cdk8s does: lazy values, quantities, patches", () => {
    const chart = Testing.chart();
    new KubeObject(chart, "lazy", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "lazy" },
      data: { value: Lazy.any({ produce: () => "late" }) },
    });
    new KubeObject(chart, "quantity", {
      apiVersion: "v1",
      kind: "LimitRange",
      metadata: { name: "quantity" },
      spec: { limits: [{ type: "Container", max: { memory: k8s.Quantity.fromString("1Gi") } }] },
    });
    const patched = new KubeObject(chart, "patched", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "p" },
    });
    patched.addJsonPatch(JsonPatch.add("/data", { added: "yes" }));
    const objects = objectsOf(chart);
    expect(objects).toEqual(cdk8sObjects(chart));
    expect(JSON.stringify(objects)).toContain('"value":"late"');
    // cdk8s's number-or-string resolver turns a Quantity into `{value}`; its L1 converter unwraps it.
    expect(JSON.stringify(objects)).toContain('"memory":{"value":"1Gi"}');
    expect(JSON.stringify(objects)).toContain('"added":"yes"');
  });

  it("takes cdk8s's way in an App with resolvers of its own", () => {
    const app = new App({
      resolvers: [{ resolve: (context) => context.value === "x" && context.replaceValue("y") }],
    });
    const chart = new Chart(app, "c");
    new KubeObject(chart, "cm", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "n" },
      data: { k: "x" },
    });
    expect(objectsOf(chart)).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "n" }, data: { k: "y" } },
    ]);
  });

  it("is told from other API objects, which cdk8s's instanceof is not", () => {
    const chart = Testing.chart();
    const plain = new ApiObject(chart, "a", { apiVersion: "v1", kind: "ConfigMap" });
    const kube = new KubeObject(chart, "b", { apiVersion: "v1", kind: "ConfigMap" });
    expect(plain instanceof KubeObject).toBe(true); // ApiObject[Symbol.hasInstance]
    expect(KubeObject.isKubeObject(plain)).toBe(false);
    expect(KubeObject.isKubeObject(kube)).toBe(true);
  });
});

describe("plainJson", () => {
  it.each([
    [
      { b: 1, a: { d: null, c: [null, "x", undefined] } },
      { a: { c: [undefined, "x", undefined] }, b: 1 },
    ],
    [
      { empty: {}, none: [] },
      { empty: {}, none: [] },
    ],
    ["text", "text"],
    [null, undefined],
  ])("%j → %j", (value, expected) => {
    expect(plainJson(value)).toStrictEqual(expected);
  });

  it.each([[{ f: () => 1 }], [{ q: k8s.Quantity.fromString("1") }], [{ s: Symbol("s") }], [{ n: 1n }]])(
    "leaves %o to cdk8s",
    (value) => {
      expect(plainJson(value)).toBeUndefined();
    },
  );
});
