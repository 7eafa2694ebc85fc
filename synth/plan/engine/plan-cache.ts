import type { Derived, PlanCache } from "../../model/plan-cache.ts";

/**
 * A new {@link PlanCache}. A trace planned from another keeps the cache of the trace it came from
 * (`replan.ts`): its keys are the same immutable CRs and hosts, and a key no plan holds any more
 * lets its value go.
 */
export function planCache(): PlanCache {
  return new DerivedValues();
}

/** The values of each {@link Derived}, by key. */
class DerivedValues implements PlanCache {
  /** Derived → key → value; the value's type is the derived's, which one map cannot say. */
  readonly #byDerived = new Map<object, WeakMap<object, unknown>>();

  get<K extends object, V>(derived: Derived<K, V>, key: K): V {
    let values = this.#byDerived.get(derived);
    if (values === undefined) this.#byDerived.set(derived, (values = new WeakMap()));
    const known = values.get(key);
    // Derived values are never undefined: one lookup for a value derived before.
    if (known !== undefined) return known as V;
    const value = derived.derive(key);
    values.set(key, value);
    return value;
  }
}
