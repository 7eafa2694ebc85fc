import { ApiObject, App, Chart, type ApiObjectProps, type JsonPatch } from "cdk8s";
import type { Construct, IConstruct } from "constructs";
import { isRecord } from "../synth/inventory/raw.ts";

/**
 * A cdk8s `ApiObject` given as Kubernetes JSON: a literal, or the manifest cdk8s-plus's generated
 * `KubeXxx.manifest(props)` converts the typed props to, once (a `KubeXxx` construct converts them
 * again on every synthesis).
 *
 * Synthesised, it is what cdk8s's own `toJson` gives, byte for byte: `resolve` (tokens), then
 * `sanitizeValue` (keys sorted, nulls dropped), then `apiVersion`, `kind` and `metadata` first. But
 * when the data is plain JSON, as everything metalsynth renders is, there is nothing to resolve:
 * `resolve` walks every value with three resolvers and copies the tree, `sanitizeValue` copies it
 * again, and the two were a third of a large site's render (decision 0057). So plain data is
 * cleaned and sorted in one walk ({@link plainJson}); anything else (a `Lazy`, a `Quantity`, an
 * object with a `resolve` method, an App with resolvers of its own, a JSON patch) takes cdk8s's way.
 * `charts/kube-object.test.ts` holds the two to the same output.
 */
export class KubeObject extends ApiObject {
  readonly #manifest: ApiObjectProps;
  #patched = false;

  constructor(scope: Construct, id: string, manifest: ApiObjectProps) {
    super(scope, id, manifest);
    this.#manifest = manifest;
  }

  /**
   * Whether `value` is a KubeObject. Not `instanceof`: cdk8s's `ApiObject[Symbol.hasInstance]`,
   * which subclasses inherit, answers true for any API object.
   */
  static isKubeObject(value: unknown): value is KubeObject {
    return typeof value === "object" && value !== null && #manifest in value;
  }

  override addJsonPatch(...ops: JsonPatch[]): void {
    this.#patched = true;
    super.addJsonPatch(...ops);
  }

  override toJson(): Record<string, unknown> {
    return this.plainObject() ?? (super.toJson() as Record<string, unknown>);
  }

  /**
   * What `toJson` gives, synthesised in one walk, with keys sorted at every level; undefined when the
   * data is not plain JSON (or the object has patches, or its App has resolvers of its own), which
   * only cdk8s's own synthesis can render.
   */
  plainObject(): Record<string, unknown> | undefined {
    if (this.#patched || !onlyBuiltInResolvers(this)) return undefined;
    const data = plainJson({ ...this.#manifest, metadata: this.metadata.toJson() as unknown });
    return isRecord(data) ? topLevelFirst(data) : undefined;
  }
}

/** How many resolvers every cdk8s App has (lazy values, implicit tokens, number-or-string unions). */
const BUILT_IN_RESOLVERS = 3;

/** Whether the object's App resolves only what cdk8s itself does, which plain data never meets. */
function onlyBuiltInResolvers(object: IConstruct): boolean {
  const app = App.of(object);
  return app instanceof App && app.resolvers.length === BUILT_IN_RESOLVERS;
}

/** Thrown inside {@link plainJson} at the first value cdk8s would have to resolve. */
const NOT_PLAIN = Symbol("not plain");

/**
 * `value` as cdk8s's `sanitizeValue(resolve(value))` gives it when `value` is plain JSON: object keys
 * sorted, null and undefined members dropped, nulls in arrays undefined. Undefined for a value with
 * anything cdk8s resolves or refuses: a function, a symbol, a bigint, an instance of a class.
 */
export function plainJson(value: unknown): unknown {
  try {
    return clean(value);
  } catch (error) {
    if (error === NOT_PLAIN) return undefined;
    throw error;
  }
}

function clean(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
      return value;
    case "undefined":
      return undefined;
    case "object":
      break;
    default:
      throw NOT_PLAIN;
  }
  if (value === null) return undefined;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) return (value as unknown[]).map(clean);
  if (prototype !== Object.prototype) throw NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  // Already sorted, as most literals are not; sorting a sorted list is cheap either way.
  keys.sort();
  const result: Record<string, unknown> = {};
  for (const key of keys) {
    const item = clean(record[key]);
    if (item !== undefined && item !== null) result[key] = item;
  }
  return result;
}

/**
 * `apiVersion`, `kind` and `metadata` first, then the rest in order, as both cdk8s and
 * {@link objectsOf} put an object's top-level keys (a key the object lacks is left out).
 */
function topLevelFirst(data: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of ["apiVersion", "kind", "metadata", ...Object.keys(data)])
    if (key in data) result[key] = data[key];
  return result;
}

/**
 * A chart's objects as plain JSON with a fixed key order: `apiVersion`, `kind`, `metadata`, then
 * the rest sorted at every level. cdk8s sorts keys too, unless CDK8S_DISABLE_SORT is set; rendered
 * output must not depend on the environment (docs/contract.md §3.4).
 *
 * The objects are those `chart.toJson()` synthesises, in its order, without its App-wide work:
 * cdk8s infers dependencies between every construct of the App and validates them all again for
 * each chart, then orders the chart's objects topologically. A chart whose constructs declare no
 * dependency, nest no chart and fail no validation is ordered as it was built (the topology of a
 * graph without edges), so its objects are taken in that order and each synthesised on its own;
 * any other chart goes through `chart.toJson()` (decision 0057).
 */
export function objectsOf(chart: Chart): unknown[] {
  const objects = independentObjects(chart);
  if (objects === undefined) return chart.toJson().map((object: unknown) => sortedObject(object));
  return objects.map(
    (object) =>
      (KubeObject.isKubeObject(object) ? object.plainObject() : undefined) ?? sortedObject(object.toJson()),
  );
}

/**
 * The API objects of `chart` in construction order (their closest chart), or undefined when cdk8s
 * could order them otherwise or would refuse the App: a construct with a dependency or a failed
 * validation, a nested chart, or a construct path that an object's keys would reorder.
 */
function independentObjects(chart: Chart): ApiObject[] | undefined {
  const objects: ApiObject[] = [];
  for (const construct of chart.node.findAll()) {
    const { node } = construct;
    if (node.dependencies.length > 0 || node.validate().length > 0) return undefined;
    if (construct !== chart && Chart.isChart(construct)) return undefined;
    if (/^(0|[1-9]\d*)$/.test(node.path)) return undefined;
    if (ApiObject.isApiObject(construct)) objects.push(construct);
  }
  return objects;
}

/** `object` with keys sorted at every level and `apiVersion`, `kind` and `metadata` first. */
function sortedObject(object: unknown): unknown {
  const sorted = sortKeys(object);
  if (!isRecord(sorted)) return sorted;
  const { apiVersion, kind, metadata, ...rest } = sorted;
  return { apiVersion, kind, metadata, ...rest };
}

/**
 * `value` with keys sorted at every level. cdk8s has sorted most of them already (its generated
 * converters rebuild some objects in field order), so a subtree whose keys are in order is returned
 * as it is rather than copied.
 */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(sortKeys);
    return items.every((item, index) => item === value[index]) ? value : items;
  }
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  let same = keys.every((key, index) => index === 0 || keys[index - 1]! <= key);
  const sorted = same ? keys : [...keys].sort();
  const values = sorted.map((key) => {
    const item = sortKeys(value[key]);
    if (item !== value[key]) same = false;
    return item;
  });
  return same ? value : Object.fromEntries(sorted.map((key, index) => [key, values[index]]));
}
