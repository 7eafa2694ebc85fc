/**
 * What the SIP service charts share: which members a service reaches and under which name, and the
 * Deployment + NodePort Service pair every service runs as (named by `serviceObjectName` in
 * `synth/names.ts`).
 */
import {
  parseDnsSubdomain,
  type DnsSubdomain,
  type InterfaceId,
  type IpAddress,
} from "../../synth/checked.ts";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import { hash8 } from "../../synth/content-hash.ts";
import { ipForInterface } from "../../synth/inventory/host.ts";
import { compareText } from "../../synth/issue.ts";
import type { SipMember } from "../../synth/plan/model.ts";
import type { SipRender } from "../../synth/plan/render-plan.ts";
import { KubeObject } from "../kube-object.ts";
import { clusterLabels } from "../metadata.ts";

/** Pod annotation holding a hash of the pod's ConfigMap: a changed config rolls the Deployment. */
const CONFIG_HASH_ANNOTATION = "metalsynth.io/config-hash";

/** A member as a service sees it: the name it is known by and its address on the service's interface. */
export interface ServedHost {
  readonly member: SipMember;
  /**
   * The BMH's name, or `<name>.<namespace>` when the cluster has two hosts of that name in different
   * namespaces: it names HAProxy servers, ssh_config hosts and pod hostAliases, so it must be unique.
   */
  readonly name: DnsSubdomain;
  readonly ip: IpAddress;
}

/**
 * The cluster's members (all, or those of `role`, standby hosts included) with their address on
 * `interfaceId`, sorted by name, so the output never depends on the order the planner listed them in.
 * The planner only chooses hosts with an IP on every service interface (decision 0004), so a missing
 * address here is a bug, not an input problem.
 */
export function servedHosts(
  cluster: SipRender,
  interfaceId: InterfaceId,
  which: { readonly role?: string } = {},
): ServedHost[] {
  const nameCount = new Map<string, number>();
  for (const member of cluster.members) {
    nameCount.set(member.host.name, (nameCount.get(member.host.name) ?? 0) + 1);
  }
  return cluster.members
    .filter((member) => which.role === undefined || member.role === which.role)
    .map((member) => {
      const ip = ipForInterface(member.host, interfaceId);
      if (ip === undefined) {
        throw new Error(
          `${member.host.id} has no IP on interface ${interfaceId}: the planner must not choose it for ${cluster.key}`,
        );
      }
      const { name, namespace } = member.host;
      // A subdomain, a dot and a label make a subdomain, unless it grows past 253 characters.
      const qualified = (nameCount.get(name) ?? 0) > 1 ? parseDnsSubdomain(`${name}.${namespace}`) : name;
      if (qualified === undefined) {
        throw new Error(`${member.host.id}: ${name}.${namespace} is longer than a host name may be`);
      }
      return { member, name: qualified, ip };
    })
    .sort((a, b) => compareText(a.name, b.name));
}

/** One port a service publishes: the same number in the container, the Service and (unless 0) the node. */
export interface PublishedPort {
  /** Port name (at most 15 characters, as Kubernetes requires of container port names). */
  readonly name: string;
  readonly port: number;
  /** The NodePort; 0 lets Kubernetes choose. */
  readonly nodePort: number;
}

/** Props of {@link serviceWorkload}. */
export interface ServiceWorkloadProps {
  /** Name of the ConfigMap, the Deployment and the Service. */
  readonly name: string;
  /** `app.kubernetes.io/name` of the pods: `haproxy`, `jumphost`. */
  readonly app: string;
  readonly cluster: SipRender;
  /** Annotations of the three objects (the sync wave). */
  readonly annotations: Record<string, string>;
  /** The ConfigMap's data; its hash goes on the pod template. */
  readonly configData: Record<string, string>;
  readonly replicas: number;
  /** The pod spec; the chart adds nothing to it. */
  readonly podSpec: (selector: Record<string, string>) => k8s.PodSpec;
  /** Ports of the NodePort Service, targeting the container ports of the same number. */
  readonly ports: readonly PublishedPort[];
}

/**
 * A SIP service's ConfigMap, Deployment and NodePort Service, in that order. The pod template
 * carries a hash of the ConfigMap's data: the config is mounted from a ConfigMap whose name never
 * changes, and neither HAProxy nor sshd rereads it, so only a new pod picks up a change.
 */
export function serviceWorkload(scope: Construct, props: ServiceWorkloadProps): void {
  const { name, annotations, cluster } = props;
  const selector = { "app.kubernetes.io/name": props.app, "app.kubernetes.io/instance": name };
  new KubeObject(
    scope,
    `${name}-config`,
    k8s.KubeConfigMap.manifest({
      metadata: { name, annotations },
      data: props.configData,
    }),
  );
  new KubeObject(
    scope,
    `${name}-deployment`,
    k8s.KubeDeployment.manifest({
      metadata: { name, annotations },
      spec: {
        replicas: props.replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: {
            labels: { ...clusterLabels(cluster.name), ...selector },
            annotations: { [CONFIG_HASH_ANNOTATION]: hash8(props.configData) },
          },
          spec: props.podSpec(selector),
        },
      },
    }),
  );
  new KubeObject(
    scope,
    `${name}-service`,
    k8s.KubeService.manifest({
      metadata: { name, annotations },
      spec: {
        type: "NodePort",
        selector,
        ports: props.ports.map((published) => ({
          name: published.name,
          protocol: "TCP",
          port: published.port,
          targetPort: k8s.IntOrString.fromNumber(published.port),
          ...(published.nodePort === 0 ? {} : { nodePort: published.nodePort }),
        })),
      },
    }),
  );
}
