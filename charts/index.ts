import type { Chart } from "cdk8s";
import type { Construct } from "constructs";
import type { BpaRender } from "../synth/plan/render-plan.ts";
import type { SiteSettings } from "../synth/schema/settings.ts";
import { ClusterConfigMapChart } from "./cluster-configmap.ts";
import { KudInstallerChart } from "./kud-installer.ts";
import { SoftwareChart } from "./software.ts";
import { chartId } from "./metadata.ts";

export { ClusterConfigMapChart, type ClusterConfigMapChartProps } from "./cluster-configmap.ts";
export { KudInstallerChart, type KudInstallerChartProps } from "./kud-installer.ts";
export { SoftwareChart, type SoftwareChartProps } from "./software.ts";
export { KubeObject, objectsOf } from "./kube-object.ts";

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
