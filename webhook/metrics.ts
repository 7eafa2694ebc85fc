import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** How an admission request ended, the `result` label of the request counter. */
export type RequestResult =
  "allowed" | "denied" | "internal-error" | "unavailable" | "malformed" | "too-large" | "not-found";

/** What the inventory gauges read when Prometheus scrapes. */
export interface InventoryStats {
  readonly hosts: number;
  /** Seconds since the inventory was last known to be current; `undefined` before the first load. */
  readonly ageSeconds: number | undefined;
  /**
   * Damaged Allocations, and hosts contested (named by a damaged one, or listed by two), decision 0056.
   * @default none
   */
  readonly damage?: { readonly allocations: number; readonly hosts: number };
}

/**
 * The webhook's Prometheus metrics (docs/contract.md §5), in a registry of their own so that several servers in
 * one process (tests, the benchmark) don't share counters, with prom-client's default process and
 * Node.js metrics (CPU, resident memory, heap, event-loop lag, open file descriptors, GC), as the
 * other admission controllers of a cluster export them.
 */
export class WebhookMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<"kind" | "result">;
  readonly latency: Histogram<"kind">;

  constructor(inventory: () => InventoryStats) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: "metalsynth_webhook_requests_total",
      help: "Admission requests by CR kind and result.",
      labelNames: ["kind", "result"],
      registers,
    });
    this.latency = new Histogram({
      name: "metalsynth_webhook_request_duration_seconds",
      help: "Time from receiving an admission request to sending the response.",
      labelNames: ["kind"],
      // The API server gives up after timeoutSeconds (5 s); docs/contract.md §8 wants p99 under 10 ms.
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    new Gauge({
      name: "metalsynth_webhook_inventory_hosts",
      help: "BareMetalHosts in the inventory the rules run against.",
      registers,
      collect() {
        this.set(inventory().hosts);
      },
    });
    new Gauge({
      name: "metalsynth_webhook_allocations_damaged",
      help: "Allocations the webhook does not take for Git's truth (malformed, or not the site's): their clusters' CRs are refused.",
      registers,
      collect() {
        this.set(inventory().damage?.allocations ?? 0);
      },
    });
    new Gauge({
      name: "metalsynth_webhook_hosts_contested",
      help: "Hosts a damaged Allocation names or two Allocations list: given to no new node.",
      registers,
      collect() {
        this.set(inventory().damage?.hosts ?? 0);
      },
    });
    new Gauge({
      name: "metalsynth_webhook_inventory_age_seconds",
      help: "Seconds since the inventory was last known to be current (file loaded, or API server heard from).",
      registers,
      collect() {
        const age = inventory().ageSeconds;
        if (age === undefined) this.reset();
        else this.set(age);
      },
    });
  }
}
