/**
 * The one view a turn plans through (docs/contract.md §3, §8): every read of the inventory, of the
 * claims made before the turn and of its best-fit candidates passes here and is recorded, together
 * with the host facts the turn's filters declare. A change planned later asks the trace's
 * {@link ReadIndex} (`read-index.ts`) which turns read what it changed; nothing else in planning
 * keeps a list of what a turn depends on, so a new filter or a new read cannot be forgotten there.
 */
import type { ClusterKey } from "../../cluster-key.ts";
import type { Host } from "../../inventory/host.ts";
import { EVERY_HOST_FACT, HOST_FACTS, type HostFacts } from "../../inventory/host-facts.ts";
import type { Inventory } from "../../inventory/inventory.ts";
import type { LabelSelector } from "../../inventory/selector.ts";
// eslint-disable-next-line no-restricted-imports -- the recording view is where plan/ judges hosts.
import { rejection } from "../../rules/filters.ts";
import type { HostFilter, Rejection } from "../../rules/filters/plugin.ts";
import type { StandingClaim } from "../claim-ledger.ts";
import type { Candidates, PlanningInventory } from "../context.ts";

/**
 * What a turn read: hosts it looked up by themselves (every fact of them), the best-fit positions
 * it walked (`[from, to]`, ends included), how far it walked a selector's matches in id order, whose
 * matches it asked for, whether it walked the hosts of unknown size, and `all` when it read nearly
 * every host (a `no-fit` counts every host's reason). Of the hosts its walks passed it read
 * `facts`: their claims, what decided which hosts a walk met (their hardware for best-fit order,
 * their labels for a selector), and what its filters declare.
 */
export interface Reads {
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly (readonly [number, number])[];
  readonly walks: readonly SelectorWalk[];
  /** Selectors whose matches the turn listed: it read the labels of every host they match. */
  readonly matches: readonly LabelSelector[];
  readonly unsized: boolean;
  readonly all: boolean;
  readonly facts: HostFacts;
}

/**
 * A walk over the hosts a selector matches, in id order, up to `last` (included), or over all of
 * them. A turn placed again skips hosts it knows to be held (`TurnSetting.openMatches`) without
 * looking them up, so only the walk says it passed them.
 */
export interface SelectorWalk {
  readonly selector: LabelSelector;
  readonly last?: string;
}

/**
 * More hosts read than this share of the inventory counts as reading all of them: a `no-fit`
 * explains itself with every host's reason, and a set of every host per such turn would cost more
 * than re-placing the turn whenever anything changes.
 */
const ALL_READ_SHARE = 0.25;

/**
 * One turn's recording view of the inventory, the claims before it and its best-fit candidates.
 * Recording stops with {@link finish}: an explanation computed later (`metalsynth explain`) reads
 * the same answers, unrecorded.
 */
export class TurnReads implements PlanningInventory, Candidates {
  // Made on the first read of each kind: most turns read few kinds, and a review records nothing.
  #hosts: Set<string> | undefined;
  #ranges: [number, number][] | undefined;
  #walks: SelectorWalk[] | undefined;
  #matches: LabelSelector[] | undefined;
  #unsized = false;
  #all = false;
  #facts: HostFacts = HOST_FACTS.claim;
  #recording: boolean;

  /**
   * `claimBefore`: who holds a host before the turn (the run's `ClaimsBefore`, which keeps the last
   * answer). `records`: false for a turn whose reads no one keeps, which then records nothing.
   */
  constructor(
    private readonly inventory: Inventory,
    private readonly candidates: Candidates,
    private readonly claimBefore: (host: Host) => StandingClaim | undefined,
    private readonly openOf:
      ((hosts: readonly Host[], selector: LabelSelector) => Iterable<Host>) | undefined,
    records: boolean,
  ) {
    this.#recording = records;
  }

  /** The claim on `host` made before the turn: looking it up reads the host. */
  claimOf(host: Host): StandingClaim | undefined {
    this.#lookedUp(host);
    return this.claimBefore(host);
  }

  byId(id: string): Host | undefined {
    return this.#lookedUp(this.inventory.byId(id));
  }

  byMac(mac: string): Host | undefined {
    return this.#lookedUp(this.inventory.byMac(mac));
  }

  /** The MAC nearest to `mac`: a search of every host's MACs. */
  closestMac(mac: string): ReturnType<Inventory["closestMac"]> {
    this.#readAll();
    return this.inventory.closestMac(mac);
  }

  /**
   * The set-aside host of a lock entry whose host the inventory lost. Not recorded: a host joining or
   * leaving the inventory reaches the clusters whose lock entries name it without any turn's reads.
   */
  setAsideById(id: string): ReturnType<Inventory["setAsideById"]> {
    return this.inventory.setAsideById(id);
  }

  /** The set-aside host with `mac`, for a `mac-unknown` finding: rare, so counted as reading every host. */
  setAsideByMac(mac: string): ReturnType<Inventory["setAsideByMac"]> {
    this.#readAll();
    return this.inventory.setAsideByMac(mac);
  }

  get hosts(): readonly Host[] {
    this.#readAll();
    return this.inventory.hosts;
  }

  get size(): number {
    this.#readAll();
    return this.inventory.size;
  }

  matching(selector: LabelSelector): readonly Host[] {
    if (this.#recording) (this.#matches ??= []).push(selector);
    return this.inventory.matching(selector);
  }

  ownedBySip(cluster: ClusterKey): readonly Host[] {
    const hosts = this.inventory.ownedBySip(cluster);
    for (const host of hosts) this.#lookedUp(host);
    return hosts;
  }

  /** Asked for by a best-fit walk only past every sized host. */
  withUnknownResources(): readonly Host[] {
    if (this.#recording) {
      this.#unsized = true;
      // Which hosts these are is their hardware (no CPUs or memory known).
      this.#facts |= HOST_FACTS.hardware;
    }
    return this.inventory.withUnknownResources();
  }

  /** Takes `host` out of the turn's best-fit candidates. */
  take(host: Host): void {
    this.candidates.take(host);
  }

  /** The turn's best-fit walk (`BestFit.firstFitting`), recorded as the range of positions it passed. */
  firstFitting(
    minCpus: number,
    minMemoryBytes: number,
    accepts: (host: Host, rank: number) => boolean,
  ): Host | undefined {
    // Made on the first recorded walk: a review's turns record nothing.
    const scanned = this.#recording ? (this.#scanned ??= (from, to) => this.#walked(from, to)) : undefined;
    return this.candidates.firstFitting(minCpus, minMemoryBytes, accepts, scanned);
  }

  #scanned: ((from: number, to: number) => void) | undefined;

  /** Records a walk over `from`…`to`; handed to a walk only while the turn records. */
  #walked(from: number, to: number): void {
    (this.#ranges ??= []).push([from, to]);
    // Best-fit order is the hosts' hardware: a host that grew or shrank moves in or out of the
    // range walked, whatever the entry asked for (even nothing).
    this.#facts |= HOST_FACTS.hardware;
  }

  /** See `PlanningContext.openMatches`; the walk records where it stopped. */
  openMatches(hosts: readonly Host[], selector: LabelSelector): Iterable<Host> {
    return walked(this.openOf?.(hosts, selector) ?? hosts, (last) => {
      if (!this.#recording) return;
      (this.#walks ??= []).push({ selector, ...(last !== undefined && { last }) });
      // Which hosts a selector walks is their labels.
      this.#facts |= HOST_FACTS.labels;
    });
  }

  /** The first of `filters` to reject `host`; the turn has read the facts every one declares. */
  rejection(filters: readonly HostFilter[], host: Host): Rejection | undefined {
    if (this.#recording) for (const filter of filters) this.#facts |= filter.reads;
    return rejection(filters, host);
  }

  /** Stops recording and gives what was read. */
  finish(): Reads {
    this.#recording = false;
    const all = this.#all || (this.#hosts?.size ?? 0) > this.inventory.size * ALL_READ_SHARE;
    return {
      hosts: all ? NO_IDS : (this.#hosts ?? NO_IDS),
      ranges: this.#ranges ?? [],
      walks: this.#walks ?? [],
      matches: this.#matches ?? [],
      unsized: this.#unsized,
      all,
      facts: all ? EVERY_HOST_FACT : this.#facts,
    };
  }

  #lookedUp(host: Host | undefined): Host | undefined {
    if (host !== undefined && this.#recording) (this.#hosts ??= new Set()).add(host.id);
    return host;
  }

  #readAll(): void {
    if (this.#recording) this.#all = true;
  }
}

const NO_IDS: ReadonlySet<string> = new Set();

/**
 * `hosts`, telling `ended` where the walk stopped: the id of the last host given out, or nothing
 * when every host was.
 */
function* walked(hosts: Iterable<Host>, ended: (last: string | undefined) => void): Generator<Host> {
  let last: string | undefined;
  let exhausted = false;
  try {
    for (const host of hosts) {
      last = host.id;
      yield host;
    }
    exhausted = true;
  } finally {
    ended(exhausted ? undefined : last);
  }
}
