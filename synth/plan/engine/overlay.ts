/**
 * A map as `base` with the keys of `replaced` replaced by what `now` finds for them (or removed,
 * where it finds nothing). Lookups cost what the base's do, whatever its size; only iterating (a
 * whole plan) builds the merged map.
 */
export class Overlay<K, V> implements ReadonlyMap<K, V> {
  #merged: Map<K, V> | undefined;

  constructor(
    private readonly base: ReadonlyMap<K, V>,
    private readonly replaced: ReadonlySet<K> | ReadonlyMap<K, unknown>,
    private readonly now: (key: K) => V | undefined,
  ) {}

  get(key: K): V | undefined {
    return this.replaced.has(key) ? this.now(key) : this.base.get(key);
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    return this.#merge().size;
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    this.#merge().forEach((value, key) => callback(value, key, this));
  }

  entries(): MapIterator<[K, V]> {
    return this.#merge().entries();
  }

  keys(): MapIterator<K> {
    return this.#merge().keys();
  }

  values(): MapIterator<V> {
    return this.#merge().values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  #merge(): Map<K, V> {
    if (this.#merged === undefined) {
      this.#merged = new Map(this.base);
      for (const key of this.replaced.keys()) {
        const value = this.now(key);
        if (value === undefined) this.#merged.delete(key);
        else this.#merged.set(key, value);
      }
    }
    return this.#merged;
  }
}
