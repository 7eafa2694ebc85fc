/**
 * Planning a change to a few clusters again, starting from a whole site's {@link PlanTrace}, at the
 * cost of what the change can reach rather than of the site (the webhook reviews one CR this way,
 * docs/contract.md §8). The answer is the one a full run on the changed site gives; `replan.test.ts`
 * checks that over random sites and changes.
 *
 * 1. Fixed claims are fixed again only for the hosts the change names (`refix.ts`).
 * 2. Turns run in planning order. A turn is placed again when it is a changed cluster's, or when it
 *    read (`reads.ts`) a fact of a host that is no longer what it was before its turn: a claim the
 *    change moved, or a BareMetalHost's changed fact. Its new claims may reach later turns too.
 *    Which turns read what, the trace's {@link ReadIndex} answers; this module is the queue.
 */
import { parseClusterKey, type ClusterKey } from "../../cluster-key.ts";
import type { Issue } from "../../issue.ts";
import { sipOwnerKey, type Host } from "../../inventory/host.ts";
import { changedFacts, HOST_FACTS } from "../../inventory/host-facts.ts";
import type { Inventory } from "../../inventory/inventory.ts";
import type { Lock } from "../../model/lock.ts";
import type { PlanCache } from "../../model/plan-cache.ts";
import { isProvisioned, macNamedHosts } from "../bpa-placement.ts";
import { sameClaim, type StandingClaim } from "../claim-ledger.ts";
import { fixClaims, type FixedClaims } from "../fixed-claims.ts";
import { Overlay } from "./overlay.ts";
import { RunClaims, type TurnClaims } from "./claims-before.ts";
import { assemble, type PlanClusters, type PlanTrace } from "../plan-site.ts";
import { ReadIndex } from "./read-index.ts";
import { fixAgain, RefixIndex, type ClusterChange } from "./refix.ts";
import { ReopenedHosts, ReplanCandidates } from "./replan-candidates.ts";
import {
  compareTurns,
  placeTurn,
  turnClaim,
  type Turn,
  type TurnClaim,
  type TurnOutcome,
  type TurnWork,
} from "../turns.ts";
import { lowerBound } from "../../lower-bound.ts";

export type { ClusterChange } from "./refix.ts";

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

/** One trace, indexed for planning changes from it: built once, used by every change. */
export class TraceIndex {
  /** The trace, its best-fit ranges in this index's inventory's ranks. */
  readonly trace: PlanTrace;
  /** Which turns read which host facts. */
  readonly reads: ReadIndex;
  /** What a turn placed again may take. */
  readonly candidates: ReplanCandidates;
  /** The lock and MAC entries by the hosts and clusters they name. */
  readonly refix: RefixIndex;
  /** Turn id → its position in the trace's turns (planning order). */
  readonly #positions = new Map<string, number>();
  /**
   * Position → {@link unchangedTurnAt}'s answer, once asked. Made at the trace's length: a cascade
   * fills it from wherever it starts, and a write far past the end of an empty array would make
   * it a dictionary.
   */
  readonly #unchangedTurns: (UnchangedTurn | undefined)[];

  /**
   * Indexes `trace` as planned against `inventory`, or, given `rankedIn`, as planned against that
   * inventory and read now against `inventory` (its hosts changed; see {@link replanHosts}).
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
    this.trace.turns.forEach((outcome, position) => this.#positions.set(turnId(outcome.turn), position));
    this.#unchangedTurns = new Array<UnchangedTurn | undefined>(this.trace.turns.length);
    this.reads = new ReadIndex(this.trace.turns, inventory);
    this.candidates = new ReplanCandidates(this.trace, inventory, (turn) => this.positionOf(turn));
    this.refix = new RefixIndex(this.trace, inventory, lock);
  }

  /**
   * What the trace's turn at `position` places, and the hosts its cluster holds before its turns as
   * the trace fixed them ({@link ownFixedHosts}), for a change that does not name the cluster. Kept
   * by position: every turn a cascade moves asks, review after review, and a lookup by cluster
   * costs more than the array.
   */
  unchangedTurnAt(position: number): UnchangedTurn {
    let known = this.#unchangedTurns[position];
    if (known === undefined) {
      const turn = this.turnAt(position);
      const own = ownFixedHosts(
        turn.key,
        this.trace.fixed,
        this.trace.clusters,
        this.inventory,
        this.trace.cache,
      );
      known = { work: workOf(this.trace.clusters, turn), own: own.length === 0 ? NO_HOSTS : own };
      this.#unchangedTurns[position] = known;
    }
    return known;
  }

  /** The trace's outcome at `position` (see {@link positionOf}), if the trace has a turn there. */
  outcomeAt(position: number): TurnOutcome | undefined {
    return Number.isInteger(position) ? this.trace.turns[position] : undefined;
  }

  /** The trace's turn at `position`, one the {@link reads} index gave. */
  turnAt(position: number): Turn {
    return this.trace.turns[position]!.turn;
  }

  /**
   * Where `turn` comes in the trace's planning order: its index there, or, for a turn the trace
   * lacks, half a step before the trace's first turn after it.
   */
  positionOf(turn: Turn): number {
    const known = this.#positions.get(turnId(turn));
    if (known !== undefined) return known;
    const { turns } = this.trace;
    return lowerBound(0, turns.length, (at) => compareTurns(turns[at]!.turn, turn) < 0) - 0.5;
  }
}

/** A trace's turn as a change that leaves its cluster alone places it again (see {@link TraceIndex.unchangedTurnAt}). */
interface UnchangedTurn {
  /** What the turn places; none once the cluster has nothing to place. */
  readonly work: TurnWork | undefined;
  /** The hosts its cluster holds before its turns. */
  readonly own: readonly Host[];
}

/** Hosts whose facts changed, and what that reaches besides their claims (see {@link replanHosts}). */
interface HostChanges {
  /**
   * Hosts whose fixed claims are fixed again, each open to every turn: the changed hosts as
   * the inventory has them now, and those a moved MAC named before or names now.
   */
  readonly refix: readonly Host[];
  /** Positions of the turns that read changed facts of those hosts, placed again whatever their claims. */
  readonly readers: Iterable<number>;
}

const NO_HOST_CHANGES: HostChanges = { refix: [], readers: [] };

/** Plans the site of `index.trace` with `changes` applied, re-placing only what they can reach. */
export function replanClusters(
  index: TraceIndex,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
): Replanned {
  return withEveryOutcome(index, changes, NO_HOST_CHANGES);
}

/**
 * The findings {@link replanClusters} would give for `changes` that a review of them reads: the `host-claimed`
 * errors of the hosts fixed again, then those of every turn placed again, in planning order, the
 * warnings only of the changed clusters' turns (`PlanningContext.warns`). Each turn's outcome is
 * dropped once placed, so a cascade through hundreds of turns keeps none of them alive.
 */
export function replanFindings(index: TraceIndex, changes: ReadonlyMap<ClusterKey, ClusterChange>): Issue[] {
  const issues: Issue[] = [];
  const run = placeAgain(index, changes, NO_HOST_CHANGES, false, (outcome) =>
    issues.push(...outcome.placed.issues),
  );
  return [...run.fixedIssues, ...issues];
}

/** {@link replanClusters}'s answer, every outcome kept. */
function withEveryOutcome(
  index: TraceIndex,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
  hostChanges: HostChanges,
): Replanned {
  const placed: TurnOutcome[] = [];
  const run = placeAgain(index, changes, hostChanges, true, (outcome) => placed.push(outcome));
  return { fixedIssues: run.fixedIssues, placed, complete: () => run.complete(placed) };
}

/**
 * Plans the site of `index.trace` against `inventory` in place of `index.inventory` (BareMetalHosts
 * changed, joined or left), re-placing only what the changed hosts can reach:
 * - turns that read a fact that changed of a changed host, as it was or as it is now;
 * - clusters whose MAC entries name a moved MAC, whose lock entries name a changed host, or which a
 *   changed host's SIP labels name: fixed again and placed again, as a changed cluster is;
 * - and, as for any change, the turns the claims this moves reach.
 */
export function replanHosts(index: TraceIndex, inventory: Inventory): Replanned {
  const hostChanges = index.inventory.changesTo(inventory);
  const now = new TraceIndex(index.trace, inventory, index.lock, index.inventory);
  const readers = new Set<number>();
  const reader = (position: number) => readers.add(position);
  const macs = new Set<string>();
  const affected = new Set<ClusterKey>();
  for (const { before, after } of hostChanges) {
    const facts = changedFacts(before, after);
    // What read the host as it was, and what reads it where it is now (its best-fit rank, the
    // selectors it matches may have moved). Positions are the same in both: the turns are.
    if (before) index.reads.readersOf(before, facts, -1, index.reads.drained(), reader);
    if (after) now.reads.readersOf(after, facts, -1, now.reads.drained(), reader);
    const [macsBefore, macsAfter] = [before?.macs ?? [], after?.macs ?? []];
    if (macsBefore.join() !== macsAfter.join())
      for (const mac of [...macsBefore, ...macsAfter]) macs.add(mac);
    for (const host of [before, after]) {
      const owner = host && sipOwnerKey(host);
      if (owner !== undefined) affected.add(owner);
    }
  }
  for (const mac of macs) for (const key of index.refix.clustersNamingMac(mac)) affected.add(key);
  const ids = new Set(hostChanges.flatMap(({ before, after }) => (before ?? after)?.id ?? []));
  for (const entry of index.refix.lockEntriesAbout(ids, [])) {
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
  return withEveryOutcome(now, reached, { refix: [...refix], readers });
}

/**
 * Places again, in planning order, every turn `changes` and `hostChanges` reach, handing each
 * outcome to `placedTurn`; `complete` assembles the whole trace from the outcomes kept.
 */
function placeAgain(
  index: TraceIndex,
  changes: ReadonlyMap<ClusterKey, ClusterChange>,
  hostChanges: HostChanges,
  /**
   * Whole outcomes, which keep their reads (see `TurnSetting.records`) and every finding, for
   * `complete`; else a review's findings (see {@link replanFindings}).
   */
  records: boolean,
  placedTurn: (outcome: TurnOutcome) => void,
): { fixedIssues: readonly Issue[]; complete(placed: readonly TurnOutcome[]): PlanTrace } {
  const { trace, inventory } = index;
  const clusters = changedClusters(trace.clusters, changes);
  const fixed = fixAgain(index.refix, clusters, changes, hostChanges.refix);

  const turnClaims = new ChangedTurnClaims(trace.turnClaims);
  const claims = new RunClaims(fixed.claims, turnClaims);

  const queue = new TurnQueue(index);
  for (const key of changes.keys()) {
    queue.add({ pass: "sip", key });
    queue.add({ pass: "bpa", key });
  }
  const enqueue = (position: number) => queue.addAt(position);
  const movedDrained = index.reads.drained();
  for (const host of fixed.moved) index.reads.readersOf(host, HOST_FACTS.claim, -1, movedDrained, enqueue);
  for (const position of hostChanges.readers) enqueue(position);
  // Claimed hosts every turn may have all the same: those the change moved, and those whose turn
  // claims planning again changed (added as they change).
  const reopened = new ReopenedHosts(inventory);
  for (const host of [...fixed.moved, ...hostChanges.refix]) reopened.add(host);
  // Reader lists given out already (see `ReadIndex.readersOf`).
  const drained = index.reads.drained();

  // Turns of the trace placed again (or gone): their outcomes in the trace no longer stand. Only
  // `complete` asks, which a review never calls.
  const replaced = new Set<string>();
  for (let next = queue.next(); next !== undefined; next = queue.next()) {
    const { turn: current, position } = next;
    // Every turn the trace lacks is a changed cluster's: an unchanged one has its position there.
    const changed = changes.has(current.key);
    // Claimed hosts open to the turn all the same: its own, and those the change reopened.
    // A cluster the change does not name holds what the trace fixed (`fixAgain` fixes again only
    // the lock entries and releases of the changed clusters).
    const { work, own } = changed
      ? {
          work: workOf(clusters, current),
          own: ownFixedHosts(current.key, fixed.claims, clusters, inventory, trace.cache),
        }
      : index.unchangedTurnAt(position);
    const outcome =
      work &&
      placeTurn(work, {
        inventory,
        claims,
        cache: trace.cache,
        bestFit: index.candidates.candidatesFor(
          position,
          own,
          reopened,
          (host) => claims.earlier(host, current) !== undefined,
        ),
        // Only SIP roles walk a selector's matches.
        openMatches:
          current.pass === "sip"
            ? index.candidates.openMatchesFor(position, {
                *[Symbol.iterator]() {
                  yield* own;
                  yield* reopened.all;
                },
              })
            : undefined,
        explains: false,
        records,
        warns: records || changed,
        // Alone in its run, the turn may drop from its candidates every host another cluster holds.
        stillPlanning: (cluster) => cluster === current.key,
      });
    const before = index.outcomeAt(position);
    if (outcome) placedTurn(outcome);
    if (records && (before || outcome)) replaced.add(turnId(current));
    for (const id of changedClaims(before, outcome)) {
      const claim = outcome?.claims.get(id);
      claims.changed();
      let held: TurnClaim | undefined;
      if (claim) turnClaims.set(id, (held = turnClaim(current, claim)));
      else {
        held = turnClaims.get(id);
        // A host this turn gave up may have gone to an earlier turn placed again; that claim stays.
        if (sameTurn(held?.turn, current)) {
          turnClaims.giveUp(id);
          held = undefined;
        }
      }
      // Looked up once for both: every turn a cascade moves changes a few claims.
      const ranked = inventory.rankedById(id);
      if (!ranked) continue;
      const { host, rank } = ranked;
      if (held === undefined) reopened.add(host, rank);
      else reopened.hold(host, rank);
      index.reads.readersOf(host, HOST_FACTS.claim, position, drained, enqueue, rank);
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
      const claimsNow = turnClaims.merged();
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
        cache: trace.cache,
        isLive,
      });
      return {
        ...assemble(merged, fixedNow, turns),
        clusters: merged,
        fixed: fixedNow,
        turns,
        turnClaims: claimsNow,
        cache: trace.cache,
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
  fixed: Pick<FixedClaims, "heldByLock" | "releasing">,
  clusters: PlanClusters,
  inventory: Inventory,
  cache: PlanCache,
): Host[] {
  const group = clusters.bpaByKey.get(key);
  // Loops, not spreads: every turn a cascade moves asks, and most clusters hold nothing yet.
  const hosts: Host[] = group ? macNamedHosts(group, inventory, cache) : [];
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
  // The group itself, not a copy: a cascade asks this of hundreds of turns.
  return group && isProvisioned(group) ? { pass: "bpa", key: turn.key, group } : undefined;
}

/**
 * The turn claims as planning a change leaves them: the trace's, with those the change decided over
 * them. One lookup where the change decided, else the trace's: every host a moved turn looks at asks.
 */
class ChangedTurnClaims implements TurnClaims {
  /** Host id → the claim, or {@link UNCLAIMED} where the turn that held it gave it up. */
  readonly #changed = new Map<string, TurnClaim | typeof UNCLAIMED>();

  constructor(private readonly trace: ReadonlyMap<string, TurnClaim>) {}

  get(id: string): TurnClaim | undefined {
    const now = this.#changed.get(id);
    return now === undefined ? this.trace.get(id) : now === UNCLAIMED ? undefined : now;
  }

  set(id: string, claim: TurnClaim): void {
    this.#changed.set(id, claim);
  }

  /** The turn that held `id` gave it up. */
  giveUp(id: string): void {
    this.#changed.set(id, UNCLAIMED);
  }

  /** Every turn claim, as a trace keeps them. */
  merged(): Map<string, TurnClaim> {
    const claims = new Map(this.trace);
    for (const [id, claim] of this.#changed) {
      if (claim === UNCLAIMED) claims.delete(id);
      else claims.set(id, claim);
    }
    return claims;
  }
}

/** In {@link ChangedTurnClaims}: the host's turn claim was given up. */
const UNCLAIMED = Symbol("unclaimed");

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
const NO_HOSTS: readonly Host[] = [];

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
  /**
   * The trace's turns added, by position: an array rather than a set, as a cascade finds each of
   * hundreds of turns many times over.
   */
  readonly #seenAt: Uint8Array;
  /** Turns the trace lacks (between two of its turns) added, by id. */
  readonly #seenElsewhere = new Set<string>();

  constructor(private readonly index: TraceIndex) {
    this.#seenAt = new Uint8Array(index.trace.turns.length);
  }

  /** Adds `turn` unless it was added before. */
  add(turn: Turn): void {
    const position = this.index.positionOf(turn);
    if (Number.isInteger(position)) return this.addAt(position);
    const id = turnId(turn);
    if (this.#seenElsewhere.has(id)) return;
    this.#seenElsewhere.add(id);
    this.#push({ turn, position });
  }

  /** Adds the trace's turn at `position` unless it was added before. */
  addAt(position: number): void {
    if (this.#seenAt[position] === 1) return;
    this.#seenAt[position] = 1;
    this.#push({ turn: this.index.turnAt(position), position });
  }

  #push(added: PositionedTurn): void {
    const heap = this.#heap;
    heap.push(added);
    for (let at = heap.length - 1; at > 0;) {
      const parent = (at - 1) >>> 1;
      if (!earlier(heap[at]!, heap[parent]!)) break;
      swap(heap, at, parent);
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
      const left = 2 * at + 1;
      const right = left + 1;
      let least = at;
      if (left < heap.length && earlier(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && earlier(heap[right]!, heap[least]!)) least = right;
      if (least === at) return first;
      swap(heap, at, least);
      at = least;
    }
  }
}

/** Swaps two items in place (a destructuring swap allocates an array each time). */
function swap<T>(items: T[], a: number, b: number): void {
  const item = items[a]!;
  items[a] = items[b]!;
  items[b] = item;
}

/** Planning order; two turns the trace lacks may share a position between the same two of its turns. */
function earlier(a: PositionedTurn, b: PositionedTurn): boolean {
  return a.position < b.position || (a.position === b.position && compareTurns(a.turn, b.turn) < 0);
}
