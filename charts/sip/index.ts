import type { Chart } from "cdk8s";
import type { Construct } from "constructs";
import type { SipRender } from "../../synth/plan/render-plan.ts";
import type { SiteSettings } from "../../synth/schema/settings.ts";
import { AuthChart } from "./auth.ts";
import { BmhLabelsChart, type BmhLabelsChartProps } from "./bmh-labels.ts";
import { JumpHostChart } from "./jumphost.ts";
import { LoadBalancerChart } from "./loadbalancer.ts";
import { chartId } from "../metadata.ts";

export { BmhLabelsChart, type BmhLabelsChartProps } from "./bmh-labels.ts";

/** The label Job of {@link BmhLabelsChart}: the kubectl image and the site's pull policy. */
export function labelJobProps(settings: SiteSettings): BmhLabelsChartProps["labelJob"] {
  return { image: settings.images.kubectl, imagePullPolicy: settings.job.imagePullPolicy };
}
export { AuthChart, type AuthChartProps } from "./auth.ts";
export { JumpHostChart, type JumpHostChartProps } from "./jumphost.ts";
export { LoadBalancerChart, type LoadBalancerChartProps, type LoadBalancerTier } from "./loadbalancer.ts";

/**
 * The charts of a SIPCluster, per file of its `rendered/clusters/<ns>/<cluster>/` directory
 * (docs/contract.md §4.2): `bmh-labels.yaml` when any host gains or loses SIP labels, and `jumphost.yaml`,
 * `loadbalancer-controlplane.yaml`, `loadbalancer-worker.yaml`, `auth.yaml` each only when the CR asks
 * for that service, so no chart is empty. Chart ids carry the namespace and cluster, like the BPA charts', so
 * one App can hold a whole site.
 */
export function addSipClusterCharts(
  scope: Construct,
  cluster: SipRender,
  settings: SiteSettings,
): Map<string, Chart> {
  const charts = new Map<string, Chart>();
  const id = (component: string) => chartId(cluster, component);
  const { services } = cluster.sip;
  if ((services.auth ?? []).length > 0) {
    charts.set("auth.yaml", new AuthChart(scope, id("auth"), { cluster, settings }));
  }
  if (cluster.members.length > 0 || cluster.released.length > 0) {
    charts.set(
      "bmh-labels.yaml",
      new BmhLabelsChart(scope, id("bmh-labels"), { cluster, labelJob: labelJobProps(settings) }),
    );
  }
  if ((services.jumpHost ?? []).length > 0) {
    charts.set("jumphost.yaml", new JumpHostChart(scope, id("jumphost"), { cluster, settings }));
  }
  const tiers = [
    ["controlplane", services.loadBalancerControlPlane],
    ["worker", services.loadBalancerWorker],
  ] as const;
  for (const [tier, tierServices] of tiers) {
    if ((tierServices ?? []).length === 0) continue;
    const component = `loadbalancer-${tier}`;
    charts.set(`${component}.yaml`, new LoadBalancerChart(scope, id(component), { cluster, settings, tier }));
  }
  return charts;
}
