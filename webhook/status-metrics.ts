import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** One CR's readiness, as the ready gauge reads it when Prometheus scrapes. */
export interface ReadyReading {
  readonly namespace: string;
  readonly cluster: string;
  readonly kind: string;
  readonly ready: boolean;
}

/**
 * The status reporter's Prometheus metrics (docs/contract.md §5, decision 0059), in a registry of its
 * own: `metalsynth_cluster_ready{namespace,cluster,kind}` (1 when the CR's `Ready` condition is
 * True; two CRs of one kind and cluster read as one, ready only when both are), the writes and
 * Events it made, and the cost of its rounds.
 */
export class StatusMetrics {
  readonly registry = new Registry();
  readonly writes: Counter<"kind" | "result">;
  readonly events: Counter<"type">;
  readonly rounds: Histogram;

  constructor(readings: () => Iterable<ReadyReading>) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: "metalsynth_cluster_ready",
      help: "1 when the CR's Ready condition is True (its cluster's hosts, apply and Jobs all hold), else 0.",
      labelNames: ["namespace", "cluster", "kind"],
      registers,
      collect() {
        this.reset();
        const values = new Map<string, { labels: Omit<ReadyReading, "ready">; ready: boolean }>();
        for (const { ready, ...labels } of readings()) {
          const key = `${labels.namespace}\u0000${labels.cluster}\u0000${labels.kind}`;
          const known = values.get(key);
          values.set(key, { labels, ready: ready && (known?.ready ?? true) });
        }
        for (const { labels, ready } of values.values()) this.set(labels, ready ? 1 : 0);
      },
    });
    this.writes = new Counter({
      name: "metalsynth_status_writes_total",
      help: "Status writes (server-side applies to the status subresource) by CR kind and result.",
      labelNames: ["kind", "result"],
      registers,
    });
    this.events = new Counter({
      name: "metalsynth_status_events_total",
      help: "Events recorded for condition transitions (new Events and counted repeats) by type.",
      labelNames: ["type"],
      registers,
    });
    this.rounds = new Histogram({
      name: "metalsynth_status_round_duration_seconds",
      help: "Time to compute every CR's status after a change of what the reporter watches.",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
  }
}
