import type { Host } from "../inventory/host.ts";
import type { BestFit } from "../inventory/inventory.ts";

/** What a turn's placement asks of its best-fit candidates. */
export type Candidates = Pick<BestFit, "take" | "fitting">;

/**
 * One turn's best-fit candidates: `base`'s walk with `extra` (hosts kept out of `base`, sorted by
 * best-fit rank) merged in, without the hosts the turn took or an earlier turn claimed. A turn placed
 * again on its own (`replan.ts`) walks the trace's base, which serves every review, so what it takes
 * is kept here only; a whole site's run (`plan-site.ts`) shares its base with the turns after, so
 * `takesFromBase` takes them out of it too.
 */
export class MergedCandidates implements Candidates {
  readonly #taken = new Set<string>();

  constructor(
    private readonly base: BestFit,
    private readonly extra: readonly Host[],
    private readonly rank: (host: Host) => number,
    /** Claimed by an earlier turn: no candidate (see `TurnSetting.bestFit`). */
    private readonly claimedEarlier: (host: Host) => boolean,
    private readonly options: { readonly takesFromBase: boolean },
  ) {}

  take(host: Host): void {
    this.#taken.add(host.id);
    if (this.options.takesFromBase) this.base.take(host);
  }

  #offered(host: Host): boolean {
    return !this.#taken.has(host.id) && !this.claimedEarlier(host);
  }

  *fitting(minCpus = 0, minMemoryBytes = 0, scanned?: (from: number, to: number) => void): Generator<Host> {
    const fits = (host: Host) => (host.cpus ?? 0) >= minCpus && (host.memoryBytes ?? 0) >= minMemoryBytes;
    const extra = this.extra.filter(fits);
    let next = 0;
    for (const host of this.base.fitting(minCpus, minMemoryBytes, scanned)) {
      for (; next < extra.length && this.rank(extra[next]!) < this.rank(host); next++) {
        if (this.#offered(extra[next]!)) yield extra[next]!;
      }
      if (this.#offered(host)) yield host;
    }
    for (; next < extra.length; next++) if (this.#offered(extra[next]!)) yield extra[next]!;
  }
}
