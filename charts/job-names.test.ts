import { describe, expect, it } from "vitest";
import { readJob, jobNameStem, JOB_PREFIXES, type JobComponent } from "../synth/status/objects.ts";
import { clusterLabels, hashedJob } from "./metadata.ts";

/**
 * The status reporter finds a cluster's Jobs by the names the charts give them (synth/status/
 * objects.ts cannot import charts/): every component, short and long cluster names alike.
 */
describe("the rendered Jobs' names, as the status reporter reads them", () => {
  const clusters = [
    "east",
    "a-cluster-name-of-fifty-characters-long-enough-to-cut",
    "x".repeat(63),
    "ends-in-a-dash-at-the-cut-" + "y".repeat(40),
  ];
  const components = Object.keys(JOB_PREFIXES) as JobComponent[];
  it.each(components.flatMap((component) => clusters.map((cluster) => [component, cluster] as const)))(
    "finds the %s Job of %s",
    (component, cluster) => {
      const { name } = hashedJob(
        JOB_PREFIXES[component],
        { namespace: "edge-a", name: cluster },
        { template: { spec: { containers: [] } } },
        {},
      );
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name.startsWith(jobNameStem(component, cluster))).toBe(true);
      const job = readJob({
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name, namespace: "edge-a", labels: clusterLabels(cluster) },
      });
      expect(job).toMatchObject({ name, cluster, component, phase: "Pending" });
    },
  );
});
