/**
 * The first index of `[from, to)` at which `before` is false, for a `before` that is true up to some
 * index and false from there on (a sorted list asked "does this come before what I look for?"); `to`
 * when it never is. Every sorted search of synth/ is this one loop, so each caller says only what
 * "before" means for its list.
 */
export function lowerBound(from: number, to: number, before: (index: number) => boolean): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}
