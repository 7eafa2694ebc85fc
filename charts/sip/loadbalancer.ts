import { Chart } from "cdk8s";
import { k8s } from "cdk8s-plus-27";
import type { Construct } from "constructs";
import type { ImageReference, InterfaceId } from "../../synth/checked.ts";
import type { SipRender } from "../../synth/plan/render-plan.ts";
import type { SiteSettings } from "../../synth/schema/settings.ts";
import {
  SYNC_WAVES,
  clusterChartProps,
  nobodyPodSecurityContext,
  unprivilegedContainerSecurityContext,
  waveAnnotations,
} from "../metadata.ts";
import {
  HAPROXY_HEALTH_PATH,
  HAPROXY_HEALTH_PORT,
  haproxyConfig,
  type HaproxyHealthCheck,
} from "./haproxy-config.ts";
import { SERVICE_NAME_PREFIXES, serviceObjectName, type ServiceNamePrefix } from "../../synth/names.ts";
import { servedHosts, serviceWorkload, type PublishedPort } from "./workload.ts";

/** Which of a SIPCluster's load balancers. */
export type LoadBalancerTier = "controlplane" | "worker";

/** Props of {@link LoadBalancerChart}. */
export interface LoadBalancerChartProps {
  /** The SIPCluster's plan; its services list the load balancers to render. */
  readonly cluster: SipRender;
  /** `images.haproxy` is the image of a service that names none. */
  readonly settings: SiteSettings;
  readonly tier: LoadBalancerTier;
}

/** The Kubernetes API port, on the tenant's control-plane hosts and on the load balancer. */
const KUBE_APISERVER_PORT = 6443;
/** Where the HAProxy image reads its configuration (the official image's default command). */
const HAPROXY_CONFIG_DIR = "/usr/local/etc/haproxy";

interface Tier {
  /** What its objects' names start with. */
  readonly prefix: ServiceNamePrefix;
  /** The SIP role whose hosts, active and standby, are the backends. */
  readonly role: string;
  readonly check: HaproxyHealthCheck;
  /** Each service of the tier, with the ports it publishes. */
  readonly services: (cluster: SipRender) => TierService[];
}

interface TierService {
  readonly nodeInterfaceId: InterfaceId;
  readonly image?: ImageReference;
  readonly ports: readonly PublishedPort[];
}

const TIERS: Readonly<Record<LoadBalancerTier, Tier>> = {
  controlplane: {
    prefix: SERVICE_NAME_PREFIXES.loadBalancerControlPlane,
    role: "ControlPlane",
    check: "kube-apiserver",
    services: (cluster) =>
      (cluster.sip.services.loadBalancerControlPlane ?? []).map((service) => ({
        ...service,
        ports: [{ name: "kube-apiserver", port: KUBE_APISERVER_PORT, nodePort: service.nodePort }],
      })),
  },
  worker: {
    prefix: SERVICE_NAME_PREFIXES.loadBalancerWorker,
    role: "Worker",
    check: "tcp",
    // Each port of the range is a frontend, a container port and a Service port of the same number,
    // so a tenant NodePort reached through the load balancer keeps its number.
    services: (cluster) =>
      (cluster.sip.services.loadBalancerWorker ?? []).map((service) => {
        const ports: PublishedPort[] = [];
        for (let port = service.nodePortRange.start; port <= service.nodePortRange.end; port++) {
          ports.push({ name: `port-${port}`, port, nodePort: port });
        }
        return { ...service, ports };
      }),
  },
};

/**
 * A SIPCluster's control-plane or worker load balancers (docs/contract.md §4.2): per service of the tier, a
 * ConfigMap with `haproxy.cfg`, an HAProxy Deployment and a NodePort Service, all named
 * `loadbalancer-<tier>-<cluster>` (`-<index>` from the second service on).
 *
 * Every host labelled for the tier's role is a backend, standby hosts included: which labelled hosts
 * become nodes is the cluster's machine provider's choice, made after the render, so HAProxy's health
 * checks take idle hosts out of rotation and bring them in when they start serving. A promotion thus
 * changes no config and rolls no pods; only a host joining or leaving the role does.
 */
export class LoadBalancerChart extends Chart {
  constructor(scope: Construct, id: string, props: LoadBalancerChartProps) {
    const { cluster, settings } = props;
    super(scope, id, clusterChartProps(cluster));
    const tier = TIERS[props.tier];
    tier.services(cluster).forEach(({ nodeInterfaceId, image, ports }, index) => {
      const name = serviceObjectName(tier.prefix, cluster.name, index);
      // Each published port is a listener of the same name and number.
      const config = haproxyConfig({
        title: `${name} (SIPCluster ${cluster.key}, interface ${nodeInterfaceId})`,
        listeners: ports,
        servers: servedHosts(cluster, nodeInterfaceId, { role: tier.role }),
        check: tier.check,
      });
      serviceWorkload(this, {
        name,
        app: "haproxy",
        cluster,
        annotations: waveAnnotations(SYNC_WAVES.services),
        configData: { "haproxy.cfg": config },
        // Two replicas, preferably on different nodes: the tenant's API and ingress survive a node
        // drain of the cluster hosting them.
        replicas: 2,
        podSpec: (selector) => haproxyPod(image ?? settings.images.haproxy, name, selector, ports),
        ports,
      });
    });
  }
}

function haproxyPod(
  image: ImageReference,
  configMap: string,
  selector: Record<string, string>,
  ports: readonly PublishedPort[],
): k8s.PodSpec {
  const health: k8s.HttpGetAction = {
    path: HAPROXY_HEALTH_PATH,
    port: k8s.IntOrString.fromString("health"),
  };
  return {
    automountServiceAccountToken: false,
    // HAProxy needs no account; the official 2.3 image would otherwise run as root.
    securityContext: nobodyPodSecurityContext(),
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              labelSelector: { matchLabels: selector },
              topologyKey: "kubernetes.io/hostname",
            },
          },
        ],
      },
    },
    containers: [
      {
        name: "haproxy",
        image,
        // The ports are above 1023 and the config writes no files: no capability, no writable path.
        securityContext: unprivilegedContainerSecurityContext(),
        ports: [
          { name: "health", containerPort: HAPROXY_HEALTH_PORT },
          ...ports.map((published) => ({ name: published.name, containerPort: published.port })),
        ],
        // HAProxy's own monitor endpoint: ready as soon as it listens, whatever the backends' state,
        // so a tenant cluster that is not up yet does not make the load balancer look broken.
        readinessProbe: { httpGet: health, periodSeconds: 5 },
        livenessProbe: { httpGet: health, periodSeconds: 10, failureThreshold: 3 },
        // No CPU limit: throttling a proxy stalls every connection through it.
        resources: {
          requests: { cpu: k8s.Quantity.fromString("50m"), memory: k8s.Quantity.fromString("64Mi") },
          limits: { memory: k8s.Quantity.fromString("512Mi") },
        },
        volumeMounts: [{ name: "config", mountPath: HAPROXY_CONFIG_DIR, readOnly: true }],
      },
    ],
    volumes: [{ name: "config", configMap: { name: configMap } }],
  };
}
