/**
 * Planning a change to a few clusters again, starting from a whole site's {@link PlanTrace}, at the
 * cost of what the change can reach rather than of the site (the webhook reviews one CR this way,
 * docs/contract.md §8). The answer is the one a full run on the changed site gives; `replan.test.ts` checks that
 * over random sites and changes.
 *
 * 1. Fixed claims are a function of each host's lock entries and MAC entries and of which clusters
 *    are live, so they are fixed again only for the hosts the changed clusters name, from only the
 *    entries that concern those hosts.
 * 2. Turns run in planning order. A turn is placed again when it is a changed cluster's, or when a
 *    host it read (see {@link Reads}) is claimed differently before its turn than it was; its new
 *    claims may in turn reach later turns. Every other turn's outcome stands.
 *
 * A change of BareMetalHosts (`replanInventory`) is planned the same way, from the turns that read
 * the changed hosts and the clusters whose MACs, lock entries or SIP labels name them.
 */
import { parseClusterKey, type ClusterKey } from "../cluster-key.ts";
import { pushTo } from "../group.ts";
import { compareText, type Issue } from "../issue.ts";
import { sipOwnerKey, type Host } from "../inventory/host.ts";
import type { BestFit, Inventory } from "../inventory/inventory.ts";
import { matchesSelector, type LabelSelector } from "../inventory/selector.ts";
import type { SipCluster } from "../model/sip.ts";
import { macNamedHosts, type BpaGroup, type ProvisionedGroup } from "./bpa-placement.ts";
import type { StandingClaim } from "./claim-ledger.ts";
import { fixClaims, type FixedClaims } from "./fixed-claims.ts";
import type { Lock, LockEntry } from "../model/lock.ts";
import { MergedCandidates, mergeById, type Candidates, type RankedHosts } from "./merged-candidates.ts";
import { assemble, type PlanClusters, type PlanTrace } from "./plan-site.ts";
import { compareTurns, placeTurn, type Turn, type TurnOutcome, type TurnWork } from "./turns.ts";

/** A changed cluster: what the site now has under its key (nothing, when it left the site). */
export interface ClusterChange {
  readonly bpa?: BpaGroup;
  readonly sip?: SipCluster;
}

/** The outcome of planning a change: what differs from the trace, and the whole plan on request. */
export interface Replanned {
  /** The `host-claimed` errors of every host whose fixed claims were fixed again. */
  readonly fixedIssues: readonly Issue[];
  /** The turns placed again or anew, in planning order (a turn that no longer exists is absent). */
  readonly placed: readonly TurnOutcome[];
  /**
   * The changed site's whole trace, as `tracePlan` gives it: what the next change starts from.
   * Assembling it costs the site (no placing: every turn not placed again is the trace's). The turns
   * placed again come without decisions: their explanations would read this run's claims, and keep
   * every trace before alive with them; `metalsynth explain` plans the whole site anyway.
   */
  complete(): PlanTrace;
}

/** Which turns read what, for one trace: built once, used by every change planned from it. */
export class TraceIndex {
  /** Host id → positions (in the trace's planning order) of the turns that looked it up. */
  readonly #readers = new Map<string, number[]>();
  readonly #ranges: { readonly from: number; readonly to: number; readonly turn: Turn }[] = [];
  /**
   * The best-fit ranges as a segment tree over ranks: node → positions of the turns whose range
   * covers the node's ranks, ascending. The turns whose range holds a rank are those of the nodes on
   * its leaf's path to the root, so a claim that moved costs the turns it reaches, not every range.
   */
  readonly #rangeTree = new Map<number, number[]>();
  /** Leaves of {@link #rangeTree}: one per best-fit rank. */
  readonly #leaves: number;
  readonly #readsAll: number[] = [];
  /**
   * The trace's selector walks, by selector (as JSON), sorted by where they stopped (walks over every
   * match last), so the walks that passed a host are a suffix found by binary search.
   */
  readonly #walks = new Map<
    string,
    { selector: LabelSelector; walks: { last?: string; position: number }[]; latest: number[] }
  >();
  /** Turn id → its position in the trace's turns (planning order). */
  readonly #positions = new Map<string, number>();
  /** Host id → positions in the lock; cluster → positions in the lock. */
  readonly #lockByHost = new Map<string, number[]>();
  readonly #lockByCluster = new Map<string, number[]>();
  /** Host id → the clusters whose MAC entries name it. */
  readonly #macUsers = new Map<string, Set<ClusterKey>>();
  /**
   * Best-fit candidates without any host the trace claimed: what a turn placed again walks, with
   * the few claimed hosts that may be free or its own for it merged in (see {@link candidatesFor}).
   * Without it, each turn placed again walks past every host the site's clusters hold.
   */
  readonly #unclaimed: BestFit;
  /** Hosts only a turn claimed (no fixed claim), sorted by id, with that turn's position: free before it. */
  readonly #claimedByTurnOnly: { readonly host: Host; readonly position: number }[] = [];
  /**
   * The same, of known size, in best-fit order, with their ranks and the claiming turns' positions:
   * every turn placed again walks these lists, skipping the hosts of earlier turns, rather than
   * copying and sorting what concerns it (which cost every moved turn the site's claimed hosts).
   */
  readonly #sizedClaimedByTurnOnly: RankedHosts & { readonly positions: FirstAtLeast };
  /** A selector's matches (as `Inventory.matching` remembers them) → those the trace left unclaimed. */
  readonly #unclaimedMatches = new WeakMap<readonly Host[], readonly Host[]>();

  /** The trace, its best-fit ranges in this index's inventory's ranks. */
  readonly trace: PlanTrace;
  /** The trace's BPA clusters naming each MAC (lazily: only a change of hosts asks). */
  #macRequesters: Map<string, ClusterKey[]> | undefined;
  /** SIP turns by what their roles read of host labels (lazily, as {@link #macRequesters}). */
  #labelReaders: { selector: LabelSelector; topologyKey?: string; turns: Turn[] }[] | undefined;

  /**
   * Indexes `trace` as planned against `inventory`, or, given `rankedIn`, as planned against that
   * inventory and read now against `inventory` (its hosts changed; see {@link replanInventory}).
   */
  constructor(
    trace: PlanTrace,
    readonly inventory: Inventory,
    readonly lock: Lock,
    rankedIn?: Inventory,
  ) {
    this.trace =
      rankedIn === undefined || rankedIn.sameBestFitOrder(inventory)
        ? trace
        : { ...trace, turns: trace.turns.map((outcome) => reranked(outcome, rankedIn, inventory)) };
    this.#leaves = Math.max(1, inventory.lastBestFitRank() + 1);
    this.trace.turns.forEach((outcome, position) => {
      this.#positions.set(turnId(outcome.turn), position);
      const { reads } = outcome;
      if (reads.all) this.#readsAll.push(position);
      for (const host of reads.hosts) pushTo(this.#readers, host, position);
      for (const [from, to] of reads.ranges) {
        this.#ranges.push({ from, to, turn: outcome.turn });
        this.#addRange(from, to, position);
      }
      for (const { selector, last } of reads.walks) {
        const id = JSON.stringify(selector);
        let walks = this.#walks.get(id);
        if (!walks) this.#walks.set(id, (walks = { selector, walks: [], latest: [] }));
        walks.walks.push({ ...(last !== undefined && { last }), position });
      }
    });
    for (const group of this.#walks.values()) {
      group.walks.sort((a, b) => compareWalkEnds(a.last, b.last));
      // The latest position from each walk on: a suffix of turns all before a change's turn is skipped.
      group.latest = group.walks.map(({ position }) => position);
      for (let at = group.latest.length - 2; at >= 0; at--)
        group.latest[at] = Math.max(group.latest[at]!, group.latest[at + 1]!);
    }
    lock.entries.forEach((entry, position) => {
      pushTo(this.#lockByHost, entry.host, position);
      pushTo(this.#lockByCluster, entry.cluster, position);
    });
    this.#unclaimed = inventory.bestFit();
    for (const host of inventory.hosts) {
      const turnClaim = trace.turnClaims.get(host.id);
      const fixed = trace.fixed.claimOf(host);
      if (fixed === undefined && turnClaim === undefined) continue;
      this.#unclaimed.take(host);
      if (fixed === undefined && turnClaim)
        this.#claimedByTurnOnly.push({ host, position: this.positionOf(turnClaim.turn) });
    }
    // Only hosts of known size are best-fit candidates at all.
    const sized = this.#claimedByTurnOnly
      .filter(({ host }) => inventory.bestFitRank(host) !== undefined)
      .sort((a, b) => this.#rank(a.host) - this.#rank(b.host));
    this.#sizedClaimedByTurnOnly = {
      hosts: sized.map(({ host }) => host),
      ranks: sized.map(({ host }) => this.#rank(host)),
      positions: new FirstAtLeast(sized.map(({ position }) => position)),
    };
    for (const [key, group] of trace.clusters.bpaByKey) {
      for (const { id: host } of macNamedHosts(group, inventory)) {
        let users = this.#macUsers.get(host);
        if (!users) this.#macUsers.set(host, (users = new Set()));
        users.add(key);
      }
    }
  }

  /** The trace's outcome at `position` (see {@link positionOf}), if the trace has a turn there. */
  outcomeAt(position: number): TurnOutcome | undefined {
    return Number.isInteger(position) ? this.trace.turns[position] : undefined;
  }

  /**
   * Where `turn` comes in the trace's planning order: its index there, or, for a turn the trace
   * lacks, half a step before the trace's first turn after it.
   */
  positionOf(turn: Turn): number {
    const known = this.#positions.get(turnId(turn));
    if (known !== undefined) return known;
    const { turns } = this.trace;
    let low = 0;
    let high = turns.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareTurns(turns[middle]!.turn, turn) < 0) low = middle + 1;
      else high = middle;
    }
    return low - 0.5;
  }

  /** Turns whose outcome may depend on how `host` is claimed. */
  readersOf(host: Host): Turn[] {
    const found: Turn[] = [];
    this.laterReadersOf(host, Number.NEGATIVE_INFINITY, new Set(), (turn) => found.push(turn));
    return found;
  }

  /**
   * The turns after `position` whose outcome may depend on how `host` is claimed, leaving out those
   * of the index's lists already in `drained`. A change is planned turn by turn in planning order
   * and queues every turn this finds, so a list once given out after one position holds nothing
   * new for a later one: each list is given out once per change, and a cascade through hundreds of
   * turns that read the same best-fit ranges costs each turn once, not once per moved claim.
   * `position` must not decrease between calls sharing `drained`. Turns are handed to `found`
   * rather than yielded: nested generators cost more than the lookups, a moved claim at a time.
   */
  laterReadersOf(
    host: Host,
    position: number,
    drained: Set<number | string>,
    found: (turn: Turn, position: number) => void,
  ): void {
    this.#after(this.#readers.get(host.id), position, found);
    this.#drain(ALL_READERS, this.#readsAll, position, drained, found);
    for (const { selector, walks, latest } of this.#walks.values()) {
      if ((latest[0] ?? position) <= position || !matchesSelector(host.labels, selector)) continue;
      // The first walk that stopped at or after the host; every later one passed it too.
      let low = 0;
      let high = walks.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (compareWalkEnds(walks[middle]!.last, host.id) < 0) low = middle + 1;
        else high = middle;
      }
      for (let at = low; at < walks.length && latest[at]! > position; at++) {
        const walker = walks[at]!.position;
        if (walker > position) found(this.#turnAt(walker), walker);
      }
    }
    const rank = this.inventory.bestFitRank(host);
    if (rank === undefined || rank >= this.#leaves) return;
    for (let node = rank + this.#leaves; node >= 1; node >>>= 1) {
      this.#drain(node, this.#rangeTree.get(node), position, drained, found);
    }
  }

  /** The turns of `positions` (ascending) after `position`, unless `key` was drained already. */
  #drain(
    key: number | string,
    positions: readonly number[] | undefined,
    position: number,
    drained: Set<number | string>,
    found: (turn: Turn, position: number) => void,
  ): void {
    if (positions === undefined || drained.has(key)) return;
    drained.add(key);
    this.#after(positions, position, found);
  }

  /** The turns of `positions` (ascending) after `position`. */
  #after(
    positions: readonly number[] | undefined,
    position: number,
    found: (turn: Turn, position: number) => void,
  ): void {
    if (positions === undefined) return;
    let low = 0;
    let high = positions.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (positions[middle]! <= position) low = middle + 1;
      else high = middle;
    }
    for (let at = low; at < positions.length; at++) found(this.#turnAt(positions[at]!), positions[at]!);
  }

  #turnAt(position: number): Turn {
    return this.trace.turns[position]!.turn;
  }

  /** Files the turn at `position` under the tree nodes covering ranks `from` to `to` (ends included). */
  #addRange(from: number, to: number, position: number): void {
    let low = Math.max(0, from) + this.#leaves;
    let high = Math.min(to, this.#leaves - 1) + 1 + this.#leaves;
    for (; low < high; low >>>= 1, high >>>= 1) {
      if (low & 1) pushTo(this.#rangeTree, low++, position);
      if (high & 1) pushTo(this.#rangeTree, --high, position);
    }
  }

  /**
   * Turns whose outcome may depend on facts of a host that changed from `before` to `after` (either
   * missing when the host joined or left the inventory): those that read it, and those that would
   * read it now. Its claim, MAC entries and SIP labels reach further (see {@link replanInventory}).
   */
  *readersOfChange(before: Host | undefined, after: Host | undefined, previous: TraceIndex): Generator<Turn> {
    if (before) yield* previous.readersOf(before);
    if (after) yield* this.readersOf(after);
    // A walk that ran off the end of best-fit order went on through the hosts of unknown size.
    if (
      (before && previous.inventory.bestFitRank(before) === undefined) ||
      (after && this.inventory.bestFitRank(after) === undefined)
    ) {
      const end = this.inventory.lastBestFitRank();
      for (const range of this.#ranges) if (range.to >= end) yield range.turn;
    }
    yield* this.#labelReadersOf(before, after);
  }

  /**
   * SIP turns for which the host's labels changed what they read: whether a role's selector matches
   * it, or its value of the role's topology key among the hosts that match.
   */
  *#labelReadersOf(before: Host | undefined, after: Host | undefined): Generator<Turn> {
    if (this.#labelReaders === undefined) {
      const groups = new Map<string, { selector: LabelSelector; topologyKey?: string; turns: Turn[] }>();
      for (const { turn } of this.trace.turns) {
        const sip = turn.pass === "sip" ? this.trace.clusters.sipByKey.get(turn.key) : undefined;
        for (const { selector, topologyKey } of sip?.roles ?? []) {
          const id = JSON.stringify([selector, topologyKey]);
          let group = groups.get(id);
          if (!group)
            groups.set(
              id,
              (group = { selector, ...(topologyKey !== undefined && { topologyKey }), turns: [] }),
            );
          group.turns.push(turn);
        }
      }
      this.#labelReaders = [...groups.values()];
    }
    for (const { selector, topologyKey, turns } of this.#labelReaders) {
      const matched = before !== undefined && matchesSelector(before.labels, selector);
      const matches = after !== undefined && matchesSelector(after.labels, selector);
      const topologyMoved =
        topologyKey !== undefined && before?.labels[topologyKey] !== after?.labels[topologyKey];
      if (matched !== matches || ((matched || matches) && topologyMoved)) yield* turns;
    }
  }

  /** The trace's BPA clusters with a MAC entry naming `mac`. */
  clustersNamingMac(mac: string): readonly ClusterKey[] {
    return this.#requestersByMac().get(mac) ?? [];
  }

  /** The trace's BPA clusters with a MAC entry that names no host (their findings suggest the nearest MAC). */
  clustersNamingUnknownMacs(): Set<ClusterKey> {
    const clusters = new Set<ClusterKey>();
    for (const [mac, keys] of this.#requestersByMac()) {
      if (this.inventory.byMac(mac) === undefined) for (const key of keys) clusters.add(key);
    }
    return clusters;
  }

  #requestersByMac(): ReadonlyMap<string, readonly ClusterKey[]> {
    if (this.#macRequesters === undefined) {
      this.#macRequesters = new Map();
      for (const [key, group] of this.trace.clusters.bpaByKey) {
        for (const request of [
          ...(group.provisioning?.masters ?? []),
          ...(group.provisioning?.workers ?? []),
        ]) {
          if (request.kind === "mac") pushTo(this.#macRequesters, request.mac, key);
        }
      }
    }
    return this.#macRequesters;
  }

  /** The lock entries about `hosts` or `clusters`, in lock order. */
  lockEntriesAbout(hosts: Iterable<string>, clusters: Iterable<string>): LockEntry[] {
    const positions = new Set<number>();
    for (const host of hosts) for (const at of this.#lockByHost.get(host) ?? []) positions.add(at);
    for (const key of clusters) for (const at of this.#lockByCluster.get(key) ?? []) positions.add(at);
    return [...positions].sort((a, b) => a - b).flatMap((at) => this.lock.entries[at] ?? []);
  }

  /**
   * Best-fit candidates for the turn at `position` placed again: every host the trace left
   * unclaimed, and of the claimed ones those that may be free or the turn's own: claimed only by a
   * later turn, or among `own` (the turn's own fixed hosts) and `freed` (hosts whose claims the change
   * moved). A superset of what a full run's candidates would be; the turn's claim filter rejects the
   * rest.
   */
  candidatesFor(
    position: number,
    own: readonly Host[],
    freed: RankedHosts,
    claimedEarlier: (host: Host) => boolean,
  ): Candidates {
    const later = this.#sizedClaimedByTurnOnly;
    const ownRanked = new FreedHosts(this.inventory);
    for (const host of own) ownRanked.add(host);
    const extra = [
      { ...later, keptFrom: (index: number) => later.positions.find(index, position) },
      freed,
      ownRanked,
    ];
    return new MergedCandidates(this.#unclaimed, extra, (host) => this.#rank(host), claimedEarlier, {
      takesFromBase: false,
    });
  }

  /**
   * {@link PlanningContext.mayBeFree} for `turn` placed again: the matches the trace left
   * unclaimed, with those of the claimed ones that may be free or the turn's own (as for
   * {@link candidatesFor}), in id order.
   */
  mayBeFreeFor(
    position: number,
    maybeFree: Iterable<Host>,
  ): (hosts: readonly Host[], selector: LabelSelector) => Iterable<Host> {
    return (hosts, selector) => {
      let unclaimed = this.#unclaimedMatches.get(hosts);
      if (unclaimed === undefined) {
        const claimed = (host: Host) =>
          this.trace.turnClaims.has(host.id) || this.trace.fixed.claimOf(host) !== undefined;
        unclaimed = hosts.filter((host) => !claimed(host));
        this.#unclaimedMatches.set(hosts, unclaimed);
      }
      const extra = new Map<string, Host>();
      for (const { host, position: claimedBy } of this.#claimedByTurnOnly) {
        if (claimedBy >= position) extra.set(host.id, host);
      }
      for (const host of maybeFree) extra.set(host.id, host);
      const matching = [...extra.values()].filter((host) => matchesSelector(host.labels, selector));
      return mergeById(unclaimed, matching);
    };
  }

  #rank(host: Host): number {
    return this.inventory.bestFitRank(host) ?? Number.MAX_SAFE_INTEGER;
  }

  /** Clusters of the trace whose MAC entries name `host`. */
  macUsersOf(host: string): ReadonlySet<ClusterKey> {
    return this.#macUsers.get(host) ?? new Set();
  }
}

/** Hosts whose facts changed, and what that reaches besides their claims (see {@link replanInventory}). */
interface HostChanges {
  /**
   * Hosts whose fixed claims are fixed again, each maybe free for every turn: the changed hosts as
   * the inventory has them now, and those a moved MAC named before or names now.
   */
  readonly refix: readonly Host[];
  /** Turns that read facts of those hosts, placed again whatever their claims. */
  readonly readers: Iterable<Turn>;
}

const NO_HOST_CHANGES: HostChanges = { refix: [], readers: [] };

/** Plans the site of `index.trace` with `changes` applied, re-placing only what they can reach. */
export function replan(index: TraceIndex, changes: ReadonlyMap<ClusterKey, ClusterChange>): Replanned {
  return replanned(index, changes, NO_HOST_CHANGES);
}

/**
 * The findings {@link replan} would give for `changes`: the `host-claimed` errors of the hosts fixed
 * again, then those of every turn placed again, in planning order. What a review reads: each turn's
 * outcome is dropped once placed, so a cascade through hundreds of turns keeps none of them alive.
 */
export function replanFindings(index: TraceIndex, changes: ReadonlyMap<ClusterKey, ClusterChange>): Issue[] {
  const issues: Issue[] = [];
  const run = replanWith(index, changes, NO_HOST_CHANGES, (outcome) => issues.push(...outcome.placed.issues));
  return [...run.fixedIssues, ...issues];
}

/** {@link replan}'s answer, every outcome kept. */
function replanned(
  index: TraceIndex,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
  hostChanges: HostChanges,
): Replanned {
  const placed: TurnOutcome[] = [];
  const run = replanWith(index, changes, hostChanges, (outcome) => placed.push(outcome));
  return { fixedIssues: run.fixedIssues, placed, complete: () => run.complete(placed) };
}

/**
 * Plans the site of `index.trace` against `inventory` in place of `index.inventory` (BareMetalHosts
 * changed, joined or left), re-placing only what the changed hosts can reach:
 * - turns that read a changed host, or would read it now: by id, by best-fit rank, by a SIP role's
 *   labelSelector or topology key;
 * - clusters whose MAC entries name a moved MAC (and, when MACs moved at all, those naming an unknown
 *   MAC, whose findings suggest the nearest one), whose lock entries name a changed host, or which a
 *   changed host's SIP labels name: fixed again and placed again, as a changed cluster is;
 * - and, as for any change, the turns the claims this moves reach.
 */
export function replanInventory(index: TraceIndex, inventory: Inventory): Replanned {
  const hostChanges = index.inventory.changesTo(inventory);
  const now = new TraceIndex(index.trace, inventory, index.lock, index.inventory);
  const readers: Turn[] = [];
  const macs = new Set<string>();
  const affected = new Set<ClusterKey>();
  for (const { before, after } of hostChanges) {
    readers.push(...now.readersOfChange(before, after, index));
    const [macsBefore, macsAfter] = [before?.macs ?? [], after?.macs ?? []];
    if (macsBefore.join() !== macsAfter.join())
      for (const mac of [...macsBefore, ...macsAfter]) macs.add(mac);
    for (const host of [before, after]) {
      const owner = host && sipOwnerKey(host);
      if (owner !== undefined) affected.add(owner);
    }
  }
  for (const mac of macs) for (const key of index.clustersNamingMac(mac)) affected.add(key);
  if (macs.size > 0) for (const key of index.clustersNamingUnknownMacs()) affected.add(key);
  const ids = new Set(hostChanges.flatMap(({ before, after }) => (before ?? after)?.id ?? []));
  for (const entry of index.lockEntriesAbout(ids, [])) {
    const key = parseClusterKey(entry.cluster);
    if (key !== undefined) affected.add(key);
  }
  // Placed again as changed clusters are, with the CRs they have.
  const { bpaByKey, sipByKey } = index.trace.clusters;
  const reached = new Map<ClusterKey, ClusterChange>();
  for (const key of affected) {
    const [bpa, sip] = [bpaByKey.get(key), sipByKey.get(key)];
    reached.set(key, { ...(bpa && { bpa }), ...(sip && { sip }) });
  }
  const refix = new Set(hostChanges.flatMap(({ after }) => after ?? []));
  for (const mac of macs) {
    for (const owner of [index.inventory.byMac(mac), inventory.byMac(mac)]) {
      const host = owner && inventory.byId(owner.id);
      if (host) refix.add(host);
    }
  }
  return replanned(now, reached, { refix: [...refix], readers });
}

/**
 * Places again, in planning order, every turn `changes` and `hostChanges` reach, handing each
 * outcome to `placedTurn`; `complete` assembles the whole trace from the outcomes kept.
 */
function replanWith(
  index: TraceIndex,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
  hostChanges: HostChanges,
  placedTurn: (outcome: TurnOutcome) => void,
): { fixedIssues: readonly Issue[]; complete(placed: readonly TurnOutcome[]): PlanTrace } {
  const { trace, inventory } = index;
  const clusters = changedClusters(trace.clusters, changes);
  const fixed = fixAgain(index, clusters, changes, hostChanges);

  // Turn claims as planning them again leaves them: host id → the claim, or none (`undefined`).
  const turnClaims = new Map<string, (StandingClaim & { readonly turn: Turn }) | undefined>();
  const claimNow = (id: string) => (turnClaims.has(id) ? turnClaims.get(id) : trace.turnClaims.get(id));
  const claimBefore = (host: Host, turn: Turn) => {
    const claim = claimNow(host.id);
    return claim && compareTurns(claim.turn, turn) < 0 ? claim : undefined;
  };

  const queue = new TurnQueue(index);
  for (const key of changes.keys()) {
    queue.add({ pass: "sip", key });
    queue.add({ pass: "bpa", key });
  }
  for (const host of fixed.moved) for (const turn of index.readersOf(host)) queue.add(turn);
  for (const turn of hostChanges.readers) queue.add(turn);
  // Claimed hosts every turn may have all the same: those the change moved, and those whose turn
  // claims planning again changed (added as they change).
  const freed = new FreedHosts(inventory);
  for (const host of [...fixed.moved, ...hostChanges.refix]) freed.add(host);
  // Reader lists given out already (see `TraceIndex.laterReadersOf`).
  const drained = new Set<number | string>();

  // Turns of the trace placed again (or gone): their outcomes in the trace no longer stand.
  const replaced = new Set<string>();
  for (let next = queue.next(); next !== undefined; next = queue.next()) {
    const { turn: current, position } = next;
    const work = workOf(clusters, current);
    // Claimed hosts the turn may have all the same: its own, and those the change freed.
    const own = ownFixedHosts(current.key, fixed.claims, clusters, inventory);
    const outcome =
      work &&
      placeTurn(work, {
        inventory,
        fixed: fixed.claims,
        claimedEarlier: claimBefore,
        bestFit: index.candidatesFor(
          position,
          own,
          freed,
          (host) => claimBefore(host, current) !== undefined,
        ),
        mayBeFree: index.mayBeFreeFor(position, {
          *[Symbol.iterator]() {
            yield* own;
            yield* freed.all;
          },
        }),
        explains: false,
        // Alone in its run, the turn may drop from its candidates every host another cluster holds.
        stillPlanning: (cluster) => cluster === current.key,
      });
    const before = index.outcomeAt(position);
    if (outcome) placedTurn(outcome);
    if (before || outcome) replaced.add(turnId(current));
    for (const id of changedClaims(before, outcome)) {
      const claim = outcome?.claims.get(id);
      // The turn claim as plan-site.ts builds it (decision 0026).
      if (claim) turnClaims.set(id, { turn: current, ...claim });
      // A host this turn gave up may have gone to an earlier turn placed again; that claim stays.
      else if (sameTurn(claimNow(id)?.turn, current)) turnClaims.set(id, undefined);
      const host = inventory.byId(id);
      if (!host) continue;
      if (claimNow(id) === undefined) freed.add(host);
      else freed.hold(host);
      index.laterReadersOf(host, position, drained, (reader, at) => queue.add(reader, at));
    }
  }

  const fixedIssues = [...fixed.refixed].flatMap((host) => fixed.claims.issuesByHost.get(host.id) ?? []);
  return {
    fixedIssues,
    complete: (placed) => {
      const turns = trace.turns
        .filter((outcome) => !replaced.has(turnId(outcome.turn)))
        .concat(placed)
        .sort((a, b) => compareTurns(a.turn, b.turn));
      const claims = new Map(trace.turnClaims);
      for (const [id, claim] of turnClaims) {
        if (claim) claims.set(id, claim);
        else claims.delete(id);
      }
      const merged: PlanClusters = {
        bpaByKey: new Map(clusters.bpaByKey),
        sipByKey: new Map(clusters.sipByKey),
      };
      // Fixed again for the whole site (lock and MAC entries, no placing), so a trace never
      // answers through the traces before it.
      const isLive = (key: ClusterKey) => merged.bpaByKey.has(key) || merged.sipByKey.has(key);
      const fixedNow = fixClaims({
        lockEntries: index.lock.entries,
        groups: merged.bpaByKey,
        inventory,
        isLive,
      });
      return {
        ...assemble(merged, fixedNow, turns),
        clusters: merged,
        fixed: fixedNow,
        turns,
        turnClaims: claims,
      };
    },
  };
}

/** The site's clusters with `changes` applied, without copying the site's: lookups cost the same. */
function changedClusters(
  clusters: PlanClusters,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
): PlanClusters {
  return {
    bpaByKey: new Overlay(clusters.bpaByKey, changes, (key) => changes.get(key)?.bpa),
    sipByKey: new Overlay(clusters.sipByKey, changes, (key) => changes.get(key)?.sip),
  };
}

/**
 * A map as `base` with the keys of `replaced` replaced by what `now` finds for them (or removed,
 * where it finds nothing). Lookups cost what the base's do, whatever its size; only iterating (a
 * whole plan) builds the merged map.
 */
class Overlay<K, V> implements ReadonlyMap<K, V> {
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

/**
 * The fixed claims of the changed site: those of the trace, fixed again for the hosts the change
 * reaches. Those are the hosts the changed clusters' MAC entries name (before and after) and, when a
 * cluster joins or leaves the site, the hosts its lock entries or SIP labels name.
 */
function fixAgain(
  index: TraceIndex,
  clusters: PlanClusters,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
  hostChanges: HostChanges,
): { claims: FixedClaims; refixed: ReadonlySet<Host>; moved: readonly Host[] } {
  const { trace, inventory } = index;
  const isLive = (key: ClusterKey) => clusters.bpaByKey.has(key) || clusters.sipByKey.has(key);
  const wasLive = (key: ClusterKey) => trace.clusters.bpaByKey.has(key) || trace.clusters.sipByKey.has(key);
  const refixed = new Set<Host>(hostChanges.refix);
  const addHost = (id: string) => {
    const host = inventory.byId(id);
    if (host) refixed.add(host);
  };
  for (const [key, change] of changes) {
    for (const group of [trace.clusters.bpaByKey.get(key), change.bpa])
      if (group) for (const host of macNamedHosts(group, inventory)) refixed.add(host);
    if (isLive(key) !== wasLive(key))
      for (const entry of index.lockEntriesAbout([], [key])) addHost(entry.host);
    // Whether SIP labels claim a host depends on whether the lock records their cluster at all, which
    // a lock entry's host joining or leaving turns either way (a host labelled in part is no member
    // the cluster keeps, so it stays outside the lock and only this refix reaches it: decision 0032).
    for (const host of inventory.ownedBySip(key)) refixed.add(host);
  }
  const ids = new Set([...refixed].map((host) => host.id));
  // Whether a SIP label claims a host depends on whether the lock records its owner at all.
  const owners = [...refixed].flatMap((host) => sipOwnerKey(host) ?? []);
  const lockEntries = index.lockEntriesAbout(ids, [...changes.keys(), ...owners]);
  // Only the MAC entries that name a refixed host, so no other host gets a claim here.
  const groups = new Map<ClusterKey, BpaGroup>();
  const users = new Set<ClusterKey>([...changes.keys()]);
  for (const id of ids) for (const user of index.macUsersOf(id)) users.add(user);
  for (const key of users) {
    const group = clusters.bpaByKey.get(key);
    const provisioning = group?.provisioning;
    if (!group || !provisioning) continue;
    const names = (requests: typeof provisioning.masters) =>
      requests.filter((request) => request.kind === "mac" && ids.has(inventory.byMac(request.mac)?.id ?? ""));
    groups.set(key, {
      ...group,
      provisioning: {
        ...provisioning,
        masters: names(provisioning.masters),
        workers: names(provisioning.workers),
      },
    });
  }
  const again = fixClaims({ lockEntries, groups, inventory, isLive });
  const before = trace.fixed;
  const changed = (key: ClusterKey) => changes.has(key);
  const claims: FixedClaims = {
    claimOf: (host) => (ids.has(host.id) ? again : before).claimOf(host),
    claimedHosts: () => [
      ...before.claimedHosts().filter((host) => !ids.has(host.id)),
      ...again.claimedHosts().filter((host) => ids.has(host.id)),
    ],
    releasing: (key) => (changed(key) ? again : before).releasing(key),
    releasingClusters: () => [
      ...before.releasingClusters().filter((key) => !changed(key)),
      ...again.releasingClusters().filter(changed),
    ],
    heldByLock: (key) => (changed(key) ? again : before).heldByLock(key),
    contested: {
      get: (request) => {
        const host = request.kind === "mac" ? inventory.byMac(request.mac) : undefined;
        return (host && ids.has(host.id) ? again : before).contested.get(request);
      },
    },
    // Not copied: a site's hosts with claim errors may be many, and a review reads a few.
    issuesByHost: new Overlay(before.issuesByHost, ids, (id) => again.issuesByHost.get(id)),
  };
  // Only hosts whose claim really changed reach the turns that read them.
  const moved = [...refixed].filter((host) => !sameClaim(before.claimOf(host), claims.claimOf(host)));
  return { claims, refixed, moved };
}

/** Orders where selector walks stopped: by the last host's id, a walk over every match last. */
function compareWalkEnds(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined) return Number(a === undefined) - Number(b === undefined);
  return compareText(a, b);
}

/** `outcome` with its best-fit ranges read in `inventory`'s ranks rather than in `before`'s. */
function reranked(outcome: TurnOutcome, before: Inventory, inventory: Inventory): TurnOutcome {
  const { reads } = outcome;
  if (reads.ranges.length === 0) return outcome;
  const ranges = reads.ranges.map(([from, to]) => inventory.coveringRanks(before, from, to));
  return { ...outcome, reads: { ...reads, ranges } };
}

/** Hosts a cluster may hold before its turns: by the lock, its MAC entries, its SIP labels, a release. */
function ownFixedHosts(
  key: ClusterKey,
  fixed: FixedClaims,
  clusters: PlanClusters,
  inventory: Inventory,
): Host[] {
  const group = clusters.bpaByKey.get(key);
  // Loops, not spreads: every turn a cascade moves asks, and most clusters hold nothing yet.
  const hosts: Host[] = group ? macNamedHosts(group, inventory) : [];
  for (const entry of fixed.heldByLock(key)) {
    const host = inventory.byId(entry.host);
    if (host) hosts.push(host);
  }
  for (const host of inventory.ownedBySip(key)) hosts.push(host);
  for (const release of fixed.releasing(key)) hosts.push(release.host);
  return hosts;
}

/** What `turn` places in `clusters`, if anything. */
function workOf(clusters: PlanClusters, turn: Turn): TurnWork | undefined {
  if (turn.pass === "sip") {
    const sip = clusters.sipByKey.get(turn.key);
    return sip && { pass: "sip", key: turn.key, sip };
  }
  const group = clusters.bpaByKey.get(turn.key);
  const provisioning = group?.provisioning;
  return (
    group &&
    provisioning && { pass: "bpa", key: turn.key, group: { provisioning, ...group } as ProvisionedGroup }
  );
}

/** Ids of the hosts one outcome claims and the other doesn't, or claims for another reason. */
function changedClaims(before: TurnOutcome | undefined, after: TurnOutcome | undefined): string[] {
  const old = before?.claims ?? NO_CLAIMS;
  const now = after?.claims ?? NO_CLAIMS;
  // Loops, not a Set of spread keys: this runs for every turn a cascade moves.
  const changed: string[] = [];
  for (const [id, claim] of old) if (!sameClaim(claim, now.get(id))) changed.push(id);
  for (const id of now.keys()) if (!old.has(id)) changed.push(id);
  return changed;
}

const NO_CLAIMS: ReadonlyMap<string, StandingClaim> = new Map();

function sameClaim(a: StandingClaim | undefined, b: StandingClaim | undefined): boolean {
  return a?.cluster === b?.cluster && a?.why === b?.why;
}

function sameTurn(a: Turn | undefined, b: Turn): boolean {
  return a !== undefined && compareTurns(a, b) === 0;
}

function turnId(turn: Turn): string {
  return `${turn.pass}\u0000${turn.key}`;
}

/** A turn with its position in the trace's planning order (see `TraceIndex.positionOf`). */
interface PositionedTurn {
  readonly turn: Turn;
  readonly position: number;
}

/** Turns to place again, taken in planning order, each once (a binary heap: a cascade adds hundreds). */
class TurnQueue {
  readonly #heap: PositionedTurn[] = [];
  /** Turns added: the trace's by position, the others (between two of its turns) by id. */
  readonly #seen = new Set<number | string>();

  constructor(private readonly index: TraceIndex) {}

  /** Adds `turn` unless it was added before; `position`: its {@link TraceIndex.positionOf}, if known. */
  add(turn: Turn, position = this.index.positionOf(turn)): void {
    const id = Number.isInteger(position) ? position : turnId(turn);
    if (this.#seen.has(id)) return;
    this.#seen.add(id);
    const heap = this.#heap;
    heap.push({ turn, position });
    for (let at = heap.length - 1; at > 0;) {
      const parent = (at - 1) >>> 1;
      if (!earlier(heap[at]!, heap[parent]!)) break;
      [heap[at], heap[parent]] = [heap[parent]!, heap[at]!];
      at = parent;
    }
  }

  /** The earliest pending turn. */
  next(): PositionedTurn | undefined {
    const heap = this.#heap;
    const first = heap[0];
    const last = heap.pop();
    if (first === undefined || last === undefined || heap.length === 0) return first;
    heap[0] = last;
    for (let at = 0; ;) {
      const [left, right] = [2 * at + 1, 2 * at + 2];
      let least = at;
      if (left < heap.length && earlier(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && earlier(heap[right]!, heap[least]!)) least = right;
      if (least === at) return first;
      [heap[at], heap[least]] = [heap[least]!, heap[at]!];
      at = least;
    }
  }
}

/** Planning order; two turns the trace lacks may share a position between the same two of its turns. */
function earlier(a: PositionedTurn, b: PositionedTurn): boolean {
  return a.position < b.position || (a.position === b.position && compareTurns(a.turn, b.turn) < 0);
}

/**
 * Claimed hosts that turns placed again may have all the same, as a change goes: {@link all} of
 * them (for `mayBeFree`), and of those of known size the ones no turn placed already holds, in
 * best-fit order with their ranks (for {@link MergedCandidates}). A host a turn placed again claims
 * is claimed earlier for every turn after it, so it leaves the ranked lists, which stay as short as
 * what the change set free rather than as long as the cascade.
 */
class FreedHosts implements RankedHosts {
  readonly hosts: Host[] = [];
  readonly ranks: number[] = [];
  readonly #all = new Map<string, Host>();

  constructor(private readonly inventory: Inventory) {}

  /** Every host given to {@link add} or {@link hold}. */
  get all(): Iterable<Host> {
    return this.#all.values();
  }

  /** `host` may be free for the turns to come. */
  add(host: Host): void {
    this.#all.set(host.id, host);
    const rank = this.inventory.bestFitRank(host);
    if (rank === undefined) return;
    const at = this.#at(rank);
    if (this.ranks[at] === rank) return;
    this.hosts.splice(at, 0, host);
    this.ranks.splice(at, 0, rank);
  }

  /** `host` is held by a turn placed already: no candidate for the turns to come. */
  hold(host: Host): void {
    this.#all.set(host.id, host);
    const rank = this.inventory.bestFitRank(host);
    if (rank === undefined) return;
    const at = this.#at(rank);
    if (this.ranks[at] !== rank) return;
    this.hosts.splice(at, 1);
    this.ranks.splice(at, 1);
  }

  /** Where `rank` is, or would be, in {@link ranks}. */
  #at(rank: number): number {
    let low = 0;
    let high = this.ranks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.ranks[middle]! < rank) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/**
 * A list of numbers searchable for the first at or after an index that is at least a value, in
 * logarithmic time (a segment tree of maxima): the first host a later turn claimed, from a
 * best-fit position on, without walking past every host the earlier turns claimed.
 */
class FirstAtLeast {
  readonly #leaves: number;
  readonly #max: number[];

  constructor(readonly values: readonly number[]) {
    let leaves = 1;
    while (leaves < values.length) leaves *= 2;
    this.#leaves = leaves;
    this.#max = new Array<number>(2 * leaves).fill(Number.NEGATIVE_INFINITY);
    values.forEach((value, index) => (this.#max[leaves + index] = value));
    for (let node = leaves - 1; node >= 1; node--)
      this.#max[node] = Math.max(this.#max[2 * node]!, this.#max[2 * node + 1]!);
  }

  /** The first index at or after `from` whose value is at least `least`; the list's length if none. */
  find(from: number, least: number): number {
    const max = this.#max;
    if (from >= this.values.length) return this.values.length;
    let node = from + this.#leaves;
    // Up and right to the first subtree holding a value large enough, then down to its leftmost one.
    while (max[node]! < least) {
      while (node & 1) node >>>= 1;
      if (node === 0) return this.values.length;
      node += 1;
    }
    while (node < this.#leaves) node = max[2 * node]! >= least ? 2 * node : 2 * node + 1;
    return node - this.#leaves;
  }
}

/** {@link TraceIndex.laterReadersOf}'s key for the turns that read every host. */
const ALL_READERS = "all";
