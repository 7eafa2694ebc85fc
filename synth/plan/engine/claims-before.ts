import type { Host } from "../../inventory/host.ts";
import type { StandingClaim } from "../claim-ledger.ts";
import type { FixedClaims } from "../fixed-claims.ts";
import { compareTurns, type ClaimsBefore, type Turn, type TurnClaim } from "../turns.ts";

/** The claims turns made, by host id, as the run has them so far. */
export type TurnClaims = Pick<ReadonlyMap<string, TurnClaim>, "get">;

/**
 * {@link ClaimsBefore} for one run, a whole site's (`plan-site.ts`) or a change's (`replan.ts`): for
 * every turn placed, and for the explanations asked long after. Each turn's recording view
 * (`reads.ts`) and its best-fit candidates ask here, and nothing else keeps an answer.
 */
export class RunClaims implements ClaimsBefore {
  /**
   * The last question and its answers, until the turn asked for or a turn's claims change: a turn's
   * walk asks of a candidate, then its claim filter of the same host, then taking the host once more.
   */
  #askedHost: Host | undefined;
  #askedTurn: Turn | undefined;
  #earlier: TurnClaim | undefined;
  /** The fixed claim besides, once asked for: a best-fit walk asks only for {@link earlier}. */
  #claim: StandingClaim | undefined;
  #claimKnown = false;

  constructor(
    readonly fixed: FixedClaims,
    private readonly turnClaims: TurnClaims,
  ) {}

  /** Who holds `host` before `turn`: the claim an earlier turn made, else its fixed claim. */
  claimOf(host: Host, turn: Turn): StandingClaim | undefined {
    this.#ask(host, turn);
    if (!this.#claimKnown) {
      this.#claim = this.#earlier ?? this.fixed.claimOf(host);
      this.#claimKnown = true;
    }
    return this.#claim;
  }

  /** The claim a turn before `turn` made on `host`, if any. */
  earlier(host: Host, turn: Turn): TurnClaim | undefined {
    this.#ask(host, turn);
    return this.#earlier;
  }

  /** Turns' claims were recorded or given up: no answer given so far is kept. */
  changed(): void {
    this.#askedHost = undefined;
  }

  #ask(host: Host, turn: Turn): void {
    const asked = this.#askedTurn;
    if (host === this.#askedHost && turn.key === asked?.key && turn.pass === asked.pass) return;
    const claim = this.turnClaims.get(host.id);
    this.#earlier = claim && compareTurns(claim.turn, turn) < 0 ? claim : undefined;
    this.#claimKnown = false;
    this.#askedHost = host;
    this.#askedTurn = turn;
  }
}
