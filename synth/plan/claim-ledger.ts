import type { ClusterKey } from "../cluster-key.ts";
import { pushTo } from "../group.ts";
import type { Host } from "../inventory/host.ts";
import type { ClaimView } from "../model/claims.ts";

/** Why a host belongs to a cluster; used for `host-claimed` messages. */
export interface Claim {
  /** The cluster holding the host. */
  readonly cluster: ClusterKey;
  /** Why it holds it, as a message fragment: `recorded for a/b in rendered/metalsynth.lock.yaml`. */
  readonly why: string;
  /** Allocation order: a decision only sees claims made before it (explain stays truthful). */
  readonly sequence: number;
}

/** A claim as a source outside the ledger knows it (the SIP labels of the inventory). */
export type StandingClaim = Omit<Claim, "sequence">;

/** A host a cluster is giving up: it keeps it, with the role it served, until its labels are gone. */
export interface Release {
  readonly host: Host;
  readonly role: string;
}

/**
 * The hosts clusters hold, in the order they were claimed (the scheduler's cache of assumed pods,
 * made deterministic). One ledger records the fixed claims (lock, MAC entries), and one each turn's
 * placement (`turns.ts`). Claims made elsewhere come from `standing`, consulted when a host is
 * looked at rather than copied up front: the SIP labels of a region's inventory for the fixed
 * claims, the fixed claims and earlier turns' for a turn. A standing claim counts as made before
 * everything recorded here.
 */
export class ClaimLedger {
  readonly #claims = new Map<string, Claim>();
  /** Made on the first release: a turn's ledger, one per turn placed, releases nothing. */
  #releasing: Map<ClusterKey, Release[]> | undefined;
  readonly #standing: (host: Host) => StandingClaim | undefined;
  #sequence = 0;

  constructor(standing: (host: Host) => StandingClaim | undefined = () => undefined) {
    this.#standing = standing;
  }

  /** Who holds `host`, and why, as far as planning has got. */
  claimOf(host: Host): Claim | undefined {
    const recorded = this.#claims.get(host.id);
    if (recorded) return recorded;
    const standing = this.#standing(host);
    // Built field by field: standing claims come in several shapes, and spreading them is slow on
    // a path every host a placement looks at takes.
    return standing && { cluster: standing.cluster, why: standing.why, sequence: 0 };
  }

  /** The claims recorded here (standing claims are not), by host id. */
  get recorded(): ReadonlyMap<string, Claim> {
    return this.#claims;
  }

  /** Whether a claim on `host` was recorded here (standing claims do not count). */
  isRecorded(host: Host): boolean {
    return this.#claims.has(host.id);
  }

  /**
   * Gives `host` to `cluster`. A cluster claiming its own host again (the lock's hosts, when the
   * cluster is planned) keeps the original sequence, so earlier views still see it. Claiming a host
   * another cluster has recorded is a bug: every placement filters such hosts out first.
   */
  claim(host: Host, cluster: ClusterKey, why: string): void {
    const recorded = this.#claims.get(host.id);
    if (recorded && recorded.cluster !== cluster) {
      throw new Error(`ClaimLedger: ${host.id} is held by ${recorded.cluster}, not free for ${cluster}`);
    }
    const existing = recorded ?? this.claimOf(host);
    const sequence = existing?.cluster === cluster ? existing.sequence : ++this.#sequence;
    this.#claims.set(host.id, { cluster, why, sequence });
  }

  /**
   * Records that `cluster` is releasing `host` (its SIP labels are removed first): the host stays
   * with it, unless something recorded a claim on it earlier, so no other cluster patches the same
   * BareMetalHost meanwhile.
   */
  release(host: Host, cluster: ClusterKey, role: string, why: string): void {
    if (!this.isRecorded(host)) this.claim(host, cluster, why);
    pushTo((this.#releasing ??= new Map()), cluster, { host, role });
  }

  /** The hosts `cluster` is releasing, in the order they were recorded. */
  releasing(cluster: ClusterKey): readonly Release[] {
    return this.#releasing?.get(cluster) ?? NO_RELEASES;
  }

  /** Every cluster releasing hosts, in the order they were first recorded. */
  releasingClusters(): ClusterKey[] {
    return [...(this.#releasing?.keys() ?? [])];
  }

  /**
   * Counts the claims that gave a host an owner it did not have: while it stays the same, every
   * {@link view} sees the same owners.
   */
  get revision(): number {
    return this.#sequence;
  }

  /** The owners as they stand now, for one decision; later claims are invisible to it. */
  view(): ClaimView {
    return new LedgerView(this.#claims, this.#standing, this.#sequence);
  }
}

/** {@link ClaimLedger.view}: one object a decision, not an object, a closure and its context. */
class LedgerView implements ClaimView {
  constructor(
    private readonly claims: ReadonlyMap<string, Claim>,
    private readonly standing: (host: Host) => StandingClaim | undefined,
    /** The last sequence the view sees. */
    private readonly limit: number,
  ) {}

  ownerOf(host: Host): ClusterKey | undefined {
    // Without building a claim: placing asks this of every host it walks.
    const recorded = this.claims.get(host.id);
    if (recorded) return recorded.sequence <= this.limit ? recorded.cluster : undefined;
    return this.standing(host)?.cluster;
  }
}

/** What a cluster releasing nothing releases: one list for every such answer. */
export const NO_RELEASES: readonly Release[] = [];

/** Whether two claims give a host to the same cluster for the same reason. */
export function sameClaim(a: StandingClaim | undefined, b: StandingClaim | undefined): boolean {
  return a?.cluster === b?.cluster && a?.why === b?.why;
}
