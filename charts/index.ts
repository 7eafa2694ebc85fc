import { App, type Chart } from "cdk8s";
import type { BpaClusterPlan } from "../synth/plan/model.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { ClusterConfigMapChart } from "./cluster-configmap.ts";
import { KudInstallerChart } from "./kud-installer.ts";
import { SoftwareChart } from "./software.ts";

export { ClusterConfigMapChart, type ClusterConfigMapChartProps } from "./cluster-configmap.ts";
export { KudInstallerChart, type KudInstallerChartProps } from "./kud-installer.ts";
export { SoftwareChart, type SoftwareChartProps } from "./software.ts";

/**
 * The Kubernetes objects of a BPA cluster, per file of its `rendered/clusters/<ns>/<cluster>/`
 * directory (SPEC §4): `cluster-configmap.yaml`, `kud-installer.yaml` and, with a Software CR,
 * `software.yaml`. Files are in name order, objects within a file in a fixed order (ConfigMaps and
 * RBAC before the Job that needs them). A cluster without a Provisioning has no hosts, so it renders
 * nothing: its Software CR has nowhere to install.
 */
export function bpaClusterObjects(cluster: BpaClusterPlan, settings: SiteSettings): Map<string, unknown[]> {
  const files = new Map<string, unknown[]>();
  if (!cluster.provisioning) return files;
  // One App per cluster: cdk8s resolves dependencies across the whole App on every chart synthesis,
  // so a site-wide App would make rendering quadratic in the number of clusters. Construct metadata
  // is off explicitly, whatever CDK8S_RECORD_CONSTRUCT_METADATA says.
  const app = new App({ recordConstructMetadata: false });
  files.set(
    "cluster-configmap.yaml",
    objectsOf(new ClusterConfigMapChart(app, "cluster-configmap", { cluster })),
  );
  files.set(
    "kud-installer.yaml",
    objectsOf(new KudInstallerChart(app, "kud-installer", { cluster, settings })),
  );
  if (cluster.software) {
    files.set("software.yaml", objectsOf(new SoftwareChart(app, "software", { cluster, settings })));
  }
  return files;
}

/**
 * A chart's objects as plain JSON with a fixed key order: `apiVersion`, `kind`, `metadata`, then
 * the rest sorted at every level. cdk8s sorts keys too, unless CDK8S_DISABLE_SORT is set; rendered
 * output must not depend on the environment (SPEC §3.4).
 */
export function objectsOf(chart: Chart): unknown[] {
  return chart.toJson().map((object: unknown) => {
    const sorted = sortKeys(object);
    if (!isRecord(sorted)) return sorted;
    const { apiVersion, kind, metadata, ...rest } = sorted;
    return { apiVersion, kind, metadata, ...rest };
  });
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys(value[key])]),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
