import { describe, expect, it } from "vitest";
import { WebhookMetrics } from "./metrics.ts";

describe("WebhookMetrics", () => {
  it("exports the process and Node.js default metrics beside its own", async () => {
    const metrics = new WebhookMetrics(() => ({ hosts: 3, ageSeconds: 1 }));
    const text = await metrics.registry.metrics();
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_open_fds",
      "nodejs_heap_size_used_bytes",
      "nodejs_eventloop_lag_seconds",
      "nodejs_gc_duration_seconds",
      "metalsynth_webhook_inventory_hosts",
    ]) {
      expect(text, name).toMatch(new RegExp(`^# TYPE ${name} `, "m"));
    }
    expect(text).toMatch(/^metalsynth_webhook_inventory_hosts 3$/m);
  });

  it("keeps each registry's metrics apart: two servers in one process both export them", async () => {
    const [first, second] = [1, 2].map((hosts) => new WebhookMetrics(() => ({ hosts, ageSeconds: 0 })));
    first?.requests.inc({ kind: "Provisioning", result: "allowed" });
    expect(await second?.registry.metrics()).not.toMatch(/^metalsynth_webhook_requests_total\{/m);
    expect(await second?.registry.metrics()).toMatch(/^process_cpu_seconds_total /m);
    expect(await first?.registry.metrics()).toMatch(/^process_cpu_seconds_total /m);
  });
});
