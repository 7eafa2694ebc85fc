/**
 * What planning may read of a host, as bits of one number: each filter declares the facts it reads
 * (`rules/filters.ts`), a turn records them with the hosts it read them of (`plan/engine/reads.ts`), and a
 * changed BareMetalHost says which it touched, so a change reaches only the turns that read what
 * changed (the scheduler framework's `EventsToRegister`, by host fact rather than by cluster event).
 */
import type { Host } from "./host.ts";
import { sameData } from "../same-data.ts";

export const HOST_FACTS = {
  /** Who holds the host: the lock, a MAC entry, SIP labels or an earlier turn. */
  claim: 1,
  /** CPUs, memory, SR-IOV, QAT and the inspected CPU: what the resource filters and best-fit order read. */
  hardware: 2,
  /** Labels, read by SIP roles' selectors and topology keys. */
  labels: 4,
  /** MACs, NICs and networkData addresses. */
  network: 8,
  /** Provisioning state, BMC and source position: what findings about a chosen host read. */
  state: 16,
  /** Consumer, deletion, power, errors, pause: whether a host may take a new node (decision 0052). */
  availability: 32,
} as const;

/** A set of {@link HOST_FACTS}, as their bits or'ed together. */
export type HostFacts = number;

/** Every fact: what a turn reads of a host it looked up by itself. */
export const EVERY_HOST_FACT: HostFacts = Object.values(HOST_FACTS).reduce((all, fact) => all | fact, 0);

/**
 * The fact each field of {@link Host} is. A mapped type over every field, so a field added to
 * `Host` does not compile until it says which fact it is: no change can slip past the index.
 */
const FACT_OF_FIELD: { readonly [Field in keyof Required<Host>]: HostFacts } = {
  // Identity: a host of another id is another host, so these never differ within one change.
  id: EVERY_HOST_FACT,
  namespace: EVERY_HOST_FACT,
  name: EVERY_HOST_FACT,
  labels: HOST_FACTS.labels,
  // SIP labels claim a host as well (the fixed claims are fixed again for it: `refix.ts`).
  sipOwner: HOST_FACTS.labels | HOST_FACTS.claim,
  sipPartial: HOST_FACTS.labels | HOST_FACTS.claim,
  cpus: HOST_FACTS.hardware,
  memoryBytes: HOST_FACTS.hardware,
  cpuArch: HOST_FACTS.hardware,
  cpuModel: HOST_FACTS.hardware,
  cpuFlags: HOST_FACTS.hardware,
  disks: HOST_FACTS.hardware,
  sriov: HOST_FACTS.hardware,
  qat: HOST_FACTS.hardware,
  bootMac: HOST_FACTS.network,
  macs: HOST_FACTS.network,
  nics: HOST_FACTS.network,
  networks: HOST_FACTS.network,
  networkData: HOST_FACTS.network,
  provisioningState: HOST_FACTS.state,
  osInstalled: HOST_FACTS.state,
  // Made in part of the provisioning state (the deleting states): a host that starts deleting
  // changes this field too, so turns that read only availability hear of it.
  availability: HOST_FACTS.availability,
  bmc: HOST_FACTS.state,
  source: HOST_FACTS.state,
};

const FIELDS = Object.keys(FACT_OF_FIELD) as (keyof Host)[];

/** The facts that differ between two reads of a host; every fact when it joined or left. */
export function changedFacts(before: Host | undefined, after: Host | undefined): HostFacts {
  if (before === undefined || after === undefined) return EVERY_HOST_FACT;
  let changed = 0;
  for (const field of FIELDS) if (!sameData(before[field], after[field])) changed |= FACT_OF_FIELD[field];
  return changed;
}

/** Hosts alike in some facts, as one of them and how many there are. */
export interface AlikeHosts {
  readonly host: Host;
  readonly count: number;
}

/** One level of {@link alikeIn}'s tree: the hosts whose values of the fields above led here. */
interface Level {
  readonly byValue: Map<unknown, Level>;
  group?: { readonly host: Host; count: number };
}

/**
 * `hosts` grouped by `facts`: hosts share a group when each field of those facts (identity aside)
 * holds the same value, lists the same list (the loader shares a list among hosts that have it
 * alike). A resource filter's verdict depends only on the facts it declares, so it judges one host
 * of a group for all of them: a `no-fit` histogram over a site of a few hardware kinds judges a few
 * hundred hosts, not ten thousand (decision 0069). Not so a filter of the placing cluster's own
 * state (`unused`, `named`, `other-role`): it declares no fact and tells hosts apart by id, so its
 * verdicts must never be taken from a group. Groups come in the order of their first host.
 */
export function alikeIn(hosts: Iterable<Host>, facts: HostFacts): AlikeHosts[] {
  const fields = FIELDS.filter(
    (field) => FACT_OF_FIELD[field] !== EVERY_HOST_FACT && (FACT_OF_FIELD[field] & facts) !== 0,
  );
  const groups: { readonly host: Host; count: number }[] = [];
  const root: Level = { byValue: new Map() };
  for (const host of hosts) {
    let level = root;
    for (const field of fields) {
      const value = host[field];
      let next = level.byValue.get(value);
      if (next === undefined) level.byValue.set(value, (next = { byValue: new Map() }));
      level = next;
    }
    if (level.group !== undefined) level.group.count++;
    else groups.push((level.group = { host, count: 1 }));
  }
  return groups;
}
