import type { Chart } from "cdk8s";
import type { Construct } from "constructs";
import type { BpaRender } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { ClusterConfigMapChart } from "./cluster-configmap.ts";
import { KudInstallerChart } from "./kud-installer.ts";
import { SoftwareChart } from "./software.ts";
import { chartId } from "./metadata.ts";
import { isRecord } from "../synth/inventory/raw.ts";

export { ClusterConfigMapChart, type ClusterConfigMapChartProps } from "./cluster-configmap.ts";
export { KudInstallerChart, type KudInstallerChartProps } from "./kud-installer.ts";
export { SoftwareChart, type SoftwareChartProps } from "./software.ts";

/**
 * The charts of a BPA cluster, per file of its `rendered/clusters/<ns>/<cluster>/` directory
 * (docs/contract.md §4): `cluster-configmap.yaml`, `kud-installer.yaml` and, with a Software CR,
 * `software.yaml`. Objects within a chart are in a fixed order (ConfigMaps and RBAC before the Job
 * that needs them). Chart ids carry the cluster, so one App can hold a whole site.
 */
export function addBpaClusterCharts(
  scope: Construct,
  cluster: BpaRender,
  settings: SiteSettings,
): Map<string, Chart> {
  const charts = new Map<string, Chart>();
  const id = (component: string) => chartId(cluster, component);
  const { images, sshKeySecret, job } = settings;
  charts.set(
    "cluster-configmap.yaml",
    new ClusterConfigMapChart(scope, id("cluster-configmap"), { cluster }),
  );
  charts.set(
    "kud-installer.yaml",
    new KudInstallerChart(scope, id("kud-installer"), { cluster, images, sshKeySecret, job }),
  );
  const { software } = cluster;
  if (software) {
    charts.set(
      "software.yaml",
      new SoftwareChart(scope, id("software"), { cluster, software, images, sshKeySecret, job }),
    );
  }
  return charts;
}

/**
 * A chart's objects as plain JSON with a fixed key order: `apiVersion`, `kind`, `metadata`, then
 * the rest sorted at every level. cdk8s sorts keys too, unless CDK8S_DISABLE_SORT is set; rendered
 * output must not depend on the environment (docs/contract.md §3.4).
 */
export function objectsOf(chart: Chart): unknown[] {
  return chart.toJson().map((object: unknown) => {
    const sorted = sortKeys(object);
    if (!isRecord(sorted)) return sorted;
    const { apiVersion, kind, metadata, ...rest } = sorted;
    return { apiVersion, kind, metadata, ...rest };
  });
}

/**
 * `value` with keys sorted at every level. cdk8s has sorted most of them already (its generated
 * converters rebuild some objects in field order), so a subtree whose keys are in order is returned
 * as it is rather than copied.
 */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(sortKeys);
    return items.every((item, index) => item === value[index]) ? value : items;
  }
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  let same = keys.every((key, index) => index === 0 || keys[index - 1]! <= key);
  const sorted = same ? keys : [...keys].sort();
  const values = sorted.map((key) => {
    const item = sortKeys(value[key]);
    if (item !== value[key]) same = false;
    return item;
  });
  return same ? value : Object.fromEntries(sorted.map((key, index) => [key, values[index]]));
}
