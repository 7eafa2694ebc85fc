import { Chart } from "cdk8s";
import { KubeObject } from "./kube-object.ts";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import { kudRoles } from "../synth/hosts-ini.ts";
import { bpaObjectNames } from "../synth/names.ts";
import type { BpaRender } from "../synth/plan/render-plan.ts";
import { SYNC_WAVES, clusterChartProps, waveAnnotations } from "./metadata.ts";

/** Props of {@link ClusterConfigMapChart}. */
export interface ClusterConfigMapChartProps {
  /** The cluster's plan: its nodes and their addresses. */
  readonly cluster: BpaRender;
}

/**
 * The cluster's address book `<cluster>-configmap` (docs/contract.md §4.1), as upstream BPA published it for
 * other tools: `MASTER_<label>` / `WORKER_<label>` → IP. A host in both roles has both keys, and a
 * cluster without workers lists its masters as workers too, as upstream did. Upstream wrote it only
 * after the installer succeeded; here it is plain desired state, synced with the installer's wave.
 */
export class ClusterConfigMapChart extends Chart {
  constructor(scope: Construct, id: string, props: ClusterConfigMapChartProps) {
    const { cluster } = props;
    super(scope, id, clusterChartProps(cluster));
    const roles = kudRoles(cluster.masters, cluster.workers);
    const data: Record<string, string> = {};
    for (const node of roles.masters) data[`MASTER_${node.label}`] = node.ip;
    for (const node of roles.workers) data[`WORKER_${node.label}`] = node.ip;
    new KubeObject(
      this,
      "configmap",
      k8s.KubeConfigMap.manifest({
        metadata: {
          name: bpaObjectNames(cluster.name).addressBook,
          annotations: waveAnnotations(SYNC_WAVES.installer),
        },
        data,
      }),
    );
  }
}
