/**
 * A value a rule derives from one immutable input alone (a Provisioning, a host, an entry's needs),
 * which planning asks for again and again: the webhook places the same turns on the same hosts,
 * review after review (decision 0042). The rule declares how to derive it; the planner keeps it.
 */
export interface Derived<K extends object, V> {
  readonly derive: (key: K) => V;
}

/**
 * Per-plan state (the scheduler framework's CycleState): made by the planner for one plan, passed
 * to the rules through the planning context, dropped with the plan (decision 0067). Rules keep no
 * cache of their own at module level.
 */
export interface PlanCache {
  /** `derived` of `key`, derived on the first ask of this plan. */
  get<K extends object, V>(derived: Derived<K, V>, key: K): V;
}
